"""The base of consumer, share and streams groups (Kafka's modern/ModernGroup): the group and
assignment epochs, the members and their target assignment, what was last written for the group,
and the parts of the Group interface that are the same for the three kinds.

The state is each kind's own (derived from the members, never set); the members are immutable
values that a change replaces.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from ...protocol.errors import ErrorCode
from ..group_api import ExpirationBase, Group, GroupError, Record, by_commit_timestamp

E = ErrorCode
Assignment = dict[bytes, frozenset[int]]   # topic id -> partitions


@dataclass(frozen=True)
class TopicMeta:
    name: str
    topic_id: bytes
    num_partitions: int


def assignment_of(partitions: Iterable[tuple[bytes, int]]) -> Assignment:
    """(topic id, partition) pairs as an Assignment."""
    by_topic: dict[bytes, set[int]] = {}
    for tid, p in partitions:
        by_topic.setdefault(tid, set()).add(p)
    return {tid: frozenset(ps) for tid, ps in by_topic.items()}


class ModernGroup(Group):
    """A kind's group class declares itself with ``class XGroup(ModernGroup, group_type=...,
    records=..., member=...)``: its GroupType (the protocol type is its name), its records module
    (``tombstones``, RecordDiff, KEY_VERSIONS) and its immutable member class (made from a member id)."""
    records = None
    member_class: type

    def __init_subclass__(cls, group_type=None, records=None, member=None, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        cls.type, cls.records, cls.member_class = group_type, records, member

    @property
    def protocol_type(self) -> str:
        return self.type.value

    def __init__(self, group_id: str, now_ms: int) -> None:
        self.group_id = group_id
        # as Kafka's ModernGroup: a new group is at epoch 1, its target assignment at epoch 1
        # (TargetAssignmentMetadata.INITIAL); the first member to join moves it to 2
        self.group_epoch = 1
        self.assignment_epoch = 1
        self.members: dict = {}      # member id -> the kind's immutable member
        self.static_members: dict[str, str] = {}   # instance id -> member id (static members)
        self.target: dict = {}       # member id -> its target assignment
        self.created_ms = now_ms
        self.dead = False
        self.written: dict = {}      # what its records in __consumer_offsets say (record_format.RecordDiff)

    # --- members, static ones also by instance id (share members have no instance id) --------
    def static_member(self, instance_id: str | None):
        if instance_id is None:
            return None
        member_id = self.static_members.get(instance_id)
        return self.members.get(member_id) if member_id is not None else None

    def put_member(self, member) -> None:
        self.members[member.member_id] = member
        instance_id = getattr(member, "instance_id", None)
        if instance_id is not None:
            self.static_members[instance_id] = member.member_id

    def remove_member(self, member_id: str):
        """The member and its target go; returns the member (None if it was not there)."""
        self.target.pop(member_id, None)
        member = self.members.pop(member_id, None)
        instance_id = getattr(member, "instance_id", None)
        if instance_id is not None and self.static_members.get(instance_id) == member_id:
            del self.static_members[instance_id]
        return member

    def replace_member(self, old_id: str, new) -> None:
        """A static member rejoining under a new member id takes the old one's place and target."""
        target = self.target.get(old_id)
        self.remove_member(old_id)
        self.put_member(new)
        if target is not None:
            self.target[new.member_id] = target

    def state_changed(self, now_ms: int) -> None:
        """Its state has just changed (a consumer group notes when)."""

    # --- the Group interface ---------------------------------------------------------------
    def is_empty(self) -> bool:
        return not self.members

    def validate_delete_group(self) -> None:
        if self.dead:
            raise GroupError(E.GROUP_ID_NOT_FOUND)
        if self.members:
            raise GroupError(E.NON_EMPTY_GROUP)

    def validate_offset_delete(self) -> None:
        if self.dead:
            raise GroupError(E.GROUP_ID_NOT_FOUND)

    def offset_expiration_base(self) -> ExpirationBase | None:
        return by_commit_timestamp

    def tombstone_records(self) -> list[Record]:
        return self.records.tombstones(self)
