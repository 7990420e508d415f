"""A KIP-848 consumer group member: its epochs, subscription, reconciliation state and partitions.

Mirrors Kafka's modern/consumer/ConsumerGroupMember and modern/MemberState. Members are immutable:
every change makes a new one (``dataclasses.replace``).
"""
from __future__ import annotations

import base64
import uuid
from dataclasses import dataclass, field
from enum import Enum

from ..modern import Assignment

LEAVE_GROUP_MEMBER_EPOCH = -1
LEAVE_GROUP_STATIC_MEMBER_EPOCH = -2


class MemberState(Enum):
    """A member's reconciliation state (Kafka's MemberState)."""

    STABLE = "stable"                                # holds its assignment at its epoch
    UNREVOKED_PARTITIONS = "unrevoked_partitions"    # must first give up partitions pending revocation
    UNRELEASED_PARTITIONS = "unreleased_partitions"  # waits for partitions other members still own


@dataclass(frozen=True)
class ClassicMeta:
    """What a member using the classic protocol in a consumer group joined with (Kafka's
    ClassicMemberMetadata): its session timeout and its (name, metadata) protocols, in order."""
    session_timeout_ms: int
    protocols: tuple[tuple[str, bytes], ...]


@dataclass(frozen=True)
class ConsumerMember:
    member_id: str
    member_epoch: int = 0
    previous_member_epoch: int = 0
    state: MemberState = MemberState.STABLE
    instance_id: str | None = None
    rack_id: str | None = None
    rebalance_timeout_ms: int = 300000
    client_id: str = ""
    client_host: str = ""
    subscribed_topic_names: tuple[str, ...] = ()
    subscribed_topic_regex: str | None = None
    server_assignor: str | None = None
    assigned: Assignment = field(default_factory=dict)
    pending_revocation: Assignment = field(default_factory=dict)
    classic: ClassicMeta | None = None   # set for a member speaking JoinGroup/SyncGroup/Heartbeat
    # (topic id, partition) -> the epoch each assigned or pending-revocation partition was given at
    # (Kafka 4.4's per-partition assignment epochs, which fence a commit at an older member epoch);
    # a partition without one (a member made otherwise) counts as given at the member's epoch
    assignment_epochs: dict[tuple[bytes, int], int] = field(default_factory=dict)

    @property
    def uses_classic_protocol(self) -> bool:
        return self.classic is not None

    def is_reconciled_to(self, epoch: int) -> bool:
        return self.state is MemberState.STABLE and self.member_epoch == epoch

    def assignment_epoch(self, topic_id: bytes, partition: int) -> int | None:
        """The epoch ``partition`` was given at, assigned or pending revocation; None if neither
        (ConsumerGroupMember.assignmentEpoch, then pendingRevocationEpoch)."""
        if partition in self.assigned.get(topic_id, ()) or partition in self.pending_revocation.get(topic_id, ()):
            return self.assignment_epochs.get((topic_id, partition), self.member_epoch)
        return None


def kafka_uuid_string() -> str:
    """A random id written as Kafka's ``Uuid.toString()`` (URL-safe base64, no padding)."""
    return base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
