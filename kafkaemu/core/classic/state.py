"""The classic group states as data, as h11's ``_state.py`` holds its transitions: each state's valid
predecessors (Kafka's ClassicGroupState) and the answer each state gives a known member's JoinGroup,
SyncGroup and Heartbeat once the member (and its generation) are checked. An answer is an error
code, or the name of the manager's step that decides it (classic/manager.py)."""
from __future__ import annotations

from ...protocol.errors import ErrorCode
from ..group_api import GroupStateEnum

E = ErrorCode


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


# A Dead group answers every member request as a group being unloaded.
DEAD_ANSWER = E.COORDINATOR_NOT_AVAILABLE

# JoinGroup of a known member: ``rejoin`` updates it and the rebalance goes on; ``join_completing``
# repeats the generation's answer when its metadata is unchanged, else rebalances; ``join_stable``
# does the same for a follower, and rebalances when the leader rejoins.
JOIN: dict[ClassicGroupState, "ErrorCode | str"] = {
    _S.EMPTY: E.UNKNOWN_MEMBER_ID,
    _S.PREPARING_REBALANCE: "rejoin",
    _S.COMPLETING_REBALANCE: "join_completing",
    _S.STABLE: "join_stable",
}

# SyncGroup at the group's generation: ``await_assignment`` parks it until the leader's SyncGroup
# (the leader's completes the phase); ``current_assignment`` answers with the member's assignment.
SYNC: dict[ClassicGroupState, "ErrorCode | str"] = {
    _S.EMPTY: E.UNKNOWN_MEMBER_ID,
    _S.PREPARING_REBALANCE: E.REBALANCE_IN_PROGRESS,
    _S.COMPLETING_REBALANCE: "await_assignment",
    _S.STABLE: "current_assignment",
}

# Heartbeat at the group's generation: the answer, and whether it keeps the member's session alive.
HEARTBEAT: dict[ClassicGroupState, tuple[ErrorCode, bool]] = {
    _S.EMPTY: (E.UNKNOWN_MEMBER_ID, False),
    _S.PREPARING_REBALANCE: (E.REBALANCE_IN_PROGRESS, True),
    _S.COMPLETING_REBALANCE: (E.NONE, True),
    _S.STABLE: (E.NONE, True),
}


def check_transition(current: ClassicGroupState, target: ClassicGroupState) -> None:
    if not target.can_follow(current):
        raise IllegalStateTransition(f"cannot go from {current.value} to {target.value}")
