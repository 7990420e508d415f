"""A KIP-848 consumer group: members with epochs, the group epoch, the target assignment.

Mirrors Kafka's modern/consumer/ConsumerGroup, with its side of the Group interface (offset checks
by member epoch, subscriptions, expiration, deletion). The state is derived, never set: it follows
from the epochs and the members' reconciliation (``ConsumerGroup.state``).
"""
from __future__ import annotations


from ...protocol.errors import ErrorCode
from ..group_api import GroupError, GroupStateEnum, GroupType
from ..modern import ModernGroup, TopicMeta
from . import records
from .member import ConsumerMember

E = ErrorCode


class ConsumerGroupState(GroupStateEnum):
    """State of a consumer (KIP-848) group, derived after every change, and how it answers.

    EMPTY — no members; may hold offsets. Heartbeat with epoch 0 joins (group epoch +1 => ASSIGNING
        then RECONCILING/STABLE within the same request); OffsetCommit only from non-members
        (epoch < 0); DeleteGroups allowed.
    ASSIGNING — the group epoch is ahead of the target assignment epoch (never seen from outside:
        kafkaemu computes the new target assignment in the heartbeat that bumped the epoch).
    RECONCILING — some member is not yet at the target assignment epoch or still revokes/awaits
        partitions. Heartbeats drive each member's reconciliation; commits need the member's epoch.
    STABLE — every member holds its target assignment at the target epoch.
    DEAD — deleted; answers as an unknown group.
    Heartbeat errors in every live state: UNKNOWN_MEMBER_ID, FENCED_MEMBER_EPOCH, FENCED_INSTANCE_ID,
    UNRELEASED_INSTANCE_ID as Kafka. DeleteGroups: NON_EMPTY_GROUP unless EMPTY.
    """

    EMPTY = "Empty"
    ASSIGNING = "Assigning"
    RECONCILING = "Reconciling"
    STABLE = "Stable"
    DEAD = "Dead"


class ConsumerGroup(ModernGroup, group_type=GroupType.CONSUMER, records=records, member=ConsumerMember):
    """``members``: ConsumerMember by id (static ones also by instance id); ``target``: an Assignment
    by member id; the subscribed topics' metadata, and what regexes resolve to."""

    def __init__(self, group_id: str, now_ms: int) -> None:
        super().__init__(group_id, now_ms)
        self.subscription_metadata: dict[str, TopicMeta] = {}
        self.regexes = None   # RegexResolutions while authorization is on (regex_resolution.py)
        self.state_timestamp_ms = now_ms

    def state_changed(self, now_ms: int) -> None:
        self.state_timestamp_ms = now_ms

    # --- derived state ----------------------------------------------------------------
    @property
    def state(self) -> ConsumerGroupState:
        if self.dead:
            return ConsumerGroupState.DEAD
        if not self.members:
            return ConsumerGroupState.EMPTY
        if self.group_epoch > self.assignment_epoch:
            return ConsumerGroupState.ASSIGNING
        if any(not m.is_reconciled_to(self.assignment_epoch) for m in self.members.values()):
            return ConsumerGroupState.RECONCILING
        return ConsumerGroupState.STABLE

    def partition_epochs(self, excluding: str | None = None) -> dict[tuple[bytes, int], int]:
        """(topic id, partition) -> epoch of the member that still owns it (assigned or being revoked)."""
        epochs: dict[tuple[bytes, int], int] = {}
        for mid, m in self.members.items():
            if mid == excluding:
                continue
            for assignment in (m.assigned, m.pending_revocation):
                for tid, parts in assignment.items():
                    for p in parts:
                        epochs[(tid, p)] = m.member_epoch
        return epochs

    def preferred_assignor(self) -> str | None:
        """The server assignor most members asked for (ties: first counted), as Kafka."""
        counts: dict[str, int] = {}
        for m in self.members.values():
            if m.server_assignor is not None:
                counts[m.server_assignor] = counts.get(m.server_assignor, 0) + 1
        if not counts:
            return None
        return max(counts.items(), key=lambda kv: kv[1])[0]

    def is_subscribed_to_topic(self, topic: str) -> bool:
        return topic in self.subscription_metadata

    # --- the Group interface: offsets and deletion --------------------------------------------
    def validate_offset_commit(self, member_id: str, instance_id: str | None, member_epoch: int,
                               api_version: int, is_transactional: bool = False) -> PartitionCheck | None:
        """ConsumerGroup.validateOffsetCommit: the member's own epoch commits anything; an older one
        is checked partition by partition."""
        if member_epoch < 0 and not self.members:
            return None  # admin client or a consumer without group management
        if is_transactional and member_epoch == -1 and not member_id and instance_id is None:
            return None  # a transactional producer committing without the group's member (TxnOffsetCommit < v3)
        member = self.members.get(member_id)
        if member is None:
            raise GroupError(E.UNKNOWN_MEMBER_ID)
        if not is_transactional and api_version < 9 and not member.uses_classic_protocol:
            raise GroupError(E.UNSUPPORTED_VERSION)   # consumer-protocol members commit with v9+
        if member_epoch == member.member_epoch:
            return None
        # a member speaking the classic protocol knows its epoch as its generation
        refused = E.ILLEGAL_GENERATION if member.uses_classic_protocol else E.STALE_MEMBER_EPOCH
        if member_epoch > member.member_epoch:
            raise GroupError(refused)
        return self._assignment_epoch_check(member, member_epoch, refused)

    def _assignment_epoch_check(self, member: ConsumerMember, received: int, refused: ErrorCode) -> PartitionCheck:
        """ConsumerGroup.createAssignmentEpochValidator (Kafka 4.4): a commit at an older member
        epoch may commit a partition the member holds (assigned or pending revocation) since that
        epoch or before; any other is ``refused``."""
        topics = self.subscription_metadata

        def check(topic: str, partition: int) -> ErrorCode:
            meta = topics.get(topic)
            epoch = member.assignment_epoch(meta.topic_id, partition) if meta is not None else None
            return E.NONE if epoch is not None and received >= epoch else refused
        return check

    def validate_offset_fetch(self, member_id: str | None, member_epoch: int) -> None:
        if member_id is None and member_epoch < 0:
            return
        member = self.members.get(member_id or "")
        if member is None:
            raise GroupError(E.UNKNOWN_MEMBER_ID)
        _validate_member_epoch(member_epoch, member)

    # Read and set one by one (as ClassicGroup: touching ``__dict__`` slows every later read), in
    # straight lines: every KIP-848 heartbeat takes a snapshot (issue 16's cost, BENCHMARKS.md).
    def snapshot(self) -> tuple:
        """Members are immutable: copying the containers that change in place is enough."""
        return (self.group_epoch, self.assignment_epoch, self.created_ms, self.state_timestamp_ms, self.dead,
                self.written, dict(self.members), dict(self.static_members), dict(self.target),
                dict(self.subscription_metadata), self.regexes)

    def restore(self, snapshot: tuple) -> None:
        (self.group_epoch, self.assignment_epoch, self.created_ms, self.state_timestamp_ms, self.dead,
         self.written, self.members, self.static_members, self.target, self.subscription_metadata,
         self.regexes) = snapshot


def _validate_member_epoch(received: int, member: ConsumerMember) -> None:
    if received != member.member_epoch:
        # a member speaking the classic protocol knows its epoch as its generation
        raise GroupError(E.ILLEGAL_GENERATION if member.uses_classic_protocol else E.STALE_MEMBER_EPOCH)
