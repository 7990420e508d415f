"""The broker: its state, start, clock, tick and close. Pure: time arrives as ``now_ms``.

It owns what its rooms share: the log store, placement over the emulated nodes, the coordinators
(``coordinators.py`` builds them), topic administration (``topics.py``), the transaction data
path and test hooks (``transactions.py``), request dispatch with interception (``dispatch.py``,
``intercept.py``). Handlers see none of it but what their ``RequestContext`` carries (``context.py``).
"""
from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING, Callable

from ..logging import get_logger
from ..auth.setup import new_authorizer, new_credentials, new_tokens
from ..config import BrokerConfig
from ..core.features import KRAFT_VERSION, FinalizedFeatures, parse_levels
from ..core.quotas.entities import ClientQuotas
from ..core.timers import Timers
from ..storage import client_metrics_file, client_quotas_file, transaction_state_topic
from ..storage.share_state_topic import SHARE_STATE_TOPIC
from ..telemetry.manager import ClientMetricsManager
from ..storage.dynamic_broker_configs import DynamicBrokerConfigs
from ..storage.log_store import OFFSETS_TOPIC, LogStore
from ..storage.offsets_topic import prepare_offsets_topic
from . import dispatch
from .context import ANONYMOUS, BuiltOnFirstUse, RequestContext, built, services_for
from .coordinators import (build_group_configs, build_group_coordinator, build_share_partitions,
                           build_transaction_coordinator, continue_producer_ids, holds_records)
from .intercept import Faults, RequestInterceptor
from .placement import Placement
from .topics import TopicAdmin
from .transactions import TransactionDataPath, TransactionHooks

if TYPE_CHECKING:
    from ..core.coordinator import GroupCoordinator
    from ..core.group_configs import GroupConfigs
    from ..core.quorum import MetadataQuorum
    from ..core.share.partitions import SharePartitionManager
    from ..core.transactions.coordinator import TransactionCoordinator
    from .quotas import QuotaEnforcer

log = get_logger("kafkaemu.broker")


