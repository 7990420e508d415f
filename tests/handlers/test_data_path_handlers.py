"""The data-path handlers through the sans-IO connection: ListOffsets (every special timestamp,
v0 legacy lists, after a batch whose max timestamp was -1), OffsetForLeaderEpoch, DeleteRecords,
InitProducerId, Produce auto-creation, internal topics and the inflation budget, Fetch limits
across partitions and fetch.max.bytes. No sockets: bytes in, bytes out."""
import pytest

from kafkaemu.protocol import envelope
from kafkaemu.protocol.api_keys import ApiKey
from kafkaemu.protocol.errors import ErrorCode
from kafkaemu.storage import compression
from kafkaemu.storage.record_batch import build_batch, parse_header
from kafkaemu.wire.connection import ProtocolViolation
from kafkaemu.wire.framing import FrameDecoder
from tests.conftest import T0, WireClient, new_broker

pytestmark = pytest.mark.broker(T0)


def _fill(broker, name="t", partitions=1):
    """Partition 0: offsets 0-4 at T0+0..4 (gzip), 5-9 at T0+100..104 (zstd)."""
    topic = broker.topics.create(name, partitions, {})
    plog = topic.partitions[0]
    plog.append(build_batch([(None, b"a", [], T0 + i) for i in range(5)], codec=compression.GZIP), T0)
    plog.append(build_batch([(None, b"b", [], T0 + 100 + i) for i in range(5)], codec=compression.ZSTD), T0)
    return topic


def _list(client, version, timestamp, name="t", partition=0, **extra):
    part = {"partition_index": partition, "current_leader_epoch": -1, "timestamp": timestamp, "max_num_offsets": 5}
    part.update(extra)
    resp = client.call(ApiKey.LIST_OFFSETS, version, {"replica_id": -1, "isolation_level": 0, "timeout_ms": 1000,
                                                      "topics": [{"name": name, "partitions": [part]}]})
    return resp.topics[0].partitions[0]


@pytest.mark.parametrize("timestamp,expected", [
    (-1, (-1, 10)), (-2, (-1, 0)), (-3, (T0 + 104, 9)), (-4, (-1, 0)), (-5, (-1, -1)),
    (T0 + 3, (T0 + 3, 3)), (T0 + 50, (T0 + 100, 5)), (T0 + 105, (-1, -1)),
])
def test_list_offsets_special_and_by_time(broker, client, timestamp, expected):
    _fill(broker)
    p = _list(client, 10, timestamp)
    assert p.error_code == 0 and (p.timestamp, p.offset) == expected


def test_list_offsets_after_delete_records_and_errors(broker, client):
    _fill(broker)
    broker.store.get("t").partitions[0].delete_records(7)
    assert _list(client, 7, -2).offset == 7
    assert _list(client, 7, T0).offset == 7
    assert _list(client, 7, 0, name="missing").error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    assert _list(client, 7, 0, partition=4).error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    assert _list(client, 7, -1, current_leader_epoch=1).error_code == ErrorCode.UNKNOWN_LEADER_EPOCH


@pytest.mark.parametrize(("api", "version"), [(ApiKey.LIST_OFFSETS, 0), (ApiKey.FETCH, 3), (ApiKey.PRODUCE, 2),
                                                (ApiKey.OFFSET_FOR_LEADER_EPOCH, 1), (ApiKey.CREATE_TOPICS, 1),
                                                (ApiKey.OFFSET_COMMIT, 1), (ApiKey.WRITE_TXN_MARKERS, 0)])
def test_versions_kafka_4_removed_close_the_connection(broker, client, api, version):
    """KIP-896: Kafka 4 parses no request below an API's oldest version (SocketServer closes the
    connection with UnsupportedVersionException); Produce v0-v2 too, although ApiVersions advertises v0."""
    with pytest.raises(ProtocolViolation, match=f"unsupported api key {int(api)} version {version}"):
        client.call(api, version, {})


def test_offset_for_leader_epoch(broker, client):
    _fill(broker)

    def ask(epoch, current=-1, version=4):
        resp = client.call(ApiKey.OFFSET_FOR_LEADER_EPOCH, version, {"replica_id": -1, "topics": [
            {"topic": "t", "partitions": [{"partition": 0, "current_leader_epoch": current, "leader_epoch": epoch}]}]})
        return resp.topics[0].partitions[0]

    p = ask(0)
    assert (p.error_code, p.leader_epoch, p.end_offset) == (0, 0, 10)
    assert (ask(3).leader_epoch, ask(3).end_offset) == (-1, -1)
    assert ask(0, current=2).error_code == ErrorCode.UNKNOWN_LEADER_EPOCH
    assert ask(0, version=2).end_offset == 10


