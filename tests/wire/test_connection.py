"""The sans-IO connection: header quirks, dispatch, ordering, and closing on bad input."""
import struct

import pytest

from kafkaemu.broker import Broker
from kafkaemu.config import BrokerConfig
from kafkaemu.handlers import REGISTRY
from kafkaemu.broker.context import DEFERRED, NO_RESPONSE
from kafkaemu.handlers.registry import ApiRegistry
from kafkaemu.protocol.api_keys import ApiKey
from kafkaemu.protocol.catalog import catalog
from kafkaemu.protocol.errors import ErrorCode
from kafkaemu.wire.connection import Connection, ProtocolViolation
from kafkaemu.testing.raw_client import encode_request as request
from kafkaemu.wire.framing import FrameDecoder, frame
from tests.conftest import new_broker


def open_connection(registry=REGISTRY, max_bytes=None):
    config = BrokerConfig()
    if max_bytes:
        config.socket_request_max_bytes = max_bytes
    return Connection(Broker(config, 0), registry, 1, "127.0.0.1")


def replies(conn):
    return FrameDecoder(1 << 30).feed(conn.take_output())


def test_api_versions_v3_answers_with_a_v0_response_header():
    conn = open_connection()
    conn.receive(request(ApiKey.API_VERSIONS, 3,
                         {"client_software_name": "kafkaemu-test", "client_software_version": "1.0"}), 0)
    (reply,) = replies(conn)
    assert struct.unpack(">i", reply[:4])[0] == 1
    body = catalog().response(ApiKey.API_VERSIONS, 3).decode(reply[4:])  # no tagged-field byte after the correlation id
    assert body.error_code == ErrorCode.NONE
    advertised = {k.api_key: (k.min_version, k.max_version) for k in body.api_keys}
    # as Kafka 4.4 without a telemetry reporter: the registry less 71/72, Produce from v0 (api_versions.py)
    expected = {k: (0 if k == ApiKey.PRODUCE else lo, hi) for k, lo, hi in REGISTRY.versions()
                if k not in (ApiKey.GET_TELEMETRY_SUBSCRIPTIONS, ApiKey.PUSH_TELEMETRY)}
    assert advertised == expected
    assert advertised[18] == (0, 5) and advertised[3] == (0, 13) and advertised[0] == (0, 13)


def test_api_versions_v3_with_invalid_software_name_gets_invalid_request():
    conn = open_connection()
    conn.receive(request(ApiKey.API_VERSIONS, 3,
                         {"client_software_name": "-bad name", "client_software_version": "1"}), 0)
    (reply,) = replies(conn)
    assert catalog().response(ApiKey.API_VERSIONS, 3).decode(reply[4:]).error_code == ErrorCode.INVALID_REQUEST


def test_api_versions_above_the_max_is_answered_in_v0_with_unsupported_version():
    conn = open_connection()
    raw_header = struct.pack(">hhih", 18, 99, 42, 3) + b"cli" + b"\x00"
    conn.receive(frame(raw_header, b"\x00whatever-future-body"), 0)
    (reply,) = replies(conn)
    assert struct.unpack(">i", reply[:4])[0] == 42
    body = catalog().response(ApiKey.API_VERSIONS, 0).decode(reply[4:])
    assert body.error_code == ErrorCode.UNSUPPORTED_VERSION
    assert [(k.api_key, k.min_version, k.max_version) for k in body.api_keys] == [(ApiKey.API_VERSIONS, 0, 5)]


def test_flexible_response_carries_a_header_tagged_field_section():
    conn = open_connection()
    conn.receive(request(ApiKey.METADATA, 12, {"topics": []}), 0)
    (reply,) = replies(conn)
    assert reply[4] == 0  # empty tagged fields of response header v1
    assert catalog().response(ApiKey.METADATA, 12).decode(reply[5:]).topics == []


@pytest.mark.parametrize("bad", [
    struct.pack(">hhi", 18, 0, 1),                       # header cut before client id
    struct.pack(">hhih", 3, 1, 1, -1) + b"\x00\x00",      # metadata body truncated
    struct.pack(">hhih", 9999, 0, 1, -1),                 # unknown api key
    struct.pack(">hhih", 3, 99, 1, -1),                   # unsupported version
    b"\x00\x03",                                         # shorter than any header
])
def test_undecodable_or_unsupported_requests_close_the_connection(bad):
    conn = open_connection()
    with pytest.raises(ProtocolViolation):
        conn.receive(frame(bad), 0)


def test_oversized_frame_closes_the_connection():
    conn = open_connection(max_bytes=64)
    with pytest.raises(ProtocolViolation, match="socket.request.max.bytes"):
        conn.receive(struct.pack(">i", 65), 0)


def test_replies_keep_request_order_when_an_earlier_one_is_parked():
    parked = []
    registry = ApiRegistry()
    registry.register(ApiKey.API_VERSIONS, 0, 4)(lambda ctx, req: {"error_code": 0, "api_keys": []})

    @registry.register(ApiKey.HEARTBEAT, 0, 4)
    def parking_heartbeat(ctx, req):
        parked.append(ctx.respond)
        return DEFERRED

    @registry.register(ApiKey.PRODUCE, 0, 11)
    def silent_produce(ctx, req):
        return NO_RESPONSE

    conn = open_connection(registry)
    hb = {"group_id": "g", "generation_id": 1, "member_id": "m"}
    conn.receive(request(ApiKey.HEARTBEAT, 4, hb, correlation_id=1)
                 + request(ApiKey.PRODUCE, 9, {"acks": 0, "timeout_ms": 1, "topic_data": []}, correlation_id=2)
                 + request(ApiKey.API_VERSIONS, 0, {}, correlation_id=3), 0)
    assert conn.take_output() == b""  # the parked heartbeat holds back the later reply
    parked[0]({"error_code": ErrorCode.REBALANCE_IN_PROGRESS})
    first, second = replies(conn)
    assert struct.unpack(">i", first[:4])[0] == 1
    assert catalog().response(ApiKey.HEARTBEAT, 4).decode(first[5:]).error_code == ErrorCode.REBALANCE_IN_PROGRESS
    assert struct.unpack(">i", second[:4])[0] == 3  # acks=0 produce got no reply
    assert conn.pending_replies == 0


def test_a_failing_handler_closes_only_its_connection():
    registry = ApiRegistry()

    @registry.register(ApiKey.API_VERSIONS, 0, 4)
    def broken(ctx, req):
        raise RuntimeError("boom")

    with pytest.raises(ProtocolViolation, match="failed"):
        open_connection(registry).receive(request(ApiKey.API_VERSIONS, 0, {}), 0)


def test_a_parked_reply_that_cannot_be_encoded_closes_the_connection_without_raising():
    parked = []
    registry = ApiRegistry()

    @registry.register(ApiKey.HEARTBEAT, 0, 4)
    def parking_heartbeat(ctx, req):
        parked.append(ctx.respond)
        return DEFERRED

    closed = []
    conn = Connection(new_broker(), registry, 1, "127.0.0.1", on_close=lambda: closed.append(True))
    conn.receive(request(ApiKey.HEARTBEAT, 4, {"group_id": "g", "generation_id": 1, "member_id": "m"}), 0)
    parked[0]({"error_code": "not a number"})  # called from a timer in real life: must not raise
    assert conn.closed and closed == [True]
    assert conn.take_output() == b""
