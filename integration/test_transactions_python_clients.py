"""Transactions with the pure-Python clients: aiokafka's transactional producer and read_committed
consumer, kafka-python's (3.x has both, KIP-447 group metadata included) and its transaction admin
calls."""
from __future__ import annotations

import asyncio
import time

from .txn_clients import DEADLINE_S, SENTINEL, read_to_sentinels, unique, write_sentinels


def create(emulator, topic, partitions):
    emulator.call(lambda b: b.topics.create(topic, partitions, {}))


# ------------------------------------------------------------------ aiokafka
async def _aiokafka_read(bootstrap, topic, partitions, isolation) -> list[bytes]:
    from aiokafka import AIOKafkaConsumer, TopicPartition
    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, isolation_level=isolation, enable_auto_commit=False,
                                auto_offset_reset="earliest")
    await consumer.start()
    try:
        consumer.assign([TopicPartition(topic, p) for p in range(partitions)])
        values, done = [], set()
        deadline = time.monotonic() + DEADLINE_S
        while len(done) < partitions:
            assert time.monotonic() < deadline, f"sentinels not read ({sorted(done)})"
            for tp, msgs in (await consumer.getmany(timeout_ms=500)).items():
                for m in msgs:
                    if m.value == SENTINEL:
                        done.add(tp.partition)
                    else:
                        values.append(m.value)
        return values
    finally:
        await consumer.stop()


def test_aiokafka_transactional_producer_and_read_committed_consumer(kafka_emulator):
    from aiokafka import AIOKafkaProducer
    topic, tid = unique("txn-aio"), unique("aio-tid")
    create(kafka_emulator, topic, 2)
    bootstrap = kafka_emulator.bootstrap_server

    async def run():
        producer = AIOKafkaProducer(bootstrap_servers=bootstrap, transactional_id=tid)
        await producer.start()
        try:
            async with producer.transaction():
                for i in range(10):
                    await producer.send(topic, b"committed-%d" % i, partition=i % 2)
            await producer.begin_transaction()
            for i in range(10):
                await producer.send(topic, b"aborted-%d" % i, partition=i % 2)
            await producer.flush()
            await producer.abort_transaction()
        finally:
            await producer.stop()
        write_sentinels(bootstrap, topic, 2)
        committed = await _aiokafka_read(bootstrap, topic, 2, "read_committed")
        everything = await _aiokafka_read(bootstrap, topic, 2, "read_uncommitted")
        return committed, everything

    committed, everything = asyncio.run(run())
    assert sorted(committed) == sorted(b"committed-%d" % i for i in range(10))
    assert sorted(everything) == sorted([b"committed-%d" % i for i in range(10)] +
                                        [b"aborted-%d" % i for i in range(10)])


def test_aiokafka_send_offsets_to_transaction(kafka_emulator):
    from aiokafka import AIOKafkaProducer, TopicPartition
    from aiokafka.structs import OffsetAndMetadata  # noqa: F401  (offsets may be ints or these)
    topic, out, group, tid = unique("aio-in"), unique("aio-out"), unique("aio-group"), unique("aio-tid")
    create(kafka_emulator, topic, 1)
    create(kafka_emulator, out, 1)
    bootstrap = kafka_emulator.bootstrap_server

    async def run():
        producer = AIOKafkaProducer(bootstrap_servers=bootstrap, transactional_id=tid)
        await producer.start()
        try:
            async with producer.transaction():
                await producer.send(out, b"result", partition=0)
                await producer.send_offsets_to_transaction({TopicPartition(topic, 0): 42}, group)
            await producer.begin_transaction()
            await producer.send_offsets_to_transaction({TopicPartition(topic, 0): 99}, group)
            await producer.abort_transaction()
        finally:
            await producer.stop()

    asyncio.run(run())
    assert kafka_emulator.call(lambda b: b.coordinator.fetch_offsets(b.now_ms, group, [(topic, [0])]))[
        "topics"][0]["partitions"][0]["committed_offset"] == 42