def test_delete_records(broker, client):
    _fill(broker, partitions=2)
    resp = client.call(ApiKey.DELETE_RECORDS, 2, {"timeout_ms": 100, "topics": [{"name": "t", "partitions": [
        {"partition_index": 0, "offset": 6}, {"partition_index": 1, "offset": 1},
        {"partition_index": 9, "offset": 0}]}]})
    got = [(p.partition_index, p.error_code, p.low_watermark) for p in resp.topics[0].partitions]
    assert got == [(0, 0, 6), (1, ErrorCode.OFFSET_OUT_OF_RANGE, -1), (9, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, -1)]
    assert broker.store.get("t").partitions[0].log_start_offset == 6


def test_init_producer_id(client):
    def init(txn, timeout=60000, version=4):
        return client.call(ApiKey.INIT_PRODUCER_ID, version, {"transactional_id": txn, "producer_id": -1,
                                                              "transaction_timeout_ms": timeout, "producer_epoch": -1})
    a, b = init(None), init(None)
    assert a.error_code == 0 and a.producer_id != b.producer_id and a.producer_epoch == 0
    t1, t2 = init("tx"), init("tx")
    assert t1.producer_id == t2.producer_id and (t1.producer_epoch, t2.producer_epoch) == (0, 1)
    assert init("").error_code == ErrorCode.INVALID_REQUEST
    assert init("tx", timeout=900001).error_code == ErrorCode.INVALID_TRANSACTION_TIMEOUT


def _produce(client, name, records, version=9, client_id="t", partition=0):
    resp = client.call(ApiKey.PRODUCE, version, {"transactional_id": None, "acks": -1, "timeout_ms": 1000,
                                                 "topic_data": [{"name": name, "partition_data": [
                                        {"index": partition, "records": records}]}]}, client_id=client_id)
    return resp.responses[0].partition_responses[0]


def test_produce_auto_creates_only_when_enabled(broker, client):
    assert _produce(client, "fresh", build_batch([(None, b"v", [], T0)])).error_code == 0
    assert broker.store.get("fresh").partitions[0].high_watermark == 1
    broker.config.auto_create_topics = False
    assert _produce(client, "other", build_batch([(None, b"v", [], T0)])).error_code == \
        ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    # as Kafka: an illegal name is just a partition its metadata cache does not know
    assert _produce(client, "bad name!", build_batch([(None, b"v", [], T0)])).error_code == \
        ErrorCode.UNKNOWN_TOPIC_OR_PARTITION


def test_produce_to_internal_topic_is_refused(broker, client):
    assert _produce(client, "__consumer_offsets", build_batch([(b"k", b"v", [], T0)])).error_code == \
        ErrorCode.INVALID_TOPIC_EXCEPTION


def test_produce_reports_record_errors_for_keyless_records_on_compacted_topics(broker, client):
    broker.topics.create("c", 1, {"cleanup.policy": "compact"})
    p = _produce(client, "c", build_batch([(b"k", b"v", [], T0), (None, b"v", [], T0)]))
    assert p.error_code == ErrorCode.INVALID_RECORD
    assert [(e.batch_index, "without key" in e.batch_index_error_message) for e in p.record_errors] == [(1, True)]


def _fetch(client, topic, offsets, max_bytes, partition_max_bytes, version=13):
    body = {"max_wait_ms": 0, "min_bytes": 1, "max_bytes": max_bytes, "isolation_level": 0, "session_id": 0,
            "session_epoch": -1, "forgotten_topics_data": [], "rack_id": "", "replica_id": -1,
            "topics": [{"topic": topic.name, "topic_id": topic.topic_id, "partitions": [
                {"partition": p, "fetch_offset": o, "partition_max_bytes": partition_max_bytes}
                for p, o in offsets]}]}
    return client.call(ApiKey.FETCH, version, body).responses[0].partitions


