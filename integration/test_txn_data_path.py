"""The transactions data path with real consumers, without the transaction coordinator:
transactional batches are produced over a raw connection (as a transactional producer sends
them) and the commit/abort markers written with ``TransactionDataPath.write_txn_markers`` (what the
coordinator does at EndTxn). A read_committed consumer sees exactly the committed records (and
nothing past the open transactions while they are open), a read_uncommitted one sees all; the
offsets show the marker gaps; ListOffsets from a read_committed client answers the LSO."""
import time

import pytest

from kafkaemu.protocol.api_keys import ApiKey
from kafkaemu.storage.record_batch import build_batch
from kafkaemu.testing.raw_client import connect, request

from .data_path_records import create_topic, unique_topic

A, B, PLAIN = 4000, 4001, None   # producer ids: A commits, B aborts


def _batch(values, pid=None, seq=0):
    now = int(time.time() * 1000)
    recs = [(None, v, [], now) for v in values]
    if pid is None:
        return build_batch(recs)
    return build_batch(recs, producer_id=pid, producer_epoch=0, base_sequence=seq, transactional=True)


def _produce(sock, topic, partition, records, transactional_id, cid):
    resp = request(sock, ApiKey.PRODUCE, 9, {"transactional_id": transactional_id, "acks": -1, "timeout_ms": 5000,
                                             "topic_data": [{"name": topic, "partition_data": [
                                    {"index": partition, "records": records}]}]}, correlation_id=cid)
    part = resp.responses[0].partition_responses[0]
    assert part.error_code == 0, part
    return part.base_offset


def _fill(emulator, topic):
    """Partition 0: plain c0-c2 (0-2), A a0-a2 (3-5), B b0-b2 (6-8), plain c3-c4 (9-10), A a3 (11).
    Partition 1: B b3-b4 (0-1), A a4 (2). Both transactions left open."""
    create_topic(emulator, topic, partitions=2)
    sock = connect(emulator)
    # these producers have no transaction at the coordinator: no KIP-890 verification meanwhile
    verifier = emulator.call(lambda b: b.txn_path.partition_verifier)
    emulator.call(lambda b: setattr(b.txn_path, "partition_verifier", None))
    try:
        steps = [(0, [b"c0", b"c1", b"c2"], PLAIN, 0), (0, [b"a0", b"a1", b"a2"], A, 0),
                 (0, [b"b0", b"b1", b"b2"], B, 0), (0, [b"c3", b"c4"], PLAIN, 0), (0, [b"a3"], A, 3),
                 (1, [b"b3", b"b4"], B, 3), (1, [b"a4"], A, 4)]
        for cid, (partition, values, pid, seq) in enumerate(steps, 1):
            _produce(sock, topic, partition, _batch(values, pid, seq), None if pid is None else f"tx-{pid}", cid)
    finally:
        sock.close()
        emulator.call(lambda b: setattr(b.txn_path, "partition_verifier", verifier))


def _consumer(emulator, topic, isolation):
    from confluent_kafka import Consumer, TopicPartition
    c = Consumer({"bootstrap.servers": emulator.bootstrap_server, "group.id": f"{topic}-{isolation}",
                  "enable.auto.commit": False, "isolation.level": isolation, "fetch.wait.max.ms": 100})
    c.assign([TopicPartition(topic, p, 0) for p in range(2)])
    return c


def _consume(consumer, want: int, deadline_s: float = 30) -> list:
    """(partition, offset, value) of records until ``want`` were read (or the deadline)."""
    out = []
    deadline = time.time() + deadline_s
    while len(out) < want and time.time() < deadline:
        for m in consumer.consume(100, 0.2):
            assert m.error() is None, m.error()
            out.append((m.partition(), m.offset(), m.value()))
    return out


def _settle(consumer, rounds: int = 5) -> list:
    """Whatever else arrives over a few polls (expected: nothing)."""
    out = []
    for _ in range(rounds):
        out += [(m.partition(), m.offset(), m.value()) for m in consumer.consume(100, 0.2) if m.error() is None]
    return out


