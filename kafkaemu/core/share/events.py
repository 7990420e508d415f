"""What the group coordinator tells the share data plane about share groups (and nothing more): the
narrow interface between Kafka's two owners, the group coordinator and SharePartitionManager.

The share-group manager (manager.py) sends each event once the group write that decided it is in
the log (never, if that write fails), with the coordinator's time. The data plane
(partitions.py ``SharePartitionManager``) receives them. An event that initializes or deletes share
state raises when that state cannot be written (Kafka's persister failing): the group records the
partitions as not initialized, or still deleting, and tries again later.
"""
from __future__ import annotations

from typing import Iterable, Protocol


class ShareGroupEvents(Protocol):
    def assigned(self, now_ms: int, group_id: str, partitions: Iterable[tuple[bytes, int]]) -> None:
        """Partitions newly assigned to the group: their share state starts (initializeShareGroupState)."""

    def offsets_altered(self, now_ms: int, group_id: str, topic_id: bytes, partition: int, start: int) -> None:
        """AlterShareGroupOffsets: the share partition starts over at ``start``."""

    def offsets_deleted(self, now_ms: int, group_id: str, topic_id: bytes) -> None:
        """DeleteShareGroupOffsets: the group's share state of the topic goes (deleteShareGroupState)."""

    def member_left(self, now_ms: int, group_id: str, member_id: str) -> None:
        """A member left or was removed: the records it holds outside its share sessions are released."""

    def member_expired(self, now_ms: int, group_id: str, member_id: str) -> None:
        """A member's group session lapsed: its share sessions go too (it will not close them), and
        what it holds is released."""

    def group_deleted(self, now_ms: int, group_id: str) -> None:
        """The group was deleted: its share state goes."""
