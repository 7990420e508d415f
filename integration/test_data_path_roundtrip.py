"""10,000 keyed records with headers through kafkaemu and back, for every compression codec each
real client supports: produced to a 3-partition topic, read back with assign() + seek(); every
record arrives in order per partition with key, value, headers and timestamp intact."""
import asyncio
import time

import pytest

from .data_path_records import COUNT, PARTITIONS, by_partition, create_topic, expected_records, unique_topic

CODECS = ["none", "gzip", "snappy", "lz4", "zstd"]


def _check(expected, got):
    for p in range(PARTITIONS):
        assert [o for o, *_ in got[p]] == list(range(len(expected[p]))), f"partition {p} offsets"
        assert [tuple(r) for _, *r in got[p]] == expected[p], f"partition {p} records"


@pytest.mark.parametrize("codec", CODECS)
def test_confluent_kafka_roundtrip(kafka_emulator, codec):
    from confluent_kafka import Consumer, Producer, TopicPartition
    topic = unique_topic(f"rt-ck-{codec}")
    create_topic(kafka_emulator, topic)
    records = expected_records(codec)
    producer = Producer({"bootstrap.servers": kafka_emulator.bootstrap_server, "compression.type": codec,
                         "linger.ms": 5})
    for p, k, v, h, ts in records:
        producer.produce(topic, key=k, value=v, headers=h, partition=p, timestamp=ts)
        producer.poll(0)
    assert producer.flush(30) == 0

    consumer = Consumer({"bootstrap.servers": kafka_emulator.bootstrap_server, "group.id": topic,
                         "enable.auto.commit": False})
    consumer.assign([TopicPartition(topic, p, 0) for p in range(PARTITIONS)])  # assign at an offset = seek
    got = {p: [] for p in range(PARTITIONS)}
    deadline = time.time() + 60
    while sum(map(len, got.values())) < COUNT and time.time() < deadline:
        for m in consumer.consume(1000, 1.0):
            assert m.error() is None, m.error()
            got[m.partition()].append((m.offset(), m.key(), m.value(), list(m.headers() or []), m.timestamp()[1]))
    # a seek into the middle of a stored batch returns exactly from that offset
    consumer.seek(TopicPartition(topic, 1, 1234))
    middle = None
    while middle is None and time.time() < deadline:
        m = consumer.poll(1.0)
        if m is not None and m.partition() == 1:
            middle = m
    consumer.close()
    _check(by_partition(records), got)
    assert middle.offset() == 1234 and middle.key() == b"key-%d" % (1234 * 3 + 1)


@pytest.mark.parametrize("codec", CODECS)
def test_kafka_python_roundtrip(kafka_emulator, codec):
    from kafka import KafkaConsumer, KafkaProducer, TopicPartition
    topic = unique_topic(f"rt-kp-{codec}")
    create_topic(kafka_emulator, topic)
    records = expected_records(codec)
    producer = KafkaProducer(bootstrap_servers=kafka_emulator.bootstrap_server,
                             compression_type=None if codec == "none" else codec, linger_ms=5)
    for p, k, v, h, ts in records:
        producer.send(topic, key=k, value=v, headers=h, partition=p, timestamp_ms=ts)
    producer.flush(30)
    producer.close()

    consumer = KafkaConsumer(bootstrap_servers=kafka_emulator.bootstrap_server, enable_auto_commit=False)
    tps = [TopicPartition(topic, p) for p in range(PARTITIONS)]
    consumer.assign(tps)
    for tp in tps:
        consumer.seek(tp, 0)
    got = {p: [] for p in range(PARTITIONS)}
    deadline = time.time() + 60
    while sum(map(len, got.values())) < COUNT and time.time() < deadline:
        for tp, msgs in consumer.poll(timeout_ms=1000).items():
            got[tp.partition] += [(m.offset, m.key, m.value, list(m.headers), m.timestamp) for m in msgs]
    consumer.seek(tps[2], 777)
    polled = {}
    while not polled and time.time() < deadline:
        polled = consumer.poll(timeout_ms=1000)
    consumer.close()
    _check(by_partition(records), got)
    first = polled[tps[2]][0]
    assert first.offset == 777 and first.key == b"key-%d" % (777 * 3 + 2)


@pytest.mark.parametrize("codec", CODECS)
def test_aiokafka_roundtrip(kafka_emulator, codec):
    from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
    topic = unique_topic(f"rt-aio-{codec}")
    create_topic(kafka_emulator, topic)
    records = expected_records(codec)

    async def run():
        producer = AIOKafkaProducer(bootstrap_servers=kafka_emulator.bootstrap_server,
                                    compression_type=None if codec == "none" else codec, linger_ms=5)
        await producer.start()
        try:
            futures = [await producer.send(topic, key=k, value=v, headers=h, partition=p, timestamp_ms=ts)
                       for p, k, v, h, ts in records]
            await asyncio.gather(*futures)
        finally:
            await producer.stop()
        consumer = AIOKafkaConsumer(bootstrap_servers=kafka_emulator.bootstrap_server, enable_auto_commit=False)
        await consumer.start()
        got = {p: [] for p in range(PARTITIONS)}
        try:
            tps = [TopicPartition(topic, p) for p in range(PARTITIONS)]
            consumer.assign(tps)
            for tp in tps:
                consumer.seek(tp, 0)
            deadline = time.time() + 60
            while sum(map(len, got.values())) < COUNT and time.time() < deadline:
                for tp, msgs in (await consumer.getmany(timeout_ms=1000)).items():
                    got[tp.partition] += [(m.offset, m.key, m.value, list(m.headers), m.timestamp) for m in msgs]
            consumer.seek(tps[0], 2000)
            polled = {}
            while not polled and time.time() < deadline:
                polled = await consumer.getmany(tps[0], timeout_ms=1000)
        finally:
            await consumer.stop()
        return got, polled[tps[0]][0]

    got, first = asyncio.run(run())
    _check(by_partition(records), got)
    assert first.offset == 2000 and first.key == b"key-%d" % (2000 * 3)
