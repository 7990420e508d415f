"""The records the data-path integration tests produce and expect back, shared by every client."""
import time
import uuid

COUNT = 10_000
PARTITIONS = 3


def unique_topic(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def create_topic(emulator, name: str, partitions: int = PARTITIONS, configs: dict | None = None) -> None:
    emulator.call(lambda broker: broker.topics.create(name, partitions, configs or {}))


def expected_records(codec: str, count: int = COUNT, base_ts: int | None = None):
    """[(partition, key, value, headers, timestamp_ms)]; record i goes to partition i % 3."""
    base_ts = base_ts if base_ts is not None else int(time.time() * 1000) - 60_000
    return [(i % PARTITIONS, b"key-%d" % i, (b"value-%d-" % i) * 8, [("idx", b"%d" % i), ("codec", codec.encode())],
             base_ts + i) for i in range(count)]


def by_partition(records):
    """Expected (key, value, headers, timestamp) sequences per partition, in produce order."""
    out = {p: [] for p in range(PARTITIONS)}
    for p, k, v, h, ts in records:
        out[p].append((k, v, h, ts))
    return out
