"""The one Group interface both kinds of group implement (Apache Kafka's ``Group``), the one error
they raise, and what the offsets manager asks of whoever owns the groups.

The offsets manager (offsets/manager.py) and the coordinator work on any group through this
interface only: how offsets are validated, which topics a group is subscribed to, from when its
offsets age, whether it may be deleted, and the records that delete it.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from enum import Enum
from typing import Callable, Protocol

from ..protocol.errors import ErrorCode

Record = tuple[bytes, bytes | None]            # one __consumer_offsets record: key, value or None


class Committed(Protocol):
    """A committed offset as retention sees it (offsets/store.py's CommittedOffset)."""
    commit_timestamp_ms: int


ExpirationBase = Callable[[Committed], int]    # offset -> the time its retention counts from
PartitionCheck = Callable[[str, int], ErrorCode]   # (topic, partition) -> NONE or the partition's error


class GroupType(Enum):
    CLASSIC = "classic"
    CONSUMER = "consumer"
    SHARE = "share"
    STREAMS = "streams"

    # Members are singletons, equal only to themselves: hashed by identity, as Enum's own hash (of
    # the name, in Python code) would cost every lookup of a group's kind, on every group request.
    __hash__ = object.__hash__


class GroupError(Exception):
    """A request-level error: the Kafka error code to answer with and, where Kafka words one, its message."""

    def __init__(self, code: ErrorCode, message: str | None = None):
        super().__init__(message or code.name)
        self.code = code
        self.message = message


def by_commit_timestamp(committed: Committed) -> int:
    return committed.commit_timestamp_ms


class GroupStateEnum(Enum):
    """A kind of group's states: each ``value`` is Kafka's state name."""

    __hash__ = object.__hash__   # as GroupType's: a state's answers are looked up on every request

    @property
    def lower_name(self) -> str:
        return self.value.lower()


class Group(ABC):
    """Every group has ``group_id``, ``type`` (GroupType), ``protocol_type`` (str or None) and ``state``
    (a GroupStateEnum)."""

    group_id: str
    type: GroupType

    @abstractmethod
    def is_empty(self) -> bool: ...

    @abstractmethod
    def validate_offset_commit(self, member_id: str, instance_id: str | None, generation_or_epoch: int,
                               api_version: int, is_transactional: bool = False) -> PartitionCheck | None:
        """Raise GroupError unless this member (generation id or member epoch) may commit offsets
        (``is_transactional``: with TxnOffsetCommit, which older clients send without a member);
        return a check of each committed partition when the group has one (Kafka's
        CommitPartitionValidator), None when every partition may be committed."""

    @abstractmethod
    def validate_offset_fetch(self, member_id: str | None, member_epoch: int) -> None:
        """Raise GroupError unless offsets may be fetched (member id and epoch: OffsetFetch v9+)."""

    @abstractmethod
    def validate_offset_delete(self) -> None:
        """Raise GroupError unless OffsetDelete may delete this group's offsets at all."""

    @abstractmethod
    def validate_delete_group(self) -> None:
        """Raise GroupError unless DeleteGroups may delete this group."""

    @abstractmethod
    def is_subscribed_to_topic(self, topic: str) -> bool:
        """Whether the group consumes ``topic`` now: its offsets neither expire nor may be deleted."""

    @abstractmethod
    def offset_expiration_base(self) -> ExpirationBase | None:
        """From when each offset's retention counts, or None while the group's offsets do not expire."""

    @abstractmethod
    def tombstone_records(self) -> list[Record]:
        """The records that delete this group from __consumer_offsets (its offsets apart)."""

    def should_expire(self) -> bool:
        """Whether an Empty group without offsets is deleted by offset retention (share groups are not)."""
        return True

    def snapshot(self) -> object:
        """Everything ``restore`` needs to put this group back as it is now (the runtime takes one
        before a write and restores it if the write's records cannot be appended). A kind of group
        whose changes write no records here (share groups) has nothing a failed append could leave
        half-done: the default keeps nothing."""
        return None

    def restore(self, snapshot: object) -> None:
        """Become exactly what the group was when ``snapshot`` was taken."""


class GroupDirectory(Protocol):
    """What the offsets manager asks of the coordinator, which knows every kind of group."""

    def create_simple_group(self, group_id: str) -> Group:
        """A group for offsets only (no members), made on an accepted commit or a replayed offset."""

    def offset_committed(self, group: Group, member_id: str) -> None:
        """A member committed offsets (a classic member's commit keeps its session alive)."""