@pytest.mark.timeout(120)
def test_confluent_read_committed_sees_only_committed_records(kafka_emulator):
    pytest.importorskip("confluent_kafka", reason="confluent-kafka is not installed")
    topic = unique_topic("txn-data")
    _fill(kafka_emulator, topic)
    committed = _consumer(kafka_emulator, topic, "read_committed")
    uncommitted = _consumer(kafka_emulator, topic, "read_uncommitted")
    try:
        # while both transactions are open: the LSO is A's first offset on p0 and B's on p1
        assert committed.get_watermark_offsets(_tp(topic, 0), timeout=10, cached=False) == (0, 3)
        assert committed.get_watermark_offsets(_tp(topic, 1), timeout=10, cached=False) == (0, 0)
        assert uncommitted.get_watermark_offsets(_tp(topic, 0), timeout=10, cached=False) == (0, 12)
        assert _consume(committed, 3) == [(0, 0, b"c0"), (0, 1, b"c1"), (0, 2, b"c2")]
        assert _settle(committed) == []           # nothing past the LSO
        everything = _consume(uncommitted, 15)
        assert sorted(everything) == sorted(
            [(0, i, v) for i, v in enumerate([b"c0", b"c1", b"c2", b"a0", b"a1", b"a2", b"b0", b"b1", b"b2",
                                              b"c3", b"c4", b"a3"])] + [(1, 0, b"b3"), (1, 1, b"b4"), (1, 2, b"a4")])

        # the coordinator completes them: A commits, B aborts (markers on every partition of each)
        results = kafka_emulator.call(lambda b: (
            b.txn_path.write_txn_markers(A, 0, True, 0, [(topic, 0), (topic, 1)], b.now_ms),
            b.txn_path.write_txn_markers(B, 0, False, 0, [(topic, 0), (topic, 1)], b.now_ms)))
        assert all(code == 0 for r in results for code in r.values())
        rest = _consume(committed, 7)
        rest += _settle(committed)
        # exactly the committed records, at their offsets: the aborted ones and the markers (12, 13
        # on p0; 3, 4 on p1) are gaps
        assert sorted(rest) == [(0, 3, b"a0"), (0, 4, b"a1"), (0, 5, b"a2"), (0, 9, b"c3"), (0, 10, b"c4"),
                                (0, 11, b"a3"), (1, 2, b"a4")]
        assert committed.get_watermark_offsets(_tp(topic, 0), timeout=10, cached=False) == (0, 14)
        assert committed.get_watermark_offsets(_tp(topic, 1), timeout=10, cached=False) == (0, 5)
        assert _settle(uncommitted) == []         # markers are never delivered as records
    finally:
        committed.close()
        uncommitted.close()


def _tp(topic, partition):
    from confluent_kafka import TopicPartition
    return TopicPartition(topic, partition)


@pytest.mark.timeout(120)
def test_kafka_python_read_committed(kafka_emulator):
    kafka = pytest.importorskip("kafka", reason="kafka-python is not installed")
    topic = unique_topic("txn-data-kp")
    _fill(kafka_emulator, topic)
    kafka_emulator.call(lambda b: (b.txn_path.write_txn_markers(A, 0, True, 0, [(topic, 0), (topic, 1)], b.now_ms),
                                   b.txn_path.write_txn_markers(B, 0, False, 0, [(topic, 0), (topic, 1)], b.now_ms)))
    tps = [kafka.TopicPartition(topic, p) for p in range(2)]
    out = {}
    for isolation in ("read_committed", "read_uncommitted"):
        consumer = kafka.KafkaConsumer(bootstrap_servers=kafka_emulator.bootstrap_server,
                                       isolation_level=isolation, enable_auto_commit=False,
                                       consumer_timeout_ms=3000)
        consumer.assign(tps)
        consumer.seek_to_beginning()
        out[isolation] = sorted((m.partition, m.offset, m.value) for m in consumer)
        if isolation == "read_committed":
            assert consumer.end_offsets(tps) == {tps[0]: 14, tps[1]: 5}
        consumer.close()
    assert [v for _, _, v in out["read_committed"]] == [b"c0", b"c1", b"c2", b"a0", b"a1", b"a2", b"c3", b"c4",
                                                        b"a3", b"a4"]
    assert len(out["read_uncommitted"]) == 15


@pytest.mark.timeout(120)
def test_markers_and_open_transactions_survive_a_restart(tmp_path):
    """With a data directory, a restarted emulator rebuilds the transactions from the log: the
    committed one stays visible, the open one still pins the LSO, and its abort marker written
    after the restart hides its records from read_committed consumers."""
    pytest.importorskip("confluent_kafka", reason="confluent-kafka is not installed")
    from kafkaemu.testing import KafkaEmulator
    topic = unique_topic("txn-restart")
    with KafkaEmulator(data_dir=str(tmp_path)) as first:
        _fill(first, topic)
        first.call(lambda b: b.txn_path.write_txn_markers(A, 0, True, 0, [(topic, 0), (topic, 1)], b.now_ms))
        assert first.call(lambda b: b.store.get(topic).partitions[0].last_stable_offset) == 6   # B opened at 6
    with KafkaEmulator(data_dir=str(tmp_path)) as second:
        assert second.call(lambda b: (b.store.get(topic).partitions[0].open_transactions(),
                                      b.store.get(topic).partitions[1].open_transactions())) == ({B: 6}, {B: 0})
        committed = _consumer(second, topic, "read_committed")
        try:
            assert committed.get_watermark_offsets(_tp(topic, 0), timeout=10, cached=False) == (0, 6)
            assert sorted(_consume(committed, 6)) == [(0, 0, b"c0"), (0, 1, b"c1"), (0, 2, b"c2"), (0, 3, b"a0"),
                                                      (0, 4, b"a1"), (0, 5, b"a2")]
            assert _settle(committed) == []
            second.call(lambda b: b.txn_path.write_txn_markers(B, 0, False, 0, [(topic, 0), (topic, 1)], b.now_ms))
            rest = _consume(committed, 4) + _settle(committed)
            assert sorted(rest) == [(0, 9, b"c3"), (0, 10, b"c4"), (0, 11, b"a3"), (1, 2, b"a4")]
        finally:
            committed.close()