# ------------------------------------------------------------------ kafka-python
def test_kafka_python_transactions_and_read_committed(kafka_emulator):
    from kafka import KafkaConsumer, KafkaProducer, TopicPartition
    topic, tid = unique("txn-kp"), unique("kp-tid")
    create(kafka_emulator, topic, 2)
    bootstrap = kafka_emulator.bootstrap_server
    producer = KafkaProducer(bootstrap_servers=bootstrap, transactional_id=tid)
    producer.init_transactions()
    producer.begin_transaction()
    for i in range(10):
        producer.send(topic, b"committed-%d" % i, partition=i % 2)
    producer.commit_transaction()
    producer.begin_transaction()
    for i in range(10):
        producer.send(topic, b"aborted-%d" % i, partition=i % 2)
    producer.flush()
    producer.abort_transaction()
    producer.close()
    write_sentinels(bootstrap, topic, 2)

    def read(isolation):
        consumer = KafkaConsumer(bootstrap_servers=bootstrap, isolation_level=isolation, enable_auto_commit=False,
                                 auto_offset_reset="earliest")
        consumer.assign([TopicPartition(topic, p) for p in range(2)])
        consumer.seek_to_beginning()
        values, done = [], set()
        deadline = time.monotonic() + DEADLINE_S
        while len(done) < 2:
            assert time.monotonic() < deadline
            for tp, msgs in consumer.poll(timeout_ms=500).items():
                for m in msgs:
                    (done.add(tp.partition) if m.value == SENTINEL else values.append(m.value))
        consumer.close()
        return values

    assert sorted(read("read_committed")) == sorted(b"committed-%d" % i for i in range(10))
    assert len(read("read_uncommitted")) == 20
    assert sorted(v for _, _, _, v in read_to_sentinels(bootstrap, topic, 2, "read_committed")) == \
        sorted(b"committed-%d" % i for i in range(10))


def test_kafka_python_consume_transform_produce_with_group_metadata(kafka_emulator):
    from kafka import KafkaConsumer, KafkaProducer, TopicPartition
    from kafka.structs import OffsetAndMetadata
    source, sink, group, tid = unique("kp-in"), unique("kp-out"), unique("kp-group"), unique("kp-tid")
    create(kafka_emulator, source, 1)
    create(kafka_emulator, sink, 1)
    bootstrap = kafka_emulator.bootstrap_server
    plain = KafkaProducer(bootstrap_servers=bootstrap)
    for i in range(50):
        plain.send(source, b"in-%d" % i, partition=0)
    plain.flush()
    plain.close()
    consumer = KafkaConsumer(source, bootstrap_servers=bootstrap, group_id=group, enable_auto_commit=False,
                             auto_offset_reset="earliest", isolation_level="read_committed")
    producer = KafkaProducer(bootstrap_servers=bootstrap, transactional_id=tid)
    producer.init_transactions()
    tp = TopicPartition(source, 0)
    done = 0
    deadline = time.monotonic() + DEADLINE_S
    while done < 50:
        assert time.monotonic() < deadline
        batch = [m for msgs in consumer.poll(timeout_ms=500, max_records=20).values() for m in msgs]
        if not batch:
            continue
        producer.begin_transaction()
        for m in batch:
            producer.send(sink, b"out-" + m.value[3:], partition=0)
        producer.send_offsets_to_transaction({tp: OffsetAndMetadata(batch[-1].offset + 1, "", -1)},
                                             consumer.group_metadata())
        producer.commit_transaction()
        done += len(batch)
    assert consumer.committed(tp) == 50
    consumer.close()
    producer.close()
    write_sentinels(bootstrap, sink, 1)
    assert sorted(v for _, _, _, v in read_to_sentinels(bootstrap, sink, 1, "read_committed")) == \
        sorted(b"out-%d" % i for i in range(50))


def test_kafka_python_admin_lists_and_describes_transactions(kafka_emulator):
    from kafka import KafkaAdminClient, KafkaProducer
    topic, tid = unique("kp-admin"), unique("kp-admin-tid")
    create(kafka_emulator, topic, 1)
    bootstrap = kafka_emulator.bootstrap_server
    producer = KafkaProducer(bootstrap_servers=bootstrap, transactional_id=tid)
    producer.init_transactions()
    producer.begin_transaction()
    producer.send(topic, b"open", partition=0).get(10)
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        listed = [t for ts in admin.list_transactions().values() for t in ts if t.transactional_id == tid]
        assert [str(t.state.value) for t in listed] == ["Ongoing"]
        described = admin.describe_transactions([tid])[tid]
        assert described.producer_id == listed[0].producer_id
        assert {(tp.topic, tp.partition) for tp in described.topic_partitions} == {(topic, 0)}
        producer.commit_transaction()
        assert str(admin.describe_transactions([tid])[tid].state.value) == "CompleteCommit"
    finally:
        admin.close()
        producer.close()
