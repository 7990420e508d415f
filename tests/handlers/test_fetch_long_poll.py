"""Fetch long polls through the sans-IO connection and the broker's tick: a parked fetch is
answered by an append that brings min_bytes, or by ``Broker.tick`` at its max_wait deadline;
nothing happens in between. No sockets, no sleeps: time is an argument."""
from kafkaemu.handlers import REGISTRY
from kafkaemu.protocol import envelope
from kafkaemu.protocol.api_keys import ApiKey
from kafkaemu.storage.record_batch import build_batch, iter_records
from kafkaemu.wire.connection import Connection
from kafkaemu.wire.framing import FrameDecoder
from tests.conftest import T0, new_broker



def _request(api_key, version, body, correlation_id):
    return envelope.encode_request(api_key, version, body, correlation_id, client_id="t")


def _fetch_body(topic_id, offset, max_wait_ms, min_bytes):
    return {"max_wait_ms": max_wait_ms, "min_bytes": min_bytes, "max_bytes": 1 << 20, "isolation_level": 0,
            "session_id": 0, "session_epoch": -1, "forgotten_topics_data": [], "rack_id": "",
            "topics": [{"topic_id": topic_id, "partitions": [{"partition": 0, "fetch_offset": offset,
                                                              "partition_max_bytes": 1 << 20}]}]}


def _decoded_fetch_replies(conn):
    out = []
    for reply in FrameDecoder(1 << 30).feed(conn.take_output()):
        out.append(envelope.decode_response(ApiKey.FETCH, 13, reply)[1])
    return out


def _setup():
    broker = new_broker(T0)
    topic = broker.topics.create("lp", 1, {})
    return broker, topic, Connection(broker, REGISTRY, 1, "127.0.0.1")


def test_parked_fetch_times_out_at_broker_tick():
    broker, topic, conn = _setup()
    conn.receive(_request(1, 13, _fetch_body(topic.topic_id, 0, 500, 1), 1), T0)
    assert conn.take_output() == b"" and conn.pending_replies == 1
    assert broker.next_deadline_ms() == T0 + 500
    broker.tick(T0 + 499)
    assert conn.take_output() == b""
    broker.tick(T0 + 500)
    (resp,) = _decoded_fetch_replies(conn)
    part = resp.responses[0].partitions[0]
    assert part.error_code == 0 and part.high_watermark == 0 and not part.records


def test_parked_fetch_is_completed_by_an_append_with_enough_bytes():
    broker, topic, conn = _setup()
    conn.receive(_request(1, 13, _fetch_body(topic.topic_id, 0, 30_000, 150), 1), T0)
    plog = topic.partitions[0]
    plog.append(build_batch([(b"k", b"small", [], T0)]), T0)
    assert conn.take_output() == b""  # fewer than min_bytes so far
    plog.append(build_batch([(b"k", b"x" * 200, [], T0)]), T0)
    (resp,) = _decoded_fetch_replies(conn)
    part = resp.responses[0].partitions[0]
    assert part.high_watermark == 2
    assert [r.offset for r in iter_records(part.records)] == [0]  # whole batches; the client reads on
    assert len(part.records) > 150 and not plog.waiters
    broker.tick(T0 + 30_000)  # the deadline passing later sends nothing more
    assert conn.take_output() == b""


def test_fetch_with_data_available_is_answered_at_once():
    broker, topic, conn = _setup()
    topic.partitions[0].append(build_batch([(None, b"v", [], T0)]), T0)
    conn.receive(_request(1, 13, _fetch_body(topic.topic_id, 0, 30_000, 1), 1), T0)
    (resp,) = _decoded_fetch_replies(conn)
    assert resp.responses[0].partitions[0].high_watermark == 1


def test_replies_keep_request_order_behind_a_parked_fetch():
    broker, topic, conn = _setup()
    conn.receive(_request(1, 13, _fetch_body(topic.topic_id, 0, 1000, 1), 1), T0)
    conn.receive(_request(1, 13, _fetch_body(topic.topic_id, 0, 0, 1), 2), T0)  # max_wait 0: answered now
    assert conn.take_output() == b""  # but it must wait for the first
    broker.tick(T0 + 1000)
    replies = FrameDecoder(1 << 30).feed(conn.take_output())
    assert [int.from_bytes(r[:4], "big") for r in replies] == [1, 2]