class Broker:
    handle_request = dispatch.handle_request   # (conn, api, header, body, respond, now_ms): every request

    def __init__(self, config: BrokerConfig, now_ms: int) -> None:
        self.config = config
        self.node_id = config.node_id
        self.cluster_id = config.cluster_id
        self.store = store = LogStore(config.log_retention_check_interval_ms, config.log_cleaner_backoff_ms,
                                      config.max_uncompressed_batch_bytes, config.topic_defaults)
        if config.data_dir:
            from ..storage.data_dir import DataDir   # segments, recovery, checkpoints: with a data dir only
            DataDir(config.data_dir, config.data_dir_tail_cache_bytes).attach(store)  # loads what a previous run stored
        store.tick(now_ms)  # starts the retention schedule
        self.now_ms = now_ms
        node_ids = list(range(config.node_id, config.node_id + max(1, config.nodes)))
        self.placement = Placement(node_ids, {n: (config.advertised, config.port + i if config.port else 0)
                                              for i, n in enumerate(node_ids)}, store)
        # the broker's RequestContext subclass: its class attributes are what handlers may use
        self.services = services = services_for(store, self.placement, config)
        services.topics = self.topics = TopicAdmin(services, self._clock)
        services.txn_path = self.txn_path = TransactionDataPath(services, self._clock)
        services.broker_configs = self.broker_configs = DynamicBrokerConfigs(node_ids, store.topic_defaults)
        self.txn_hooks = TransactionHooks(services, self._clock)
        # security: the authorizer (None while authorization is off), SASL users, delegation tokens
        services.authorizer = self.authorizer = new_authorizer(config)
        self._security_clock: Callable[[], int] | None = None   # token expiry's clock (use_security_clock)
        BuiltOnFirstUse(services, "credentials", self._build_credentials)
        BuiltOnFirstUse(services, "tokens", lambda: services.credentials.tokens)
        # transaction.version starts at its own setting unless --feature names it
        levels = {"transaction.version": config.transactions.transaction_version,
                  **parse_levels(config.finalized_features)}
        services.features = self.features = FinalizedFeatures(levels, config.node_id)
        BuiltOnFirstUse(services, "quorum", lambda: self._new_quorum(config))   # the raft APIs, the control API
        self.faults = Faults()
        self.timers = Timers()  # broker-level timers (delayed fault replies, idle connections, throttles)
        self._init_quotas(config)
        self._init_telemetry(config)
        # __consumer_offsets and __transaction_state exist from the start as internal topics, so no
        # lookup can create them as ordinary topics; groups and transactional ids are placed by the
        # partition counts they have (as Kafka, after a setting change too). With a data directory
        # their records are replayed (completing transactions caught mid-commit).
        prepare_offsets_topic(store, config.offsets.topic_num_partitions, f"data directory {config.data_dir}")
        transaction_state_topic.prepare_transaction_state_topic(store, config.transactions.state_log_num_partitions)
        self.placement.offsets_partitions = len(store.get(OFFSETS_TOPIC).partitions)
        self.placement.txn_partitions = len(store.get(transaction_state_topic.TRANSACTION_STATE_TOPIC).partitions)
        self._init_coordinators(config, now_ms)
        self.interceptor = RequestInterceptor(self)  # faults, request log, API version caps

    def _clock(self) -> int:
        return self.now_ms

    def _new_quorum(self, config: BrokerConfig) -> MetadataQuorum:
        """The metadata quorum: the first node its one voter; a node observes (fetches the metadata
        log) while it runs, with its own directory id."""
        from ..core.quorum import MetadataQuorum, directory_id
        placement = self.placement

        def observer(node_id: int, directory: bytes) -> bool:
            return node_id in placement.listeners and node_id not in placement.stopped_nodes \
                and directory == directory_id(config.cluster_id, node_id)
        return MetadataQuorum(config.cluster_id, config.node_id, lambda: self.features.level(KRAFT_VERSION),
                              observer, placement.node_at)

    def _init_coordinators(self, config: BrokerConfig, now_ms: int) -> None:
        """The group and transaction coordinators and the share data plane are built when first used
        (``ctx.groups``, ``ctx.txns``, ``ctx.shares``, ``broker.coordinator``): a start that serves
        none imports none. A data
        directory whose internal topics hold their records has them loaded now, before any request
        (their timers run and transactions caught mid-commit complete from the start)."""
        load = bool(config.data_dir)
        self._group_watchers: list[Callable[[GroupCoordinator], None]] = []

        # the group coordinator's write runtime once it is built: a connection lets the offset
        # commits of one read linger in it (``wire/connection.py``)
        self.group_runtime = None

        def build_groups() -> GroupCoordinator:
            coordinator = self.new_coordinator(self.now_ms, load)
            self.group_runtime = coordinator.runtime
            for watch in self._group_watchers:
                watch(coordinator)
            self._group_watchers.clear()
            return coordinator
        BuiltOnFirstUse(self.services, "group_configs", self.new_group_configs)
        BuiltOnFirstUse(self.services, "shares", lambda: self.new_share_partitions(self.now_ms, load))
        BuiltOnFirstUse(self.services, "groups", build_groups)
        BuiltOnFirstUse(self.services, "txns", lambda: self.new_transaction_coordinator(self.now_ms, load))
        if config.transactions.partition_verification_enable:
            self.txn_path.partition_verifier = self.txn_path.verify_partition
        if load:
            continue_producer_ids(self.store)   # idempotent producers' ids too, coordinator or not
            if holds_records(self.store, SHARE_STATE_TOPIC):
                getattr(self.services, "shares")   # reading it builds (and loads) it
            if holds_records(self.store, OFFSETS_TOPIC):
                getattr(self.services, "groups")
            if holds_records(self.store, transaction_state_topic.TRANSACTION_STATE_TOPIC):
                getattr(self.services, "txns")

    def watch_group_coordinator(self, watch: Callable[[GroupCoordinator], None]) -> None:
        """``watch(coordinator)`` once the group coordinator exists (now, if it does), without building it."""
        coordinator = built(self.services, "groups")
        if coordinator is None:
            self._group_watchers.append(watch)
        else:
            watch(coordinator)

    def _build_credentials(self):
        """The SASL users (with the delegation tokens OAUTHBEARER and SCRAM token logins read), on
        first use: a listener with SASL, a SCRAM or token request, the control API."""
        credentials = new_credentials(self.config)
        credentials.tokens = new_tokens(self.config, self._clock)
        if self._security_clock is not None:
            credentials.now_ms = credentials.tokens.now_ms = self._security_clock
        return credentials

    def use_security_clock(self, now_ms: Callable[[], int]) -> None:
        """Token expiry (OAUTHBEARER, delegation tokens) follows ``now_ms`` (the server's clock)."""
        self._security_clock = now_ms
        if (credentials := built(self.services, "credentials")) is not None:
            credentials.now_ms = credentials.tokens.now_ms = now_ms

    @property
    def credentials(self):
        return self.services.credentials

    @property
    def quorum(self) -> MetadataQuorum:
        return self.services.quorum

    @property
    def tokens(self):
        return self.services.tokens

    def _init_telemetry(self, config: BrokerConfig) -> None:
        """KIP-714: CLIENT_METRICS subscriptions (kept in the data directory) and what clients push."""
        metrics = ClientMetricsManager(config.telemetry_max_bytes)
        if config.data_dir:
            metrics.load(client_metrics_file.load(config.data_dir))
            metrics.on_change = lambda subscriptions: client_metrics_file.save(config.data_dir, subscriptions)
        self.services.client_metrics = self.client_metrics = metrics

    def _init_quotas(self, config: BrokerConfig) -> None:
        """Client quotas (AlterClientQuotas, kept in the data directory) and their enforcement.
        ``quota_entries`` is the quotas' own dict: empty (false) while no quota is set."""
        quotas = ClientQuotas(client_quotas_file.load(config.data_dir) if config.data_dir else None)

        def changed(entries: dict) -> None:
            self.quota_entries = entries
            if config.data_dir:
                client_quotas_file.save(config.data_dir, entries)
        quotas.on_change = changed
        self.services.quotas = self.quotas = quotas
        self.quota_entries = quotas.entries

    @cached_property
    def quota_enforcer(self) -> QuotaEnforcer:
        """The quotas' enforcement (``quotas.py``, the rates of ``core/quotas/manager.py``), built by
        the first request a quota applies to (``dispatch.py``) or a control call reading its rates."""
        from ..core.quotas.manager import ClientQuotaManagers
        from .quotas import QuotaEnforcer
        config = self.config
        managers = ClientQuotaManagers(self.quotas, config.quota_window_num, config.quota_window_size_seconds)
        return QuotaEnforcer(managers, self.timers, self._clock)

    # -- the coordinators (replaced by snapshot restores and control resets) ----------------
    @property
    def coordinator(self) -> GroupCoordinator:
        return self.services.groups

    @coordinator.setter
    def coordinator(self, coordinator: GroupCoordinator) -> None:
        old = built(self.services, "groups")
        if old is not None:   # its lingering commits are written (and answered) first
            old.runtime.flush()
        self.services.groups = coordinator
        self.group_runtime = coordinator.runtime

    @property
    def txn_coordinator(self) -> TransactionCoordinator:
        return self.services.txns

    @txn_coordinator.setter
    def txn_coordinator(self, coordinator: TransactionCoordinator) -> None:
        self.services.txns = coordinator

    @property
    def shares(self) -> SharePartitionManager:
        return self.services.shares

    @shares.setter
    def shares(self, shares: SharePartitionManager) -> None:
        self.services.shares = shares

    def new_coordinator(self, now_ms: int, load: bool = True) -> GroupCoordinator:
        """A group coordinator writing to __consumer_offsets, telling the share data plane
        (``ctx.shares``) of its share groups; ``load``: with the groups and offsets its records hold
        (a previous run's, or a restored snapshot's)."""
        return build_group_coordinator(self.config, self.store, self.placement, now_ms, load, self.services.shares,
                                       self.services.group_configs, self.authorizer)

    def new_share_partitions(self, now_ms: int, load: bool = True) -> SharePartitionManager:
        """The share data plane; ``load``: with the share partitions __share_group_state holds."""
        return build_share_partitions(self.config, self.store, now_ms, load, self.services.group_configs)

    def new_group_configs(self) -> GroupConfigs:
        """The groups' configs (the data dir's, with one), shared by the group coordinator and the
        share data plane (``ctx.group_configs``)."""
        return build_group_configs(self.config)

    @property
    def group_configs(self) -> GroupConfigs:
        return self.services.group_configs

    @group_configs.setter
    def group_configs(self, configs: GroupConfigs) -> None:
        self.services.group_configs = configs

    def new_transaction_coordinator(self, now_ms: int, load: bool = True) -> TransactionCoordinator:
        """A transaction coordinator writing to __transaction_state; ``load``: with the transactions
        its records hold (a previous run's, or a restored snapshot's)."""
        return build_transaction_coordinator(self.config, self.store, self.placement, self.txn_path.write_markers,
                                             now_ms, load, lambda: self.features.level("transaction.version"))

    # -- requests --------------------------------------------------------------------------
    def context(self, api_key: int, api_version: int, *, node_id: int | None = None, now_ms: int | None = None,
                respond=None, client_id: str | None = "client", client_host: str = "127.0.0.1",
                connection_id: int = 1, correlation_id: int = 1, principal: str = ANONYMOUS) -> RequestContext:
        """A context for calling a handler directly (tests, benchmarks): on the first node, at the
        broker's clock, replies dropped unless ``respond`` is given."""
        ctx = self.services(api_key, api_version, correlation_id, client_id, client_host, connection_id,
                            self.node_id if node_id is None else node_id, self.now_ms if now_ms is None else now_ms,
                            principal=principal)
        if respond is not None:
            ctx.respond = respond
        return ctx

    def connection_closed(self, connection_id: int) -> None:
        """A client connection dropped (``wire.Connection.close``): the share session it opened goes
        and its member's records are released now, as Kafka's socket server tells its
        ConnectionDisconnectListener. Nothing to do while no share data plane has been built."""
        shares = built(self.services, "shares")
        if shares is None:
            return
        try:
            shares.connection_closed(self.now_ms, connection_id)
        except Exception:   # a close comes from the transport: never let it fail the loop
            log.exception("share_session_disconnect_failed", conn=connection_id)

    def use_real_time_for_fetch_waits(self, call_later) -> None:
        """Under a manual clock, clients still time their long polls in real time: ``call_later(s, fn)``
        (the IO layer's timer) ends each parked Fetch after its max_wait_ms of real time, or it
        would hold back its connection until the test advanced the clock."""
        fetches = self.store.fetches
        fetches.on_park = lambda waiter, ms: call_later(ms / 1000, fetches.complete, waiter)

    # -- time ----------------------------------------------------------------------------
    def close(self) -> None:
        """A clean shutdown of the data directory (if any); the broker serves no more requests."""
        if self.store.persistence is not None:
            self.store.persistence.close()
            self.store.persistence = None

    def tick(self, now_ms: int) -> None:
        """Fire every timer due at ``now_ms`` (session expiry, long-poll timeouts, ...)."""
        self.now_ms = now_ms
        # one subsystem's failure is logged and does not stop the others' timers; a coordinator not
        # built yet has no timers
        groups, txns, shares = (built(self.services, name) for name in ("groups", "txns", "shares"))
        for subsystem, tick in (("storage", self.store.tick), ("groups", groups and groups.tick),
                                ("shares", shares and shares.tick), ("transactions", txns and txns.tick),
                                ("broker", self.timers.poll)):
            if tick is None:
                continue
            try:
                tick(now_ms)
            except Exception:
                log.exception("tick_failed", subsystem=subsystem)

    def next_deadline_ms(self) -> int | None:
        """The earliest time ``tick`` has work to do, or None."""
        groups, txns, shares = (built(self.services, name) for name in ("groups", "txns", "shares"))
        deadlines = [d for d in (self.store.next_deadline_ms(), groups and groups.next_deadline_ms(),
                                 shares and shares.next_deadline_ms(), txns and txns.next_deadline_ms(),
                                 self.timers.next_deadline())
                     if d is not None]
        return min(deadlines, default=None)

