"""The transactions data path through the sans-IO connection: Produce of transactional batches
(whole-request errors, the KIP-890 verifier hook), Fetch read_committed (LSO boundaries,
aborted_transactions, long poll woken by the marker) and read_uncommitted, ListOffsets under
both isolation levels, DescribeProducers, and TransactionDataPath.write_txn_markers. No sockets."""
import pytest

from kafkaemu.protocol.api_keys import ApiKey
from kafkaemu.protocol.catalog import catalog
from kafkaemu.protocol.errors import ErrorCode
from kafkaemu.storage.record_batch import build_batch, iter_records, parse_header, split_batches
from kafkaemu.wire.framing import FrameDecoder
from tests.conftest import T0, WireClient, new_broker

READ_UNCOMMITTED, READ_COMMITTED = 0, 1
pytestmark = pytest.mark.broker(T0)


def txn_batch(pid, seq, n=2, epoch=0, value=b"t", transactional=True):
    return build_batch([(None, value + b"%d" % i, [], T0) for i in range(n)], producer_id=pid, producer_epoch=epoch,
                       base_sequence=seq, transactional=transactional)


def plain(n=2, value=b"p"):
    return build_batch([(None, value + b"%d" % i, [], T0) for i in range(n)])


def produce(client, parts, transactional_id="tx", version=9, acks=-1):
    """``parts``: [(topic, partition, records)]; returns {(topic, partition): partition response}."""
    by_topic = {}
    for name, index, records in parts:
        by_topic.setdefault(name, []).append({"index": index, "records": records})
    topic_data = [{"name": n, "partition_data": p} for n, p in by_topic.items()]
    resp = client.call(ApiKey.PRODUCE, version, {"transactional_id": transactional_id, "acks": acks, "timeout_ms": 1000,
                                                 "topic_data": topic_data})
    return {(t.name, p.index): p for t in resp.responses for p in t.partition_responses}


def fetch(client, topic, offset, isolation, partition=0, version=11, partition_max_bytes=1 << 20, max_wait_ms=0):
    body = {"max_wait_ms": max_wait_ms, "min_bytes": 1, "max_bytes": 1 << 20, "isolation_level": isolation,
            "session_id": 0, "session_epoch": -1, "forgotten_topics_data": [], "rack_id": "", "replica_id": -1,
            "topics": [{"topic": topic, "topic_id": bytes(16), "partitions": [
                {"partition": partition, "fetch_offset": offset, "partition_max_bytes": partition_max_bytes}]}]}
    resp = client.call(ApiKey.FETCH, version, body)
    return None if resp is None else resp.responses[0].partitions[0]


def base_offsets(records):
    return [parse_header(records, pos).base_offset for pos, _, _ in split_batches(records)]


def list_latest(client, topic, isolation, timestamp=-1, version=7):
    partition = {"partition_index": 0, "current_leader_epoch": -1, "timestamp": timestamp, "max_num_offsets": 1}
    resp = client.call(ApiKey.LIST_OFFSETS, version, {"replica_id": -1, "isolation_level": isolation,
                                                      "timeout_ms": 1000,
                                                      "topics": [{"name": topic, "partitions": [partition]}]})
    p = resp.topics[0].partitions[0]
    return p.error_code, p.timestamp, p.offset


@pytest.fixture
def mixed(broker):
    """Partition 0 of "m": plain 0-1, txn A (pid 1) 2-3, plain 4-5, txn B (pid 2) 6-7, A again 8-9,
    abort A at 10; B stays open. LSO 6, HW 11."""
    plog = broker.topics.create("m", 1, {}).partitions[0]
    plog.append(plain(), T0)
    plog.append(txn_batch(1, 0), T0)
    plog.append(plain(), T0)
    plog.append(txn_batch(2, 0), T0)
    plog.append(txn_batch(1, 2), T0)
    plog.append_control_batch(1, 0, False, 0, T0)
    assert (plog.last_stable_offset, plog.high_watermark) == (6, 11)
    return plog


def test_read_committed_fetch_stops_at_the_lso_with_the_aborted_list(client, mixed):
    p = fetch(client, "m", 0, READ_COMMITTED)
    assert p.error_code == 0 and (p.high_watermark, p.last_stable_offset) == (11, 6)
    assert base_offsets(p.records) == [0, 2, 4]
    assert [(a.producer_id, a.first_offset) for a in p.aborted_transactions] == [(1, 2)]
    # read_uncommitted: everything to the high watermark, markers included, no aborted list
    p = fetch(client, "m", 0, READ_UNCOMMITTED)
    assert base_offsets(p.records) == [0, 2, 4, 6, 8, 10] and p.last_stable_offset == 6
    assert p.aborted_transactions is None
    # at (or past) the LSO a read_committed fetch is empty, with an empty aborted list
    for offset in (6, 8):
        p = fetch(client, "m", offset, READ_COMMITTED)
        assert p.error_code == 0 and p.records == b"" and p.aborted_transactions == []


