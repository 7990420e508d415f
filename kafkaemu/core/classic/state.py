"""The classic group states, with their valid predecessors as data (as Kafka's ClassicGroupState)."""
from __future__ import annotations

from ..group_api import GroupStateEnum


class IllegalStateTransition(Exception):
    pass


class ClassicGroupState(GroupStateEnum):
    """State of a classic consumer group, and how each state answers each request.

    EMPTY — no members; the group may still hold offsets (simple consumers commit with generation -1).
        JoinGroup: accepted from new members (=> PREPARING_REBALANCE); a non-empty unknown member id
        gets UNKNOWN_MEMBER_ID. SyncGroup, Heartbeat, LeaveGroup: UNKNOWN_MEMBER_ID. OffsetCommit:
        only standalone commits (generation -1, empty member id), else UNKNOWN_MEMBER_ID /
        ILLEGAL_GENERATION. OffsetFetch: allowed. DeleteGroups/OffsetDelete: allowed.
        Transitions: first member joins => PREPARING_REBALANCE; offsets all expired or group deleted => DEAD.
    PREPARING_REBALANCE — waiting for every known member to (re)join.
        JoinGroup: parked until all members joined or the rebalance timeout (the initial delay when
        coming from EMPTY). SyncGroup, Heartbeat: REBALANCE_IN_PROGRESS. LeaveGroup: removes the member.
        OffsetCommit: accepted from members carrying the current generation. OffsetFetch: allowed.
        DeleteGroups: NON_EMPTY_GROUP. OffsetDelete: NON_EMPTY_GROUP unless a consumer group, where
        subscribed topics get GROUP_SUBSCRIBED_TO_TOPIC.
        Transitions: join phase completes with members => COMPLETING_REBALANCE; without => EMPTY.
    COMPLETING_REBALANCE — generation bumped, waiting for the leader's assignment.
        JoinGroup: same metadata => current generation answer; changed metadata or new member =>
        PREPARING_REBALANCE. SyncGroup: followers parked until the leader syncs, then all get their
        assignment (=> STABLE). Heartbeat: accepted. OffsetCommit: REBALANCE_IN_PROGRESS.
        OffsetFetch: allowed. DeleteGroups: NON_EMPTY_GROUP.
        Transitions: leader SyncGroup => STABLE; join/leave/failure => PREPARING_REBALANCE.
    STABLE — every member holds its assignment.
        JoinGroup: follower with same metadata gets the current generation; leader, changed metadata
        or a new member => PREPARING_REBALANCE; a restarting static member takes its old slot without a
        rebalance. SyncGroup: the member's current assignment. Heartbeat: accepted. OffsetCommit:
        accepted for the current generation. OffsetFetch: allowed. DeleteGroups: NON_EMPTY_GROUP.
        Transitions: join/leave/heartbeat expiry => PREPARING_REBALANCE.
    DEAD — the group was deleted or expired; it answers like an unknown group.
        JoinGroup, SyncGroup, Heartbeat, LeaveGroup, OffsetCommit: COORDINATOR_NOT_AVAILABLE (as Kafka
        answers a group being unloaded); OffsetFetch: no offsets; DescribeGroups: state "Dead".
    """

    EMPTY = "Empty"
    PREPARING_REBALANCE = "PreparingRebalance"
    COMPLETING_REBALANCE = "CompletingRebalance"
    STABLE = "Stable"
    DEAD = "Dead"

    @property
    def valid_previous_states(self) -> frozenset["ClassicGroupState"]:
        return _VALID_PREVIOUS[self]

    def can_follow(self, previous: "ClassicGroupState") -> bool:
        return previous in _VALID_PREVIOUS[self]


_S = ClassicGroupState
_VALID_PREVIOUS: dict[ClassicGroupState, frozenset[ClassicGroupState]] = {
    _S.EMPTY: frozenset({_S.PREPARING_REBALANCE}),
    _S.PREPARING_REBALANCE: frozenset({_S.STABLE, _S.COMPLETING_REBALANCE, _S.EMPTY}),
    _S.COMPLETING_REBALANCE: frozenset({_S.PREPARING_REBALANCE}),
    _S.STABLE: frozenset({_S.COMPLETING_REBALANCE}),
    _S.DEAD: frozenset({_S.STABLE, _S.PREPARING_REBALANCE, _S.COMPLETING_REBALANCE, _S.EMPTY, _S.DEAD}),
}


def check_transition(current: ClassicGroupState, target: ClassicGroupState) -> None:
    if not target.can_follow(current):
        raise IllegalStateTransition(f"cannot go from {current.value} to {target.value}")
