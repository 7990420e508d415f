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
import re
import statistics
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
    """librdkafka's own ``debug=fetch`` log, counted: its "Fetch backoff for ...: Local: Queue full"
    lines (one per partition each time the consumer stops fetching because its local queue is
    full) and its "Enqueue N message(s)" lines (one per partition of each Fetch answer)."""

    def __init__(self):
        super().__init__(logging.DEBUG)
        self.count = 0
        self.enqueued: list[int] = []

    def emit(self, record: logging.LogRecord) -> None:
        text = record.getMessage()
        if "Queue full" in text:
            self.count += 1
        elif "Enqueue " in text:
            found = _ENQUEUE.search(text)
            if found:
                self.enqueued.append(int(found.group(1)))

    def evidence(self) -> dict:
        return {"queue_full": self.count, "fetch_answers": len(self.enqueued),
                "messages_per_answer": statistics.median(self.enqueued) if self.enqueued else 0}


_ENQUEUE = re.compile(r"Enqueue (\d+) message")
LONG_WAIT_S = 0.4   # kafka-python's fetch_max_wait_ms is 500: a Fetch the broker held for it


class FetcherLog(logging.Handler):
    """kafka-python's own DEBUG log of its Fetcher, counted: "Sending FetchRequest" (one Fetch in
    flight per broker) and "Preparing to read N bytes of data for partition" (a partition's data
    in an answer). A Fetch followed by the next one LONG_WAIT_S or more later with no data read
    between was held by the broker for the client's fetch_max_wait_ms (its partitions had nothing)."""

    def __init__(self):
        super().__init__(logging.DEBUG)
        self.sent: list[float] = []
        self.read_bytes: list[int] = []
        self.long_waits = 0
        self._read_since_send = False

    def emit(self, record: logging.LogRecord) -> None:
        text = record.msg if isinstance(record.msg, str) else ""
        if text.startswith("Sending FetchRequest"):
            if self.sent and not self._read_since_send and record.created - self.sent[-1] >= LONG_WAIT_S:
                self.long_waits += 1
            self.sent.append(record.created)
            self._read_since_send = False
        elif text.startswith("Preparing to read"):
            self._read_since_send = True
            self.read_bytes.append(int(record.args[0]))

    def evidence(self) -> dict:
        return {"fetches": len(self.sent), "long_waits": self.long_waits,
                "bytes_per_partition": statistics.median(self.read_bytes) if self.read_bytes else 0}


def cpu_wait_ns() -> int:
    """Nanoseconds this process's threads have been runnable but waiting for a CPU (Linux's
    /proc/self/task/*/schedstat; 0 elsewhere): the machine's load, not the broker."""
    total = 0
    try:
        tasks = os.listdir("/proc/self/task")
    except OSError:
        return 0
    for task in tasks:
        try:
            with open(f"/proc/self/task/{task}/schedstat") as f:
                total += int(f.read().split()[1])
        except (OSError, ValueError, IndexError):
            pass
    return total


def describe(evidence: dict) -> str:
    """One run's client log, said shortly (bench_peer prints it beside a row behind Kafka)."""
    parts = [f"{evidence['mb_s']:.0f} MB/s",
             f"client on a CPU {evidence['client_cpu'] * 100:.0f}%, waiting for one {evidence['cpu_wait'] * 100:.0f}%"]
    if "fetch_answers" in evidence:
        parts.append(f"{evidence['fetch_answers']} Fetch answers of {evidence['messages_per_answer']:,.0f} messages "
                     f"(median), {evidence['queue_full']} queue-full backoff lines")
    if "fetches" in evidence:
        parts.append(f"{evidence['fetches']} Fetches, {evidence['long_waits']} held ~0.5 s empty")
    return ", ".join(parts)


def _consume_confluent(bootstrap: str, topic: str, count: int, partitions: int, extra: dict,
                       pauses: list | None = None, evidence: dict | None = None) -> float:
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
    cpu = time.process_time()
    waited = cpu_wait_ns()
    start = time.perf_counter()
    deadline = start + TIMEOUT_S
    while got < count and time.perf_counter() < deadline:
        for m in consumer.consume(BATCH, 0.5):
            if m.error() is None:
                got += 1
    took = time.perf_counter() - start
    client_cpu = (time.process_time() - cpu) / took   # the process's every thread
    cpu_wait = (cpu_wait_ns() - waited) / 1e9 / took
    consumer.close()
    logger.removeHandler(counter)
    if got < count:
        raise RuntimeError(f"consumed {got} of {count} records in {TIMEOUT_S} s")
    if pauses is not None:
        pauses.append(counter.count)
    if evidence is not None:
        evidence.update(counter.evidence(), client_cpu=client_cpu, cpu_wait=cpu_wait)
    return took