def test_read_committed_aborted_list_covers_only_the_batches_returned(client, broker, mixed):
    size0 = len(mixed.batches()[0])
    # one batch (0-1): A's aborted transaction starts at 2, past what is returned
    p = fetch(client, "m", 0, READ_COMMITTED, partition_max_bytes=size0)
    assert base_offsets(p.records) == [0] and p.aborted_transactions == []
    # the marker lands: B commits, the LSO reaches the high watermark
    mixed.append_control_batch(2, 0, True, 0, T0)
    p = fetch(client, "m", 4, READ_COMMITTED)
    assert base_offsets(p.records) == [4, 6, 8, 10, 11] and p.last_stable_offset == 12
    # A's transaction (2..10) overlaps a fetch from 4; none does from 11
    assert [(a.producer_id, a.first_offset) for a in p.aborted_transactions] == [(1, 2)]
    assert fetch(client, "m", 11, READ_COMMITTED).aborted_transactions == []


def test_read_committed_long_poll_is_completed_by_the_marker(client, broker, mixed):
    assert fetch(client, "m", 6, READ_COMMITTED, max_wait_ms=5000) is None     # parked at the LSO
    mixed.append(txn_batch(2, 2), T0)                                          # more open data: still parked
    assert client.conn.take_output() == b""
    broker.txn_path.write_txn_markers(2, 0, True, 0, [("m", 0)], T0)
    (reply,) = FrameDecoder(1 << 30).feed(client.conn.take_output())
    p = catalog().response(ApiKey.FETCH, 11).decode(reply[4:]).responses[0].partitions[0]
    assert base_offsets(p.records) == [6, 8, 10, 11, 13] and p.last_stable_offset == 14


def test_list_offsets_latest_is_the_lso_under_read_committed(client, mixed):
    assert list_latest(client, "m", READ_COMMITTED) == (0, -1, 6)
    assert list_latest(client, "m", READ_UNCOMMITTED) == (0, -1, 11)
    assert list_latest(client, "m", READ_COMMITTED, version=1) == (0, -1, 11)   # v1 has no isolation level
    # a record found at or past the last fetchable offset is not answered (Kafka's lastFetchableOffset)
    assert list_latest(client, "m", READ_COMMITTED, timestamp=T0) == (0, T0, 0)
    mixed.delete_records(6)
    assert list_latest(client, "m", READ_COMMITTED, timestamp=T0) == (0, -1, -1)
    assert list_latest(client, "m", READ_UNCOMMITTED, timestamp=T0) == (0, T0, 6)
    assert list_latest(client, "m", READ_COMMITTED, timestamp=-3) == (0, -1, -1)


def test_transactional_produce_starts_a_transaction(client, broker):
    broker.txn_path.partition_verifier = None   # producer 5 has no transaction at the coordinator: no KIP-890 check
    plog = broker.topics.create("p", 2, {}).partitions[0]
    out = produce(client, [("p", 0, txn_batch(5, 0)), ("p", 1, plain())])
    assert [r.error_code for r in out.values()] == [0, 0]
    assert plog.open_transactions() == {5: 0} and plog.last_stable_offset == 0
    # a plain batch from the same producer while its transaction is open
    out = produce(client, [("p", 0, txn_batch(5, 2, transactional=False))])
    assert out[("p", 0)].error_code == ErrorCode.INVALID_TXN_STATE and plog.high_watermark == 2


def test_transactional_records_need_a_transactional_id_and_one_producer(client, broker):
    topic = broker.topics.create("p", 2, {})
    out = produce(client, [("p", 0, txn_batch(5, 0)), ("p", 1, plain())], transactional_id=None)
    assert {k: r.error_code for k, r in out.items()} == {
        ("p", 0): ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, ("p", 1): ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED}
    out = produce(client, [("p", 0, txn_batch(5, 0)), ("p", 1, txn_batch(6, 0))])
    assert {r.error_code for r in out.values()} == {ErrorCode.INVALID_PRODUCER_ID_MAPPING}
    assert [p.high_watermark for p in topic.partitions] == [0, 0]    # nothing appended anywhere


def test_the_verifier_is_asked_before_a_partition_joins_a_transaction(client, broker):
    topic = broker.topics.create("v", 3, {})
    asked = []
    answers = {0: 0, 1: ErrorCode.INVALID_TXN_STATE, 2: ErrorCode.CONCURRENT_TRANSACTIONS}

    def verifier(transactional_id, producer_id, epoch, topic_name, partition):
        asked.append((transactional_id, producer_id, epoch, topic_name, partition))
        return answers[partition]

    broker.txn_path.partition_verifier = verifier
    out = produce(client, [("v", 0, txn_batch(5, 0, epoch=2)), ("v", 1, txn_batch(5, 0, epoch=2)),
                           ("v", 2, txn_batch(5, 0, epoch=2))])
    assert sorted(asked) == [("tx", 5, 2, "v", 0), ("tx", 5, 2, "v", 1), ("tx", 5, 2, "v", 2)]
    assert out[("v", 0)].error_code == 0
    assert (out[("v", 1)].error_code, out[("v", 1)].error_message) == (
        ErrorCode.INVALID_TXN_STATE, "Partition was not added to the transaction")
    assert out[("v", 2)].error_code == ErrorCode.NOT_ENOUGH_REPLICAS      # retriable for older clients
    assert "CONCURRENT_TRANSACTIONS" in out[("v", 2)].error_message
    assert [p.high_watermark for p in topic.partitions] == [2, 0, 0]
    # the transaction is open on partition 0: later batches there are not verified again
    asked.clear()
    assert produce(client, [("v", 0, txn_batch(5, 2, epoch=2))])[("v", 0)].error_code == 0
    assert asked == []
    # plain and idempotent batches are never verified
    produce(client, [("v", 1, plain()), ("v", 1, txn_batch(9, 0, transactional=False))], transactional_id=None)
    assert asked == []