def test_fetch_limits_across_partitions(broker, client):
    topic = broker.topics.create("f", 3, {})
    for p in topic.partitions:
        for _ in range(4):
            p.append(build_batch([(None, b"x" * 1000, [], T0)]), T0)
    size = len(topic.partitions[0].batches()[0])
    parts = _fetch(client, topic, [(0, 0), (1, 0), (2, 0)], max_bytes=10 * size, partition_max_bytes=3 * size)
    assert [len(p.records) // size for p in parts] == [3, 3, 3]
    parts = _fetch(client, topic, [(0, 0), (1, 0), (2, 0)], max_bytes=5 * size, partition_max_bytes=3 * size)
    assert [len(p.records) // size for p in parts] == [3, 2, 0]
    # a first batch larger than every limit still comes back for the first partition only (KIP-74)
    parts = _fetch(client, topic, [(0, 1), (1, 0)], max_bytes=10, partition_max_bytes=10)
    assert [len(p.records) // size for p in parts] == [1, 0]
    assert parse_header(parts[0].records).base_offset == 1


@pytest.mark.parametrize("version", [4, 9, 10])
def test_a_zstd_topic_is_fetched_at_every_version(broker, client, version):
    """Kafka 4's KafkaApis serves stored batches as they are: the UNSUPPORTED_COMPRESSION_TYPE that
    Kafka 3 answered Fetch v0-9 on a zstd topic went with down-conversion."""
    topic = broker.topics.create("z", 1, {"compression.type": "zstd"})
    assert topic.partitions[0].append(build_batch([(None, b"z", [], T0)], codec=compression.ZSTD), T0).error == "NONE"
    [part] = _fetch(client, topic, [(0, 0)], max_bytes=1 << 20, partition_max_bytes=1 << 20, version=version)
    assert part.error_code == ErrorCode.NONE and parse_header(part.records).codec == compression.ZSTD


def test_topic_max_message_bytes_defaults_to_the_broker_setting(broker, client):
    broker.config.message_max_bytes = 500
    broker.topics.create("m", 1, {})
    broker.topics.create("big", 1, {"max.message.bytes": "5000"})
    record = build_batch([(None, b"x" * 1000, [], T0)])
    assert _produce(client, "m", record).error_code == ErrorCode.MESSAGE_TOO_LARGE
    assert _produce(client, "big", record).error_code == ErrorCode.NONE


def _session_fetch(client, topic, session_id, epoch, partitions, forgotten=(), version=13):
    body = {"max_wait_ms": 0, "min_bytes": 1, "max_bytes": 1 << 20, "isolation_level": 0, "session_id": session_id,
            "session_epoch": epoch, "rack_id": "", "replica_id": -1,
            "topics": [{"topic": topic.name, "topic_id": topic.topic_id, "partitions": [
                {"partition": p, "fetch_offset": o, "partition_max_bytes": 1 << 20} for p, o in partitions]}]
            if partitions else [],
            "forgotten_topics_data": [{"topic": topic.name, "topic_id": topic.topic_id, "partitions": list(forgotten)}]
            if forgotten else []}
    return client.call(ApiKey.FETCH, version, body)


def _answered(resp):
    return {(p.partition_index, len(p.records) > 0, p.high_watermark) for t in resp.responses for p in t.partitions}


@pytest.mark.parametrize("version", [7, 12, 13, 17])
def test_incremental_fetch_sessions(broker, client, version):
    topic = broker.topics.create("s", 3, {})
    topic.partitions[0].append(build_batch([(None, b"x", [], T0)]), T0)
    full = _session_fetch(client, topic, 0, 0, [(0, 0), (1, 0), (2, 0)], version=version)
    sid = full.session_id
    assert full.error_code == 0 and sid != 0
    assert _answered(full) == {(0, True, 1), (1, False, 0), (2, False, 0)}
    # nothing changed: the client moved partition 0 to offset 1 and is answered with nothing
    assert _answered(_session_fetch(client, topic, sid, 1, [(0, 1)], version=version)) == set()
    topic.partitions[2].append(build_batch([(None, b"y", [], T0)]), T0)
    assert _answered(_session_fetch(client, topic, sid, 2, [], version=version)) == {(2, True, 1)}
    # partition 2 was answered with records but the client did not move: they come again
    assert _answered(_session_fetch(client, topic, sid, 3, [], version=version)) == {(2, True, 1)}
    topic.partitions[1].append(build_batch([(None, b"z", [], T0)]), T0)
    topic.partitions[0].append(build_batch([(None, b"w", [], T0)]), T0)
    changed = _session_fetch(client, topic, sid, 4, [(2, 1)], forgotten=[1], version=version)
    assert _answered(changed) == {(0, True, 2)}
    assert _session_fetch(client, topic, sid, 4, [], version=version).error_code == \
        ErrorCode.INVALID_FETCH_SESSION_EPOCH
    assert _session_fetch(client, topic, sid + 1, 1, [], version=version).error_code == \
        ErrorCode.FETCH_SESSION_ID_NOT_FOUND
    closed = _session_fetch(client, topic, sid, -1, [(0, 0)], version=version)
    assert closed.session_id == 0 and _answered(closed) == {(0, True, 2)}
    assert _session_fetch(client, topic, sid, 6, [], version=version).error_code == \
        ErrorCode.FETCH_SESSION_ID_NOT_FOUND


def test_fetch_session_cache_declines_when_full(broker, client):
    topic = broker.topics.create("s", 1, {})
    broker.store.fetch_sessions.max_slots = 1
    first = _session_fetch(client, topic, 0, 0, [(0, 0)])
    second = _session_fetch(client, topic, 0, 0, [(0, 0)])
    assert first.session_id != 0 and second.session_id == 0 and second.error_code == 0


def test_incremental_fetch_long_polls_on_the_whole_session(broker, client):
    topic = broker.topics.create("s", 2, {})
    sid = _session_fetch(client, topic, 0, 0, [(0, 0), (1, 0)]).session_id
    body = {"max_wait_ms": 5000, "min_bytes": 1, "max_bytes": 1 << 20, "isolation_level": 0, "session_id": sid,
            "session_epoch": 1, "rack_id": "", "replica_id": -1, "topics": [], "forgotten_topics_data": []}
    assert client.call(ApiKey.FETCH, 13, body) is None  # parked
    topic.partitions[1].append(build_batch([(None, b"late", [], T0)]), T0)
    (reply,) = FrameDecoder(1 << 30).feed(client.conn.take_output())
    resp = envelope.decode_response(ApiKey.FETCH, 13, reply)[1]
    assert _answered(resp) == {(1, True, 1)}


def test_partitions_led_by_another_node_answer_not_leader_with_a_hint():
    broker = new_broker(T0, nodes=3, port=19000)
    topic = broker.topics.create("multi", 3, {})
    leaders = {p.index: broker.placement.partition_leader(p) for p in topic.partitions}
    assert sorted(leaders.values()) == [0, 1, 2]
    led_by_0 = next(i for i, n in leaders.items() if n == 0)
    other = next(i for i, n in leaders.items() if n != 0)
    client = WireClient(broker)  # connected to node 0
    ok = _produce(client, "multi", build_batch([(None, b"v", [], T0)]), version=11, partition=led_by_0)
    assert ok.error_code == 0
    resp = client.call(ApiKey.PRODUCE, 11, {"transactional_id": None, "acks": -1, "timeout_ms": 1000, "topic_data": [
        {"name": "multi", "partition_data": [{"index": other, "records": build_batch([(None, b"v", [], T0)])}]}]})
    p = resp.responses[0].partition_responses[0]
    assert p.error_code == ErrorCode.NOT_LEADER_OR_FOLLOWER
    assert (p.current_leader.leader_id, p.current_leader.leader_epoch) == (leaders[other], 0)
    assert [(n.node_id, n.port) for n in resp.node_endpoints] == [(leaders[other], 19000 + leaders[other])]
    assert topic.partitions[other].high_watermark == 0
    parts = _fetch(client, topic, [(led_by_0, 0), (other, 0)], max_bytes=1 << 20, partition_max_bytes=1 << 20,
                   version=16)
    assert [p.error_code for p in parts] == [0, ErrorCode.NOT_LEADER_OR_FOLLOWER]
    assert parts[1].current_leader.leader_id == leaders[other]
    assert _list(client, 7, -1, name="multi", partition=other).error_code == ErrorCode.NOT_LEADER_OR_FOLLOWER
    # a leader change bumps the epoch: the old epoch is fenced everywhere
    broker.placement.move_leader("multi", other, 0)
    assert _list(client, 7, -1, name="multi", partition=other, current_leader_epoch=0).error_code == \
        ErrorCode.FENCED_LEADER_EPOCH
    assert _list(client, 7, -1, name="multi", partition=other, current_leader_epoch=1).error_code == 0


def test_a_parked_incremental_fetch_still_reports_a_moved_log_start(broker, client):
    topic = broker.topics.create("s", 1, {})
    plog = topic.partitions[0]
    plog.append(build_batch([(None, b"a", [], T0), (None, b"b", [], T0)]), T0)
    sid = _session_fetch(client, topic, 0, 0, [(0, 2)]).session_id
    plog.delete_records(1)  # nothing new to read, but the log start moved
    body = {"max_wait_ms": 500, "min_bytes": 1, "max_bytes": 1 << 20, "isolation_level": 0, "session_id": sid,
            "session_epoch": 1, "rack_id": "", "replica_id": -1, "topics": [], "forgotten_topics_data": []}
    assert client.call(ApiKey.FETCH, 13, body) is None  # parked: no bytes to return yet
    broker.tick(T0 + 500)
    (reply,) = FrameDecoder(1 << 30).feed(client.conn.take_output())
    resp = envelope.decode_response(ApiKey.FETCH, 13, reply)[1]
    assert [(p.partition_index, p.log_start_offset) for t in resp.responses for p in t.partitions] == [(0, 1)]


def _fill_partitions(broker, name, partitions=3, batches=4):
    topic = broker.topics.create(name, partitions, {})
    for p in topic.partitions:
        for _ in range(batches):
            p.append(build_batch([(None, b"x" * 1000, [], T0)]), T0)
    return topic, len(topic.partitions[0].batches()[0])


def test_fetch_responses_are_capped_at_fetch_max_bytes(broker, client):
    topic, size = _fill_partitions(broker, "cap")
    broker.config.fetch_max_bytes = 5 * size
    offsets = [(0, 0), (1, 0), (2, 0)]
    parts = _fetch(client, topic, offsets, max_bytes=0x7FFFFFFF, partition_max_bytes=0x7FFFFFFF)
    assert [len(p.records) // size for p in parts] == [4, 1, 0]
    # the first batch is still returned when it alone is larger (KIP-74), for the first partition only
    broker.config.fetch_max_bytes = 10
    parts = _fetch(client, topic, offsets, max_bytes=0x7FFFFFFF, partition_max_bytes=0x7FFFFFFF)
    assert [len(p.records) // size for p in parts] == [1, 0, 0]


def test_fetch_min_bytes_is_capped_at_the_response_limit(broker, client):
    topic, size = _fill_partitions(broker, "cap-min", partitions=1, batches=3)
    broker.config.fetch_max_bytes = 2 * size
    body = {"max_wait_ms": 5000, "min_bytes": 10 * size, "max_bytes": 0x7FFFFFFF, "isolation_level": 0,
            "session_id": 0, "session_epoch": -1, "forgotten_topics_data": [], "rack_id": "", "replica_id": -1,
            "topics": [{"topic": "cap-min", "topic_id": topic.topic_id, "partitions": [
                {"partition": 0, "fetch_offset": 0, "partition_max_bytes": 0x7FFFFFFF}]}]}
    resp = client.call(ApiKey.FETCH, 13, body)   # answered at once: as much as a response may carry is there
    assert resp is not None and len(resp.responses[0].partitions[0].records) == 2 * size


def test_list_offsets_and_fetch_after_a_batch_with_max_timestamp_minus_one(broker, client):
    import crc32c
    import struct
    broker.topics.create("go", 1, {})
    assert _produce(client, "go", build_batch([(None, b"a", [], T0), (None, b"b", [], T0 + 1)])).error_code == 0
    batch = bytearray(build_batch([(None, b"c", [], T0 + 10), (None, b"d", [], T0 + 20)]))
    struct.pack_into(">q", batch, 35, -1)                  # what older Go clients write
    struct.pack_into(">I", batch, 17, crc32c.crc32c(bytes(batch[21:])))
    assert _produce(client, "go", bytes(batch)).error_code == 0
    for version in (1, 4, 7, 10):   # Kafka: the first record at or after the time, not offset -1
        p = _list(client, version, T0 + 5, name="go")
        assert (p.timestamp, p.offset) == (T0 + 10, 2)
    newest = _list(client, 7, -3, name="go")
    assert (newest.timestamp, newest.offset) == (T0 + 20, 3)
    fetched = _fetch(client, broker.store.get("go"), [(0, 2)], 1 << 20, 1 << 20)[0].records
    assert parse_header(fetched).max_timestamp == T0 + 20


def test_one_produce_requests_batches_share_an_inflation_budget():
    broker = new_broker(T0, max_uncompressed_batch_bytes=1_000_000, socket_request_max_bytes=1_200_000)
    client = WireClient(broker)
    broker.topics.create("bud", 2, {})
    batch = build_batch([(b"k%d" % i, bytes(100_000), [], T0) for i in range(8)], codec=compression.ZSTD)
    resp = client.call(ApiKey.PRODUCE, 9, {"transactional_id": None, "acks": -1, "timeout_ms": 1000, "topic_data": [
        {"name": "bud", "partition_data": [{"index": 0, "records": batch}, {"index": 1, "records": batch}]}]})
    codes = [p.error_code for p in resp.responses[0].partition_responses]
    assert codes == [ErrorCode.NONE, ErrorCode.MESSAGE_TOO_LARGE]
    big = build_batch([(b"k%d" % i, bytes(100_000), [], T0) for i in range(11)], codec=compression.ZSTD)
    assert _produce(client, "bud", big).error_code == ErrorCode.MESSAGE_TOO_LARGE   # one batch over its bound
