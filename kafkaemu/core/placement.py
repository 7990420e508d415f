"""Which __consumer_offsets partition (and so which coordinator) owns a group: Kafka's exact hash."""
from __future__ import annotations

from functools import lru_cache


@lru_cache(maxsize=65536)   # asked on every group request; group ids repeat
def java_string_hash(s: str) -> int:
    """Java's ``String.hashCode`` (over UTF-16 code units, wrapping at 32 bits, signed)."""
    h = 0
    data = s.encode("utf-16-be")
    for i in range(0, len(data), 2):
        h = (31 * h + ((data[i] << 8) | data[i + 1])) & 0xFFFFFFFF
    return h - (1 << 32) if h & 0x80000000 else h


INT32_MIN = -(1 << 31)


def kafka_abs(n: int) -> int:
    """Kafka's ``Utils.abs``: Integer.MIN_VALUE (whose Math.abs is itself) maps to 0."""
    return 0 if n == INT32_MIN else abs(n)


@lru_cache(maxsize=65536)   # asked twice on every group request (its coordinator, its write)
def partition_for(group_id: str, num_partitions: int) -> int:
    return kafka_abs(java_string_hash(group_id)) % num_partitions