def _consume_kafka_python(bootstrap: str, topic: str, count: int, partitions: int,
                          evidence: dict | None = None) -> float:
    from kafka import KafkaConsumer, TopicPartition
    fetcher_log = logging.getLogger("kafka.consumer.fetcher")
    handler = FetcherLog()
    saved = fetcher_log.level, fetcher_log.propagate
    fetcher_log.setLevel(logging.DEBUG)
    fetcher_log.propagate = False
    fetcher_log.addHandler(handler)
    try:
        consumer = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False, fetch_max_bytes=52_428_800)
        consumer.partitions_for_topic(topic)
        tps = [TopicPartition(topic, p) for p in range(partitions)]
        consumer.assign(tps)
        for tp in tps:
            consumer.seek(tp, 0)
        got = 0
        cpu = time.process_time()
        waited = cpu_wait_ns()
        start = time.perf_counter()
        deadline = start + TIMEOUT_S
        while got < count and time.perf_counter() < deadline:
            for records in consumer.poll(timeout_ms=500, max_records=BATCH).values():
                got += len(records)
        took = time.perf_counter() - start
        client_cpu = (time.process_time() - cpu) / took   # the process's every thread
        cpu_wait = (cpu_wait_ns() - waited) / 1e9 / took
    finally:
        fetcher_log.removeHandler(handler)
        fetcher_log.setLevel(saved[0])
        fetcher_log.propagate = saved[1]
    consumer.close()
    if got < count:
        raise RuntimeError(f"kafka-python consumed {got} of {count} records in {TIMEOUT_S} s")
    if evidence is not None:
        evidence.update(handler.evidence(), client_cpu=client_cpu, cpu_wait=cpu_wait)
    return took


def record_count(megabytes: float, record_size: int) -> int:
    """Records in a run of about ``megabytes``: whole batches of the consume loop's 10,000 (the
    issue's 60,000 records); otherwise the last consume(10000, 0.5) waits out its timeout for
    records that do not exist, and that half second, the same for every broker, is most of a run
    of a few hundred megabytes."""
    return max(BATCH, round(megabytes * 1_000_000 / record_size / BATCH) * BATCH)


def run(bootstrap: str, admin, order: str, consumer: str, record_size: int, megabytes: float,
        partitions: int, cpu_s=None, pauses: list | None = None,
        evidence: list | None = None) -> tuple[float, float | None]:
    """MB/s consumed in one run, and the broker's CPU ms per MB of the consume (``cpu_s``: a
    function giving the broker's CPU seconds so far; None: not measured). A confluent-kafka run
    appends to ``pauses`` how many queue-full fetch backoffs its consumer logged. ``evidence``
    gets the run's client log, counted (QueueFullCounter, FetcherLog), its MB/s and the share of
    a core the consuming process used."""
    from confluent_kafka.admin import NewTopic
    topic = f"bench-order-{uuid.uuid4().hex[:8]}"
    admin.create_topics([NewTopic(topic, partitions, 1)])[topic].result(20)
    count = record_count(megabytes, record_size)
    value = (os.urandom(record_size // 4).hex().encode() + b"x" * record_size)[:record_size]
    producer = _produce(bootstrap, topic, count, value, partitions)
    if order == "closed":
        producer = None   # closed: librdkafka's handle is destroyed with its last reference
    cpu = cpu_s() if cpu_s else None
    seen: dict = {}
    if consumer == "kafka-python":
        took = _consume_kafka_python(bootstrap, topic, count, partitions, seen)
    else:
        extra = {"fetch.queue.backoff.ms": 10} if "fetch.queue.backoff.ms" in consumer else {}
        took = _consume_confluent(bootstrap, topic, count, partitions, extra, pauses, seen)
    cpu_ms_per_mb = (cpu_s() - cpu) * 1000 / (count * record_size / 1e6) if cpu_s else None
    if evidence is not None:
        evidence.append({**seen, "mb_s": count * record_size / 1e6 / took})
    del producer
    try:
        admin.delete_topics([topic], operation_timeout=10)[topic].result(20)
    except Exception:
        pass   # only memory is at stake
    return count * record_size / 1e6 / took, cpu_ms_per_mb