def test_describe_producers(client, broker, mixed):
    idem = broker.topics.create("i", 2, {}).partitions[1]
    idem.append(txn_batch(9, 0, n=3, transactional=False), T0)
    resp = client.call(ApiKey.DESCRIBE_PRODUCERS, 0, {"topics": [{"name": "m", "partition_indexes": [0, 5]},
                                                                 {"name": "i", "partition_indexes": [1, 0]},
                                                                 {"name": "nope", "partition_indexes": [0]},
                                                                 {"name": "bad/name", "partition_indexes": [0]}]})
    m, i, nope, bad = resp.topics
    p0, p5 = m.partitions
    assert p0.error_code == 0 and p0.error_message is None
    states = {s.producer_id: (s.producer_epoch, s.last_sequence, s.coordinator_epoch, s.current_txn_start_offset)
              for s in p0.active_producers}
    assert states == {1: (0, 3, 0, -1), 2: (0, 1, -1, 6)}
    assert p5.error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    i1, i0 = i.partitions
    assert [(s.producer_id, s.last_sequence, s.current_txn_start_offset) for s in i1.active_producers] == [(9, 2, -1)]
    assert i0.error_code == 0 and i0.active_producers == []
    assert (nope.partitions[0].error_code, nope.partitions[0].error_message) == (
        ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "This server does not host this topic-partition.")
    assert bad.partitions[0].error_code == ErrorCode.INVALID_TOPIC_EXCEPTION
    assert bad.partitions[0].error_message == ("Topic name is invalid: 'bad/name' contains one or more characters "
                                               "other than ASCII alphanumerics, '.', '_' and '-'")


def test_describe_producers_on_another_node_is_not_leader():
    broker = new_broker(T0, nodes=3, port=19000)
    topic = broker.topics.create("multi", 3, {})
    client = WireClient(broker)
    resp = client.call(ApiKey.DESCRIBE_PRODUCERS, 0, {"topics": [{"name": "multi", "partition_indexes": [0, 1, 2]}]})
    codes = [p.error_code for p in resp.topics[0].partitions]
    leaders = [broker.placement.partition_leader(p) for p in topic.partitions]
    assert codes == [0 if leader == broker.node_id else ErrorCode.NOT_LEADER_OR_FOLLOWER for leader in leaders]
    assert ErrorCode.NOT_LEADER_OR_FOLLOWER in codes


def test_write_txn_markers_skips_deleted_partitions_and_reports_fencing(broker):
    a = broker.topics.create("a", 2, {})
    broker.topics.create("gone", 1, {})
    a.partitions[0].append(txn_batch(3, 0, epoch=1), T0)
    broker.topics.delete("gone")
    results = broker.txn_path.write_txn_markers(3, 1, True, 2, [("a", 0), ("a", 1), ("gone", 0), ("a", 7)], T0)
    assert results == {("a", 0): ErrorCode.NONE, ("a", 1): ErrorCode.NONE,
                       ("gone", 0): ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, ("a", 7): ErrorCode.UNKNOWN_TOPIC_OR_PARTITION}
    assert [p.high_watermark for p in a.partitions] == [3, 1] and a.partitions[0].last_stable_offset == 3
    # a zombie coordinator (older epoch) and a stale producer epoch write nothing
    results = broker.txn_path.write_txn_markers(3, 1, False, 1, [("a", 0)], T0)
    assert results == {("a", 0): ErrorCode.TRANSACTION_COORDINATOR_FENCED}
    results = broker.txn_path.write_txn_markers(3, 0, False, 2, [("a", 0)], T0)
    assert results == {("a", 0): ErrorCode.INVALID_PRODUCER_EPOCH}
    assert [p.high_watermark for p in a.partitions] == [3, 1]
    (marker,) = list(iter_records(a.partitions[0].batches()[-1]))
    assert marker.key == b"\x00\x00\x00\x01"


def test_describe_producers_is_advertised(client):
    resp = client.call(ApiKey.API_VERSIONS, 2, {})
    assert {(k.api_key, k.min_version, k.max_version) for k in resp.api_keys} >= {(ApiKey.DESCRIBE_PRODUCERS, 0, 0)}
