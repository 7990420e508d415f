"""Consume throughput by how the data arrived (issue 22), for bench_peer.py's ``consume_order``
workload: a confluent-kafka producer (linger.ms=5, batch.size=1000000, acks=1) writes records round
robin over the topic's partitions, then a consumer ``assign()``s offset 0 of every partition and
loops ``consume(10000, 0.5)`` (kafka-python: ``poll(max_records=10000)``) with
fetch.max.bytes=52428800, until it has every record. Two orders: ``closed``, the producer flushed
and closed before the consumer starts; ``alive``, the producer flushed but still open while the
consumer reads. Rows: 100 B, 1 KB and 10 KB records, 1 and 3 partitions, confluent-kafka with its
defaults (as the issue's script), confluent-kafka with fetch.queue.backoff.ms=10, and kafka-python.

librdkafka stops fetching for fetch.queue.backoff.ms (1000 ms by default) whenever its local queue
holds queued.max.messages.kbytes (64 MiB) or queued.min.messages (100,000) when it wants to fetch
again: a broker that answers faster than the application drains the queue triggers it, and one
such second dominates a run of a few hundred megabytes. The rows with fetch.queue.backoff.ms=10
measure the broker with that pause shortened; the default rows are what the issue's script sees.
"""
from __future__ import annotations

import logging
import os
import time
import uuid

RECORD_SIZES = ((100, 30), (1024, 60), (10_240, 200))   # (record bytes, about the megabytes per run at scale 1)
PARTITIONS = (1, 3)
CONSUMERS = ("confluent-kafka", "confluent-kafka, fetch.queue.backoff.ms=10", "kafka-python")
ORDERS = ("closed", "alive")
TIMEOUT_S = 180
BATCH = 10_000   # records asked of each consume() / poll()


def _produce(bootstrap: str, topic: str, count: int, value: bytes, partitions: int):
    from confluent_kafka import Producer
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5, "batch.size": 1_000_000, "acks": 1,
                         "queue.buffering.max.kbytes": 1_048_576, "queue.buffering.max.messages": 1_000_000})
    for i in range(count):
        while True:
            try:
                producer.produce(topic, value=value, partition=i % partitions)
                break
            except BufferError:
                producer.poll(0.001)
    if producer.flush(120) != 0:
        raise RuntimeError("producer did not flush")
    return producer


class QueueFullCounter(logging.Handler):
    """Counts librdkafka's "Fetch backoff for ...: Local: Queue full" lines (debug=fetch): one per
    partition each time the consumer stops fetching because its local queue is full."""

    def __init__(self):
        super().__init__(logging.DEBUG)
        self.count = 0

    def emit(self, record: logging.LogRecord) -> None:
        if "Queue full" in record.getMessage():
            self.count += 1


def _consume_confluent(bootstrap: str, topic: str, count: int, partitions: int, extra: dict,
                       pauses: list | None = None) -> float:
    from confluent_kafka import Consumer, TopicPartition
    counter = QueueFullCounter()
    logger = logging.getLogger(f"consume_order.{topic}")
    logger.propagate = False
    logger.setLevel(logging.DEBUG)
    logger.addHandler(counter)
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": topic, "enable.auto.commit": False,
                         "fetch.max.bytes": 52_428_800, "debug": "fetch", **extra}, logger=logger)
    consumer.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
    got = 0
    start = time.perf_counter()
    deadline = start + TIMEOUT_S
    while got < count and time.perf_counter() < deadline:
        for m in consumer.consume(BATCH, 0.5):
            if m.error() is None:
                got += 1
    took = time.perf_counter() - start
    consumer.close()
    logger.removeHandler(counter)
    if got < count:
        raise RuntimeError(f"consumed {got} of {count} records in {TIMEOUT_S} s")
    if pauses is not None:
        pauses.append(counter.count)
    return took


def _consume_kafka_python(bootstrap: str, topic: str, count: int, partitions: int) -> float:
    from kafka import KafkaConsumer, TopicPartition
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False, fetch_max_bytes=52_428_800)
    consumer.partitions_for_topic(topic)
    tps = [TopicPartition(topic, p) for p in range(partitions)]
    consumer.assign(tps)
    for tp in tps:
        consumer.seek(tp, 0)
    got = 0
    start = time.perf_counter()
    deadline = start + TIMEOUT_S
    while got < count and time.perf_counter() < deadline:
        for records in consumer.poll(timeout_ms=500, max_records=BATCH).values():
            got += len(records)
    took = time.perf_counter() - start
    consumer.close()
    if got < count:
        raise RuntimeError(f"kafka-python consumed {got} of {count} records in {TIMEOUT_S} s")
    return took


def record_count(megabytes: float, record_size: int) -> int:
    """Records in a run of about ``megabytes``: whole batches of the consume loop's 10,000 (the
    issue's 60,000 records); otherwise the last consume(10000, 0.5) waits out its timeout for
    records that do not exist, and that half second, the same for every broker, is most of a run
    of a few hundred megabytes."""
    return max(BATCH, round(megabytes * 1_000_000 / record_size / BATCH) * BATCH)


def run(bootstrap: str, admin, order: str, consumer: str, record_size: int, megabytes: float,
        partitions: int, cpu_s=None, pauses: list | None = None) -> tuple[float, float | None]:
    """MB/s consumed in one run, and the broker's CPU ms per MB of the consume (``cpu_s``: a
    function giving the broker's CPU seconds so far; None: not measured). A confluent-kafka run
    appends to ``pauses`` how many queue-full fetch backoffs its consumer logged."""
    from confluent_kafka.admin import NewTopic
    topic = f"bench-order-{uuid.uuid4().hex[:8]}"
    admin.create_topics([NewTopic(topic, partitions, 1)])[topic].result(20)
    count = record_count(megabytes, record_size)
    value = (os.urandom(record_size // 4).hex().encode() + b"x" * record_size)[:record_size]
    producer = _produce(bootstrap, topic, count, value, partitions)
    if order == "closed":
        producer = None   # closed: librdkafka's handle is destroyed with its last reference
    cpu = cpu_s() if cpu_s else None
    if consumer == "kafka-python":
        took = _consume_kafka_python(bootstrap, topic, count, partitions)
    else:
        extra = {"fetch.queue.backoff.ms": 10} if "fetch.queue.backoff.ms" in consumer else {}
        took = _consume_confluent(bootstrap, topic, count, partitions, extra, pauses)
    cpu_ms_per_mb = (cpu_s() - cpu) * 1000 / (count * record_size / 1e6) if cpu_s else None
    del producer
    try:
        admin.delete_topics([topic], operation_timeout=10)[topic].result(20)
    except Exception:
        pass   # only memory is at stake
    return count * record_size / 1e6 / took, cpu_ms_per_mb
