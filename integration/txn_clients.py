"""Shared by the transaction integration tests: reading a topic to its end under either isolation
level without sleeping. Each test writes a sentinel record last to every partition (after its
transactions complete); a consumer has seen everything visible to it once it has seen every
sentinel, as records are delivered in offset order within a partition."""
from __future__ import annotations

import time
import uuid

SENTINEL = b"__end__"
DEADLINE_S = 60


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def write_sentinels(bootstrap: str, topic: str, partitions: int) -> None:
    """A plain (non-transactional) record SENTINEL at the end of every partition."""
    from confluent_kafka import Producer
    p = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0})
    for partition in range(partitions):
        p.produce(topic, value=SENTINEL, partition=partition)
    assert p.flush(30) == 0


def read_to_sentinels(bootstrap: str, topic: str, partitions: int, isolation: str) -> list:
    """Every record before the sentinels as (partition, offset, key, value), per partition in offset
    order, read by a confluent-kafka consumer with ``isolation.level`` = ``isolation``."""
    from confluent_kafka import Consumer, TopicPartition
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": unique("reader"), "enable.auto.commit": False,
                  "isolation.level": isolation, "auto.offset.reset": "earliest"})
    c.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
    seen, done = [], set()
    deadline = time.monotonic() + DEADLINE_S
    try:
        while len(done) < partitions:
            assert time.monotonic() < deadline, f"sentinels of {sorted(set(range(partitions)) - done)} not read"
            for m in c.consume(500, 1.0):
                assert m.error() is None, m.error()
                if m.value() == SENTINEL:
                    done.add(m.partition())
                else:
                    assert m.partition() not in done, "a record after the sentinel"
                    seen.append((m.partition(), m.offset(), m.key(), m.value()))
    finally:
        c.close()
    return seen
