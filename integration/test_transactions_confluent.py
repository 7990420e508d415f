"""Transactions with librdkafka (confluent-kafka): commit and abort seen through read_committed and
read_uncommitted consumers, the last stable offset, consume-transform-produce exactly once with
send_offsets_to_transaction, fencing, and the broker aborting a transaction past its timeout."""
from __future__ import annotations

import time

import pytest
from confluent_kafka import (Consumer, IsolationLevel, KafkaError, KafkaException, Producer, TopicPartition)
from confluent_kafka.admin import AdminClient, OffsetSpec

from kafkaemu.testing import KafkaEmulator

from .txn_clients import DEADLINE_S, read_to_sentinels, unique, write_sentinels


def create(emulator, topic, partitions):
    emulator.call(lambda b: b.topics.create(topic, partitions, {}))


def txn_producer(emulator, tid, **conf):
    p = Producer({"bootstrap.servers": emulator.bootstrap_servers, "transactional.id": tid, "linger.ms": 1, **conf})
    p.init_transactions(30)
    return p


def latest(emulator, topic, partition, isolation):
    admin = AdminClient({"bootstrap.servers": emulator.bootstrap_server})
    tp = TopicPartition(topic, partition)
    return admin.list_offsets({tp: OffsetSpec.latest()}, isolation_level=isolation)[tp].result(10).offset


def test_read_committed_sees_exactly_the_committed_records_with_marker_gaps(kafka_emulator):
    topic, tid = unique("txn-ck"), unique("tid")
    create(kafka_emulator, topic, 2)
    p = txn_producer(kafka_emulator, tid)
    p.begin_transaction()
    for i in range(10):
        p.produce(topic, value=b"committed-%d" % i, partition=i % 2)
    p.commit_transaction(30)
    p.begin_transaction()
    for i in range(10):
        p.produce(topic, value=b"aborted-%d" % i, partition=i % 2)
    p.flush(30)
    p.abort_transaction(30)
    write_sentinels(kafka_emulator.bootstrap_server, topic, 2)

    committed = read_to_sentinels(kafka_emulator.bootstrap_server, topic, 2, "read_committed")
    assert sorted(v for _, _, _, v in committed) == sorted(b"committed-%d" % i for i in range(10))
    everything = read_to_sentinels(kafka_emulator.bootstrap_server, topic, 2, "read_uncommitted")
    assert sorted(v for _, _, _, v in everything) == sorted(
        [b"committed-%d" % i for i in range(10)] + [b"aborted-%d" % i for i in range(10)])
    # per partition: 5 committed at 0-4, the commit marker at 5, 5 aborted at 6-10, the abort marker at 11
    for partition in (0, 1):
        assert [o for p_, o, _, _ in everything if p_ == partition] == [0, 1, 2, 3, 4, 6, 7, 8, 9, 10]
        assert latest(kafka_emulator, topic, partition, IsolationLevel.READ_UNCOMMITTED) == 13  # + sentinel
    assert kafka_emulator.transaction_state(tid)["state"] == "CompleteAbort"


def test_the_last_stable_offset_stays_at_the_first_open_transaction(kafka_emulator):
    topic, tid = unique("lso-ck"), unique("tid")
    create(kafka_emulator, topic, 1)
    p = txn_producer(kafka_emulator, tid)
    p.begin_transaction()
    p.produce(topic, value=b"open", partition=0)
    assert p.flush(30) == 0
    plain = Producer({"bootstrap.servers": kafka_emulator.bootstrap_server})
    plain.produce(topic, value=b"after", partition=0)
    assert plain.flush(30) == 0
    assert latest(kafka_emulator, topic, 0, IsolationLevel.READ_COMMITTED) == 0
    assert latest(kafka_emulator, topic, 0, IsolationLevel.READ_UNCOMMITTED) == 2
    # EndTxn answered but its markers held: still pinned; released: the LSO passes the marker
    kafka_emulator.hold_transaction(tid)
    p.commit_transaction(30)
    assert kafka_emulator.transaction_state(tid)["state"] == "PrepareCommit"
    assert latest(kafka_emulator, topic, 0, IsolationLevel.READ_COMMITTED) == 0
    assert kafka_emulator.release_transaction(tid) is True
    assert latest(kafka_emulator, topic, 0, IsolationLevel.READ_COMMITTED) == 3
    write_sentinels(kafka_emulator.bootstrap_server, topic, 1)
    assert [v for _, _, _, v in read_to_sentinels(kafka_emulator.bootstrap_server, topic, 1, "read_committed")] \
        == [b"open", b"after"]


