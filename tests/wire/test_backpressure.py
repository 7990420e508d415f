"""Backpressure on the sans-IO connection: a peer that pipelines requests and does not read its
replies cannot make the broker buffer without bound, and once it reads, every reply comes, in
order."""
import struct

from kafkaemu.handlers import REGISTRY
from kafkaemu.broker.context import DEFERRED
from kafkaemu.handlers.registry import ApiRegistry
from kafkaemu.protocol.api_keys import ApiKey
from kafkaemu.storage.record_batch import build_batch
from kafkaemu.testing.raw_client import api_versions_frame, encode_request
from kafkaemu.wire.connection import MAX_IN_FLIGHT, MAX_UNSENT_REPLY_BYTES, Connection
from kafkaemu.wire.framing import FrameDecoder
from tests.conftest import T0, new_broker

PIPELINED = 2000


def _broker_with_data(record_bytes=20_000):
    broker = new_broker(T0)
    topic = broker.topics.create("bp", 1, {})
    topic.partitions[0].append(build_batch([(None, b"x" * record_bytes, [], T0)]), T0)
    return broker, topic


def _fetch(topic, correlation_id, max_wait_ms=0, offset=0):
    return encode_request(ApiKey.FETCH, 13, {
        "max_wait_ms": max_wait_ms, "min_bytes": 1, "max_bytes": 1 << 20, "isolation_level": 0, "session_id": 0,
        "session_epoch": -1, "forgotten_topics_data": [], "rack_id": "", "replica_id": -1,
        "topics": [{"topic_id": topic.topic_id, "partitions": [
            {"partition": 0, "fetch_offset": offset, "partition_max_bytes": 1 << 20}]}]}, correlation_id)


def _correlation_ids(data):
    return [struct.unpack_from(">i", f)[0] for f in FrameDecoder(1 << 30).feed(data)]


def test_unread_pipelined_fetches_stop_being_handled_once_replies_pile_up():
    broker, topic = _broker_with_data()
    conn = Connection(broker, REGISTRY, 1, "127.0.0.1")
    requests = b"".join(_fetch(topic, i) for i in range(PIPELINED))
    conn.receive(requests, T0)
    # the peer has read nothing: the connection answered only until its unsent replies passed the bound
    assert conn.blocked and not conn.wants_input
    assert conn.buffered_bytes < MAX_UNSENT_REPLY_BYTES + 100_000 + len(requests)
    first = conn.take_output()
    assert 0 < len(first) < MAX_UNSENT_REPLY_BYTES + 100_000  # one reply over the bound at most
    answered = _correlation_ids(first)
    assert answered == list(range(len(answered))) and len(answered) < PIPELINED
    # the peer reads: the server takes the output and lets the connection go on, until all is answered
    while conn.has_queued_input:
        conn.process(T0)
        out = conn.take_output()
        assert len(out) < MAX_UNSENT_REPLY_BYTES + 100_000
        answered += _correlation_ids(out)
    assert answered == list(range(PIPELINED))
    assert conn.wants_input and conn.buffered_bytes == 0


def test_replies_held_behind_a_parked_one_count_against_the_bound():
    broker, topic = _broker_with_data()
    conn = Connection(broker, REGISTRY, 1, "127.0.0.1")
    # a long poll past the end parks; the fetches behind it complete but cannot be sent before it
    requests = _fetch(topic, 0, max_wait_ms=30_000, offset=1) + b"".join(_fetch(topic, i) for i in range(1, PIPELINED))
    conn.receive(requests, T0)
    assert conn.take_output() == b""
    assert conn.blocked and conn.has_queued_input
    assert conn.buffered_bytes < MAX_UNSENT_REPLY_BYTES + 100_000 + len(requests)
    broker.tick(T0 + 30_000)  # the long poll ends; everything behind it goes out in order
    answered = _correlation_ids(conn.take_output())
    while conn.has_queued_input:
        conn.process(T0 + 30_000)
        answered += _correlation_ids(conn.take_output())
    assert answered == list(range(PIPELINED))


def test_at_most_max_in_flight_requests_wait_for_their_replies():
    parked = []
    registry = ApiRegistry()

    @registry.register(ApiKey.API_VERSIONS, 0, 4)
    def parking_api_versions(ctx, req):
        parked.append(ctx.respond)
        return DEFERRED

    conn = Connection(new_broker(T0), registry, 1, "127.0.0.1")
    conn.receive(b"".join(api_versions_frame(correlation_id=i) for i in range(3 * MAX_IN_FLIGHT)), T0)
    assert len(parked) == conn.pending_replies == MAX_IN_FLIGHT
    assert not conn.wants_input
    for respond in list(parked):
        respond({"error_code": 0, "api_keys": []})
    assert _correlation_ids(conn.take_output()) == list(range(MAX_IN_FLIGHT))
    conn.process(T0)
    assert len(parked) == 2 * MAX_IN_FLIGHT


def test_paused_output_blocks_handling_until_resumed():
    conn = Connection(new_broker(T0), REGISTRY, 1, "127.0.0.1")
    conn.pause_output()  # the transport's write buffer is full
    conn.receive(b"".join(api_versions_frame(correlation_id=i) for i in range(5)), T0)
    assert conn.take_output() == b"" and not conn.wants_input and conn.has_queued_input
    conn.resume_output()
    conn.process(T0)
    assert _correlation_ids(conn.take_output()) == [0, 1, 2, 3, 4]
    assert not conn.has_queued_input and conn.wants_input


def test_no_input_is_wanted_while_received_requests_wait():
    conn = Connection(new_broker(T0), REGISTRY, 1, "127.0.0.1")
    conn.pause_output()
    conn.receive(api_versions_frame(correlation_id=1), T0)
    conn.resume_output()  # unblocked, but the queued request is not handled yet
    assert not conn.blocked and conn.has_queued_input and not conn.wants_input
    conn.process(T0)
    assert conn.wants_input and _correlation_ids(conn.take_output()) == [1]
