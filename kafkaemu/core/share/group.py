"""A share group (KIP-932): members with epochs, the group epoch, the target assignment, and its side
of the Group interface.

Mirrors Kafka's modern/share/ShareGroup and ShareGroupMember. A share member has no reconciliation:
several members may consume one partition, so nothing is revoked before it is reassigned and a
member takes its target assignment, at the target epoch, on its next heartbeat. The state follows
from the members: Empty without any, else Stable (Dead once deleted).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ...protocol.errors import ErrorCode
from ..group_api import ExpirationBase, GroupError, GroupStateEnum, GroupType
from ..modern import Assignment, ModernGroup, TopicMeta
from . import records
from .state_metadata import StateMetadata

E = ErrorCode


class ShareGroupState(GroupStateEnum):
    EMPTY = "Empty"
    STABLE = "Stable"
    DEAD = "Dead"


@dataclass(frozen=True)
class ShareMember:
    """Immutable, as Kafka's ShareGroupMember: every change makes a new one."""
    member_id: str
    member_epoch: int = 0
    previous_member_epoch: int = 0
    rack_id: str | None = None
    client_id: str = ""
    client_host: str = ""
    subscribed_topic_names: tuple[str, ...] = ()
    assigned: Assignment = field(default_factory=dict)


class ShareGroup(ModernGroup, group_type=GroupType.SHARE, records=records, member=ShareMember):
    """``members``: ShareMember by id; ``target``: an Assignment by member id; ``state_metadata``:
    which share partitions are initialized (ShareGroupStatePartitionMetadata)."""

    def __init__(self, group_id: str, now_ms: int) -> None:
        super().__init__(group_id, now_ms)
        self.subscription_metadata: dict[str, TopicMeta] = {}
        # its ShareGroupStatePartitionMetadata; None until it has one
        self.state_metadata: StateMetadata | None = None

    @property
    def state(self) -> ShareGroupState:
        if self.dead:
            return ShareGroupState.DEAD
        return ShareGroupState.STABLE if self.members else ShareGroupState.EMPTY

    def subscribed_topics(self) -> set[str]:
        return {t for m in self.members.values() for t in m.subscribed_topic_names}

    def is_subscribed_to_topic(self, topic: str) -> bool:
        return topic in self.subscribed_topics()

    # --- the Group interface: share groups keep no offsets in __consumer_offsets (only their own records) ---
    def should_expire(self) -> bool:
        return False

    def _not_a_consumer_group(self) -> GroupError:
        return GroupError(E.GROUP_ID_NOT_FOUND, f"Group {self.group_id} is not a consumer group.")

    def validate_offset_commit(self, member_id: str, instance_id: str | None, generation_or_epoch: int,
                               api_version: int, is_transactional: bool = False) -> None:
        raise self._not_a_consumer_group()

    def validate_offset_fetch(self, member_id: str | None, member_epoch: int) -> None:
        raise self._not_a_consumer_group()

    def validate_offset_delete(self) -> None:
        raise self._not_a_consumer_group()

    def offset_expiration_base(self) -> ExpirationBase | None:
        return None

    def snapshot(self) -> tuple:
        """Members are immutable: copying the containers that change in place is enough."""
        return (self.group_epoch, self.assignment_epoch, self.created_ms, self.dead, self.written,
                dict(self.members), dict(self.target), dict(self.subscription_metadata), self.state_metadata)

    def restore(self, snapshot: tuple) -> None:
        (self.group_epoch, self.assignment_epoch, self.created_ms, self.dead, self.written,
         self.members, self.target, self.subscription_metadata, self.state_metadata) = snapshot
