"""What a handler is given: the facts of one request and the narrow services it may use. The only
part of ``kafkaemu.broker`` that ``kafkaemu/handlers/`` imports (``tests/core/test_layering.py``).

A ``RequestContext`` is built for every request, so it is kept small and quick to read: the
request's own facts are slots, and the services every request of a broker shares are class
attributes of a ``RequestContext`` subclass made for that broker (``services_for``). Building a
context sets only the request's facts; reading ``ctx.store`` is one class-attribute lookup (a
property over a shared object costs three times that); and a coordinator the control API replaces
is seen by every context at once, parked ones included.
"""
from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any, Callable

from ..protocol.api_keys import ApiKey
from ..protocol.constant_response import ConstantResponse  # noqa: F401  (handlers and the connection read it here)

if TYPE_CHECKING:
    from ..config import BrokerConfig
    from ..core.coordinator import GroupCoordinator
    from ..core.features import FinalizedFeatures
    from ..core.group_configs import GroupConfigs
    from ..core.quorum import MetadataQuorum
    from ..core.share.partitions import SharePartitionManager
    from ..core.transactions.coordinator import TransactionCoordinator
    from ..storage.dynamic_broker_configs import DynamicBrokerConfigs
    from ..storage.log_store import LogStore
    from .placement import Placement
    from .topics import TopicAdmin
    from .transactions import TransactionDataPath

DEFERRED = object()     # the handler keeps ctx.respond and calls it later (parked replies)
NO_RESPONSE = object()  # nothing is sent back (acks=0 produce)
ANONYMOUS = "User:ANONYMOUS"   # Kafka's principal for a connection that has not authenticated

Response = dict


def _drop(response: Response) -> None:
    pass


class RequestContext:
    """What a handler knows besides the request's body: the request (``api_key``, ``api_version``,
    ``correlation_id``, ``client_id``), its connection (``client_host``, ``connection_id``,
    ``principal``: ``User:<sasl user>`` or ``User:ANONYMOUS``), the node it reached (``node_id``),
    the broker's clock (``now_ms``), ``respond`` for a reply given later (the handler returns
    DEFERRED), and the broker's services (``store``, ``groups``, ``shares``: the share data plane,
    ``txns``, ``placement``, ``config``, ``cluster_id``, ``topics``, ``txn_path``, ``authorizer``:
    None while authorization is off, ``credentials``, ``tokens``, ``broker_configs``, ``features``:
    the finalized feature levels, e.g. ``ctx.features.level("transaction.version")``, ``quorum``: the
    metadata quorum's voters and leader, ``quotas``, ``client_metrics``).
    Built by a broker's subclass (``services_for``), never by this class itself."""

    __slots__ = ("api_key", "api_version", "correlation_id", "client_id", "client_host", "connection_id", "node_id",
                 "now_ms", "respond", "principal")

    def __init__(self, api_key: ApiKey | int, api_version: int, correlation_id: int, client_id: str | None,
                 client_host: str, connection_id: int, node_id: int, now_ms: int,
                 respond: Callable[[Response], None] = _drop, principal: str = ANONYMOUS) -> None:
        self.api_key = api_key
        self.api_version = api_version
        self.correlation_id = correlation_id
        self.client_id = client_id
        self.client_host = client_host
        self.connection_id = connection_id
        self.node_id = node_id
        self.now_ms = now_ms
        self.respond = respond
        self.principal = principal

    # the broker's services: class attributes of the broker's subclass (``services_for``)
    store: "LogStore" = None  # type: ignore[assignment]
    groups: "GroupCoordinator" = None  # type: ignore[assignment]
    shares: "SharePartitionManager" = None  # type: ignore[assignment]  # the share data plane (KIP-932)
    group_configs: "GroupConfigs" = None  # type: ignore[assignment]  # every group kind's configs
    txns: "TransactionCoordinator" = None  # type: ignore[assignment]
    placement: "Placement" = None  # type: ignore[assignment]
    config: "BrokerConfig" = None  # type: ignore[assignment]
    cluster_id: str = ""
    topics: "TopicAdmin" = None  # type: ignore[assignment]
    txn_path: "TransactionDataPath" = None  # type: ignore[assignment]
    authorizer = None   # None while authorization is off
    features: "FinalizedFeatures" = None  # type: ignore[assignment]  # the cluster's finalized feature levels
    quorum: "MetadataQuorum" = None  # type: ignore[assignment]  # the KRaft metadata quorum: voters, leader
    credentials = None  # the SASL users (CredentialStore): SCRAM credentials managed over the wire
    tokens = None       # delegation tokens (DelegationTokens)
    broker_configs: "DynamicBrokerConfigs" = None  # type: ignore[assignment]  # broker configs set at run time
    quotas = None       # client quotas (ClientQuotas): AlterClientQuotas, DescribeClientQuotas
    client_metrics = None  # KIP-714 telemetry (ClientMetricsManager): CLIENT_METRICS, pushed metrics
    metadata_answers: dict = None  # type: ignore[assignment]  # Metadata answers kept (handlers/metadata.py)

    def __repr__(self) -> str:
        return (f"RequestContext(api_key={self.api_key!r}, api_version={self.api_version}, "
                f"correlation_id={self.correlation_id}, client_id={self.client_id!r}, node_id={self.node_id}, "
                f"principal={self.principal!r})")


BrokerServices = type[RequestContext]
"""A broker's RequestContext subclass: its class attributes are the broker's services."""


class BuiltOnFirstUse:
    """A service made when first read (the group and transaction coordinators, the SASL users and
    delegation tokens, the metadata quorum: ``Broker.__init__``): the first
    ``ctx.<name>`` or ``services.<name>`` calls ``build()`` and puts what it returns on the services
    class in its place, so later reads are plain class-attribute lookups again. Setting the
    attribute (a snapshot restore's new coordinator) replaces it as well."""

    def __init__(self, services: BrokerServices, name: str, build: Callable[[], Any]) -> None:
        self.services, self.name, self.build = services, name, build
        self._lock = threading.Lock()   # an in-process emulator's loop and a test's thread may both read first
        setattr(services, name, self)

    def __get__(self, obj, cls=None):
        with self._lock:
            if vars(self.services).get(self.name) is self:
                setattr(self.services, self.name, self.build())
        return getattr(self.services, self.name)


def built(services: BrokerServices, name: str):
    """The service ``name`` if it exists, None while it waits for its first use (``BuiltOnFirstUse``)."""
    return None if isinstance(vars(services).get(name), BuiltOnFirstUse) else getattr(services, name)


Handler = Callable[[RequestContext, Any], Any]


def services_for(store: "LogStore", placement: "Placement", config: "BrokerConfig") -> BrokerServices:
    """The RequestContext subclass of one broker: calling it builds that broker's contexts, and its
    class attributes hold the services (the broker sets ``groups``, ``txns``, ``topics`` and
    ``txn_path`` on it as it builds them, and ``authorizer`` when authorization is on)."""
    return type("RequestContext", (RequestContext,), {
        "__slots__": (), "__module__": __name__, "store": store, "placement": placement, "config": config,
        "cluster_id": config.cluster_id, "metadata_answers": {}})