def test_consume_transform_produce_exactly_once_with_one_aborted_and_retried_transaction(kafka_emulator):
    source, sink, group, tid = unique("ctp-in"), unique("ctp-out"), unique("ctp-group"), unique("ctp-tid")
    create(kafka_emulator, source, 3)
    create(kafka_emulator, sink, 3)
    total = 300
    plain = Producer({"bootstrap.servers": kafka_emulator.bootstrap_server})
    for i in range(total):
        plain.produce(source, key=b"%d" % i, value=b"in-%d" % i, partition=i % 3)
    assert plain.flush(30) == 0
    ends = {p: total // 3 for p in range(3)}

    consumer = Consumer({"bootstrap.servers": kafka_emulator.bootstrap_server, "group.id": group,
                         "enable.auto.commit": False, "isolation.level": "read_committed",
                         "auto.offset.reset": "earliest"})
    consumer.subscribe([source])
    producer = txn_producer(kafka_emulator, tid)

    def committed() -> dict:
        parts = [TopicPartition(source, p) for p in range(3)]
        return {tp.partition: tp.offset for tp in consumer.committed(parts, 10)}

    batches, aborted = 0, None
    deadline = time.monotonic() + DEADLINE_S
    while committed() != ends:
        assert time.monotonic() < deadline, committed()
        msgs = [m for m in consumer.consume(40, 1.0) if m.error() is None]
        if not msgs:
            continue
        before = committed()   # (while offsets are pending in a transaction, a read_committed
        producer.begin_transaction()   # consumer's committed() waits for them to be stable)
        for m in msgs:
            producer.produce(sink, key=m.key(), value=b"out-" + m.value()[3:], partition=m.partition())
        positions = [tp for tp in consumer.position(consumer.assignment()) if tp.offset >= 0]
        producer.send_offsets_to_transaction(positions, consumer.consumer_group_metadata(), 30)
        batches += 1
        if batches == 2 and aborted is None:
            assert producer.flush(30) == 0   # the attempt's records reach the log before the abort
            producer.abort_transaction(30)
            aborted = {tp.partition: tp.offset for tp in positions}
            assert committed() == before   # offsets sent in the aborted transaction are not visible
            for p in range(3):   # start over from the committed offsets
                consumer.seek(TopicPartition(source, p, before[p] if before[p] >= 0 else 0))
            continue
        producer.commit_transaction(30)
    assert aborted is not None and committed() == ends

    write_sentinels(kafka_emulator.bootstrap_server, sink, 3)
    out = read_to_sentinels(kafka_emulator.bootstrap_server, sink, 3, "read_committed")
    assert sorted(v for _, _, _, v in out) == sorted(b"out-%d" % i for i in range(total))   # each exactly once
    everything = read_to_sentinels(kafka_emulator.bootstrap_server, sink, 3, "read_uncommitted")
    assert len(everything) > total   # the aborted attempt's records are in the log, just not committed
    consumer.close()


def test_a_second_producer_with_the_same_transactional_id_fences_the_first(kafka_emulator):
    topic, tid = unique("fence-ck"), unique("tid")
    create(kafka_emulator, topic, 1)
    zombie = txn_producer(kafka_emulator, tid)
    zombie.begin_transaction()
    zombie.produce(topic, value=b"zombie", partition=0)
    assert zombie.flush(30) == 0
    live = txn_producer(kafka_emulator, tid)   # aborts the zombie's transaction, bumps the epoch
    with pytest.raises(KafkaException) as exc:
        zombie.commit_transaction(30)
    assert exc.value.args[0].code() == KafkaError._FENCED or exc.value.args[0].fatal()
    live.begin_transaction()
    live.produce(topic, value=b"live", partition=0)
    live.commit_transaction(30)
    write_sentinels(kafka_emulator.bootstrap_server, topic, 1)
    assert [v for _, _, _, v in read_to_sentinels(kafka_emulator.bootstrap_server, topic, 1, "read_committed")] \
        == [b"live"]
    transitions = [(t.from_state.value, t.to_state.value) for t in kafka_emulator.transaction_transitions(tid)]
    assert ("Ongoing", "PrepareAbort") in transitions


def test_a_transaction_open_past_its_timeout_is_aborted_by_the_broker():
    topic, tid = unique("timeout-ck"), unique("tid")
    with KafkaEmulator(manual_clock=True) as emulator:
        create(emulator, topic, 1)
        p = txn_producer(emulator, tid, **{"transaction.timeout.ms": 20000, "message.timeout.ms": 20000})
        p.begin_transaction()
        p.produce(topic, value=b"too-slow", partition=0)
        assert p.flush(30) == 0
        epoch = emulator.transaction_state(tid)["producer_epoch"]
        emulator.advance_clock(19000)
        assert emulator.transaction_state(tid)["state"] == "Ongoing"
        emulator.advance_clock(11000)   # past the timeout, and the coordinator's periodic check ran
        state = emulator.transaction_state(tid)
        # fenced (+1), then aborted as a V2 EndTxn since the cluster's transaction.version is 2 (+1)
        assert (state["state"], state["producer_epoch"]) == ("CompleteAbort", epoch + 2)
        with pytest.raises(KafkaException):
            p.commit_transaction(30)
        write_sentinels(emulator.bootstrap_server, topic, 1)
        assert read_to_sentinels(emulator.bootstrap_server, topic, 1, "read_committed") == []


def test_test_hooks_abort_time_out_and_fence_a_running_producer(kafka_emulator):
    topic = unique("hooks-ck")
    create(kafka_emulator, topic, 1)
    for hook in ("abort_transaction", "time_out_transaction", "fence_producer"):
        tid = unique(hook)
        p = txn_producer(kafka_emulator, tid)
        p.begin_transaction()
        p.produce(topic, value=hook.encode(), partition=0)
        assert p.flush(30) == 0
        epoch = kafka_emulator.transaction_state(tid)["producer_epoch"]
        result = getattr(kafka_emulator, hook)(tid)
        assert result == "NONE" or result["error_code"] == 0
        state = kafka_emulator.transaction_state(tid)
        assert state["producer_epoch"] > epoch and state["state"] in ("CompleteAbort", "Empty")
        with pytest.raises(KafkaException):
            p.commit_transaction(30)
    assert kafka_emulator.abort_transaction(tid) == "INVALID_TXN_STATE"   # nothing open any more
    write_sentinels(kafka_emulator.bootstrap_server, topic, 1)
    assert read_to_sentinels(kafka_emulator.bootstrap_server, topic, 1, "read_committed") == []
