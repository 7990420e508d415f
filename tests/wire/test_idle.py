"""connections.max.idle.ms on the sans-IO connection, driven by the broker's tick with a manual
clock: ten idle minutes pass in one call."""
import struct

from kafkaemu.handlers import REGISTRY
from kafkaemu.broker.context import DEFERRED
from kafkaemu.handlers.registry import ApiRegistry
from kafkaemu.protocol.api_keys import ApiKey
from kafkaemu.testing.raw_client import api_versions_frame
from kafkaemu.wire.connection import Connection
from kafkaemu.wire.framing import FrameDecoder
from tests.conftest import T0, new_broker

IDLE = 600_000  # Kafka's default connections.max.idle.ms


def _open(broker, registry=REGISTRY):
    closed = []
    conn = Connection(broker, registry, 1, "127.0.0.1", on_close=lambda: closed.append(True))
    return conn, closed


def test_a_connection_that_never_sends_is_closed_after_the_idle_time():
    broker = new_broker(T0)
    conn, closed = _open(broker)
    broker.tick(T0 + IDLE - 1)
    assert not conn.closed
    broker.tick(T0 + IDLE)
    assert conn.closed and closed == [True]


def test_each_request_restarts_the_idle_time():
    broker = new_broker(T0)
    conn, closed = _open(broker)
    broker.tick(T0 + IDLE // 2)
    conn.receive(api_versions_frame(correlation_id=1), T0 + IDLE // 2)
    assert conn.take_output()
    broker.tick(T0 + IDLE)
    assert not conn.closed
    broker.tick(T0 + IDLE // 2 + IDLE)
    assert conn.closed and closed == [True]


def test_a_request_waiting_on_the_broker_is_not_idle():
    parked = []
    registry = ApiRegistry()

    @registry.register(ApiKey.API_VERSIONS, 0, 4)
    def parking_api_versions(ctx, req):
        parked.append(ctx.respond)
        return DEFERRED

    broker = new_broker(T0)
    conn, _ = _open(broker, registry)
    conn.receive(api_versions_frame(correlation_id=1), T0)
    broker.tick(T0 + 3 * IDLE)  # a rebalance or a long poll may take longer than the idle time
    assert not conn.closed
    parked[0]({"error_code": 0, "api_keys": []})
    (reply,) = FrameDecoder(1 << 20).feed(conn.take_output())  # handed out at T0 + 3 * IDLE
    assert struct.unpack_from(">i", reply)[0] == 1
    broker.tick(T0 + 4 * IDLE - 1)
    assert not conn.closed
    broker.tick(T0 + 4 * IDLE)
    assert conn.closed


def test_the_idle_time_follows_the_config_and_negative_disables_it():
    broker = new_broker(T0, connections_max_idle_ms=1000)
    conn, _ = _open(broker)
    broker.tick(T0 + 1000)
    assert conn.closed
    broker = new_broker(T0, connections_max_idle_ms=-1)
    conn, _ = _open(broker)
    broker.tick(T0 + 100 * IDLE)
    assert not conn.closed and broker.next_deadline_ms() != T0 + IDLE


def test_a_closed_connection_leaves_no_idle_timer_behind():
    broker = new_broker(T0)
    conn, closed = _open(broker)
    conn.close()
    assert len(broker.timers) == 0
    broker.tick(T0 + IDLE)
    assert closed == []
