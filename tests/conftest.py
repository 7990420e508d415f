"""What the unit tests share: a broker on the test's own clock (no server, no sockets), requests run
through their handler or through the sans-IO connection as a client sends them, and replies decoded
as a client reads them.

- ``new_broker(now_ms, topics=..., **settings)``: a ``Broker`` of ``BrokerConfig(**settings)``.
- the ``broker`` fixture: ``new_broker()``, or what a ``@pytest.mark.broker(...)`` on the test or its
  module (``pytestmark``) asks for, e.g. ``pytest.mark.broker(T0, topics={"t": 2}, nodes=3)``.
- ``call``: one request through its handler (``broker.context``), at a version the API accepts.
- ``WireClient`` (the ``client`` fixture) and ``wire_call``: requests as bytes through a connection.
"""
from __future__ import annotations

import struct

import pytest

from kafkaemu.broker import Broker
from kafkaemu.broker.context import DEFERRED, NO_RESPONSE
from kafkaemu.config import BrokerConfig
from kafkaemu.handlers import REGISTRY
from kafkaemu.protocol import envelope
from kafkaemu.protocol.api_keys import ApiKey
from kafkaemu.protocol.catalog import catalog
from kafkaemu.wire.connection import Connection, ProtocolViolation
from kafkaemu.wire.framing import FrameDecoder

T0 = 1_700_000_000_000   # a realistic clock (ms since the epoch) for tests of timestamps


def pytest_configure(config):
    config.addinivalue_line("markers", "broker(now_ms=0, topics=None, **settings): the settings of the test's "
                                       "`broker` fixture (tests/conftest.py new_broker)")


def new_broker(now_ms: int = 0, *, topics: dict[str, int] | None = None, **settings) -> Broker:
    """A broker of ``BrokerConfig(**settings)`` (Kafka's names through ``extra={...}``) whose clock
    reads ``now_ms``, with ``topics`` ({name: partitions}) created."""
    broker = Broker(BrokerConfig(**settings), now_ms)
    for name, partitions in (topics or {}).items():
        broker.topics.create(name, partitions, {})
    return broker


@pytest.fixture
def broker(request) -> Broker:
    marker = request.node.get_closest_marker("broker")
    return new_broker(*marker.args, **marker.kwargs) if marker else new_broker()


def call(broker: Broker, api_key: ApiKey, version: int, body: dict, **context):
    """Run one request through its handler as a client sends it (``body`` encoded, then decoded at
    ``version``) and return its one reply, encoded and decoded at ``version`` as a client reads it:
    the one answered at once, or given through ``respond`` by a request parked and answered within
    the call. ``context``: ``broker.context``'s (``node_id``, ``now_ms``, ``client_id``, ...). A version
    the API does not accept raises ProtocolViolation, as the connection closes before any handler."""
    api = REGISTRY.get(api_key)
    if not api.supports(version):
        raise ProtocolViolation(f"unsupported api key {int(api_key)} version {version}")
    cat = catalog()
    request = cat.request(api_key, version)
    replies: list = []
    ctx = broker.context(api_key, version, respond=replies.append, **context)
    result = api.func(ctx, request.decode(request.encode(body)))
    if result is not DEFERRED and result is not NO_RESPONSE:
        replies.append(result)
    [reply] = replies
    response = cat.response(api_key, version)
    return response.decode(response.encode(reply))


class WireClient:
    """One connection to ``broker`` through the sans-IO ``Connection``: requests go in as bytes, the
    bytes that come out are read as a client would."""

    def __init__(self, broker: Broker, client_id: str = "t", **connection) -> None:
        self.broker = broker
        self.client_id = client_id
        self.conn = Connection(broker, REGISTRY, 1, "127.0.0.1", **connection)
        self.correlation_id = 0

    def call(self, api_key: ApiKey, version: int, body: dict, now: int | None = None, client_id: str | None = None):
        """The decoded reply (None when the request gets none, as acks=0 produce), at ``now`` (default:
        the broker's clock)."""
        self.correlation_id += 1
        frame = envelope.encode_request(api_key, version, body, self.correlation_id, client_id or self.client_id)
        self.conn.receive(frame, self.broker.now_ms if now is None else now)
        replies = FrameDecoder(1 << 30).feed(self.conn.take_output())
        if not replies:
            return None
        (reply,) = replies
        assert struct.unpack_from(">i", reply)[0] == self.correlation_id
        return envelope.decode_response(api_key, version, reply)[1]


@pytest.fixture
def client(broker: Broker) -> WireClient:
    return WireClient(broker)


def wire_call(broker: Broker, api_key: ApiKey, version: int, body: dict, now_ms: int | None = None):
    """One request on a new connection (``WireClient.call``), which must stay open."""
    client = WireClient(broker)
    reply = client.call(api_key, version, body, now=now_ms)
    assert not client.conn.closed
    return reply
