"""Transactional offset commits waiting for their transaction's marker (Kafka's
OffsetMetadataManager.pendingTransactionalOffsets and openTransactionsByGroup).

Offsets are kept per producer id and group until the end marker of that producer's transaction is
written to (or replayed from) the group's __consumer_offsets partition: on commit they become the
committed offsets, on abort they vanish. While any is pending for a partition, OffsetFetch with
``require_stable`` answers UNSTABLE_OFFSET_COMMIT for it.
"""
from __future__ import annotations

from .store import CommittedOffset


class PendingOffsets:
    def __init__(self) -> None:
        # producer id -> group -> topic -> partition -> offset
        self._by_producer: dict[int, dict[str, dict[str, dict[int, CommittedOffset]]]] = {}
        self._open_by_group: dict[str, set[int]] = {}

    def put(self, producer_id: int, group_id: str, topic: str, partition: int, committed: CommittedOffset) -> None:
        self._by_producer.setdefault(producer_id, {}).setdefault(group_id, {}).setdefault(topic, {})[partition] = \
            committed
        self._open_by_group.setdefault(group_id, set()).add(producer_id)

    def take(self, producer_id: int) -> dict[str, dict[str, dict[int, CommittedOffset]]]:
        """Remove and return a producer's pending offsets (its transaction ended)."""
        offsets = self._by_producer.pop(producer_id, {})
        for group_id in offsets:
            open_ = self._open_by_group.get(group_id)
            if open_ is not None:
                open_.discard(producer_id)
                if not open_:
                    del self._open_by_group[group_id]
        return offsets

    def has_open_transactions(self, group_id: str) -> bool:
        return group_id in self._open_by_group

    def open_producers(self, group_id: str) -> set[int]:
        return set(self._open_by_group.get(group_id, ()))

    def is_pending(self, group_id: str, topic: str, partition: int) -> bool:
        for pid in self._open_by_group.get(group_id, ()):
            if partition in self._by_producer.get(pid, {}).get(group_id, {}).get(topic, {}):
                return True
        return False

    def get(self, producer_id: int, group_id: str, topic: str, partition: int) -> CommittedOffset | None:
        return self._by_producer.get(producer_id, {}).get(group_id, {}).get(topic, {}).get(partition)

    def partitions(self, group_id: str) -> set[tuple[str, int]]:
        """Every (topic, partition) with a pending offset of the group."""
        return {(t, p) for pid in self._open_by_group.get(group_id, ())
                for t, parts in self._by_producer.get(pid, {}).get(group_id, {}).items() for p in parts}

    def remove(self, group_id: str, topic: str, partition: int) -> None:
        """A tombstone for the partition removes its pending offsets too (the group keeps its open
        transactions until their markers, as in Kafka)."""
        for pid in self._open_by_group.get(group_id, ()):
            topics = self._by_producer.get(pid, {}).get(group_id, {})
            topics.get(topic, {}).pop(partition, None)
            if topic in topics and not topics[topic]:
                del topics[topic]

    def remove_topic(self, topic: str) -> None:
        for groups in self._by_producer.values():
            for topics in groups.values():
                topics.pop(topic, None)
