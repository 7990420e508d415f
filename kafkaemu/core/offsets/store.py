"""Committed offsets per group/topic/partition, and their retention rule."""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(slots=True)
class CommittedOffset:
    """Never changed once made: the store, pending transactions and snapshots share them. Not
    ``frozen`` only because a frozen dataclass costs a commit four times as much to make (every
    commit makes one)."""
    offset: int
    leader_epoch: int            # -1 when unknown
    metadata: str
    commit_timestamp_ms: int
    expire_timestamp_ms: int | None = None   # only from OffsetCommit v2-4 retention_time_ms / value v1
    # Where its record sits in __consumer_offsets relative to others (Kafka's recordOffset): a
    # committed transaction's offset replaces a plain commit only when written after it.
    record_seq: int = field(default=-1, compare=False)


class OffsetStore:
    def __init__(self) -> None:
        self._by_group: dict[str, dict[str, dict[int, CommittedOffset]]] = {}

    def get(self, group_id: str, topic: str, partition: int) -> CommittedOffset | None:
        return self._by_group.get(group_id, {}).get(topic, {}).get(partition)

    def put(self, group_id: str, topic: str, partition: int, committed: CommittedOffset) -> None:
        self._by_group.setdefault(group_id, {}).setdefault(topic, {})[partition] = committed

    def remove(self, group_id: str, topic: str, partition: int) -> bool:
        topics = self._by_group.get(group_id)
        if not topics or topic not in topics or partition not in topics[topic]:
            return False
        del topics[topic][partition]
        if not topics[topic]:
            del topics[topic]
        if not topics:
            del self._by_group[group_id]
        return True

    def group(self, group_id: str) -> dict[str, dict[int, CommittedOffset]]:
        """topic -> partition -> offset for one group (a live view; do not mutate)."""
        return self._by_group.get(group_id, {})

    def has_group(self, group_id: str) -> bool:
        return group_id in self._by_group

    def remove_group(self, group_id: str) -> list[tuple[str, int]]:
        topics = self._by_group.pop(group_id, {})
        return [(t, p) for t, parts in topics.items() for p in parts]

    def groups(self) -> list[str]:
        return list(self._by_group)

    def snapshot(self) -> dict:
        return {g: {t: dict(ps) for t, ps in ts.items()} for g, ts in self._by_group.items()}


def is_expired(committed: CommittedOffset, base_timestamp_ms: int, now_ms: int, retention_ms: int) -> bool:
    """Kafka's OffsetExpirationConditionImpl: an explicit expire timestamp wins, else base + retention."""
    if committed.expire_timestamp_ms is not None:
        return now_ms >= committed.expire_timestamp_ms
    return now_ms - base_timestamp_ms >= retention_ms
