"""A streams group (KIP-1071): members with epochs and tasks, the topology, the target assignment,
and its side of the Group interface (Kafka's StreamsGroup, StreamsGroupMember, TasksTuple).

The state follows from the rest, as StreamsGroup.maybeUpdateGroupState: Empty without members,
NotReady while the topology is not validated (source or internal topics missing), Assigning while
the group epoch is ahead of the target assignment's, Reconciling while a member is not at the
target epoch in the Stable member state, else Stable (Dead once deleted).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Mapping

from ...protocol.errors import ErrorCode
from ..group_api import GroupError, GroupStateEnum, GroupType, PartitionCheck
from ..modern import ModernGroup
from . import records
from .topology import ConfiguredTopology, StreamsTopology

E = ErrorCode
Tasks = Mapping[str, frozenset[int]]   # subtopology id -> partitions


def tasks_of(entries) -> dict[str, frozenset[int]]:
    """Wire TaskIds ([{subtopology_id, partitions}]) as Tasks, without empty entries."""
    out: dict[str, set[int]] = {}
    for e in entries or ():
        out.setdefault(e.subtopology_id, set()).update(e.partitions or ())
    return {s: frozenset(ps) for s, ps in sorted(out.items()) if ps}


def wire_tasks(tasks: Tasks) -> list[dict]:
    return [{"subtopology_id": s, "partitions": sorted(ps)} for s, ps in sorted(tasks.items()) if ps]


def _minus(a: Tasks, b: Tasks) -> dict[str, frozenset[int]]:
    out = {s: ps - b.get(s, frozenset()) for s, ps in a.items()}
    return {s: ps for s, ps in out.items() if ps}


def _plus(a: Tasks, b: Tasks) -> dict[str, frozenset[int]]:
    out = {s: frozenset(ps) for s, ps in a.items()}
    for s, ps in b.items():
        out[s] = out.get(s, frozenset()) | ps
    return {s: ps for s, ps in sorted(out.items()) if ps}


def _overlap(a: Tasks, b: Tasks) -> bool:
    return any(ps & b.get(s, frozenset()) for s, ps in a.items())


@dataclass(frozen=True)
class TasksTuple:
    """Active, standby and warm-up tasks (Kafka's TasksTuple)."""
    active: Tasks = field(default_factory=dict)
    standby: Tasks = field(default_factory=dict)
    warmup: Tasks = field(default_factory=dict)

    def is_empty(self) -> bool:
        return not (self.active or self.standby or self.warmup)

    def contains_any(self, other: "TasksTuple") -> bool:
        return _overlap(self.active, other.active) or _overlap(self.standby, other.standby) \
            or _overlap(self.warmup, other.warmup)

    def merge(self, other: "TasksTuple") -> "TasksTuple":
        return TasksTuple(_plus(self.active, other.active), _plus(self.standby, other.standby),
                          _plus(self.warmup, other.warmup))

    def minus(self, other: "TasksTuple") -> "TasksTuple":
        return TasksTuple(_minus(self.active, other.active), _minus(self.standby, other.standby),
                          _minus(self.warmup, other.warmup))

    def key(self) -> tuple:
        """Plain and ordered, for records and comparisons."""
        def plain(t: Tasks) -> tuple:
            return tuple((s, tuple(sorted(ps))) for s, ps in sorted(t.items()) if ps)
        return plain(self.active), plain(self.standby), plain(self.warmup)

    def __eq__(self, other) -> bool:
        return isinstance(other, TasksTuple) and self.key() == other.key()

    def __hash__(self) -> int:
        return hash(self.key())


EMPTY = TasksTuple()


class MemberState(Enum):
    """A member's reconciliation state, with Kafka's record byte."""
    STABLE = 1
    UNREVOKED_TASKS = 2
    UNRELEASED_TASKS = 3
    UNKNOWN = 127


@dataclass(frozen=True)
class Endpoint:
    host: str
    port: int


@dataclass(frozen=True)
class StreamsMember:
    """Immutable, as Kafka's StreamsGroupMember: every change makes a new one."""
    member_id: str
    member_epoch: int = 0
    previous_member_epoch: int = -1
    state: MemberState = MemberState.STABLE
    instance_id: str | None = None
    rack_id: str | None = None
    client_id: str = ""
    client_host: str = ""
    rebalance_timeout_ms: int = -1
    topology_epoch: int = -1
    process_id: str = ""
    user_endpoint: Endpoint | None = None
    client_tags: tuple[tuple[str, str], ...] = ()
    assigned: TasksTuple = EMPTY
    pending_revocation: TasksTuple = EMPTY
    task_offsets: tuple[tuple[str, int, int], ...] = ()       # (subtopology, partition, offset)
    task_end_offsets: tuple[tuple[str, int, int], ...] = ()
    # (subtopology, partition, epoch): the epoch each active task, assigned or pending revocation,
    # was given to the member at (Kafka's TasksTupleWithEpochs); its offset commits are checked by it
    active_epochs: tuple[tuple[str, int, int], ...] = ()

    def is_reconciled_to(self, epoch: int) -> bool:
        return self.state is MemberState.STABLE and self.member_epoch == epoch

    def assignment_epochs(self) -> dict[tuple[str, int], int]:
        return {(s, p): e for s, p, e in self.active_epochs}


class StreamsGroupState(GroupStateEnum):
    EMPTY = "Empty"
    NOT_READY = "NotReady"
    ASSIGNING = "Assigning"
    RECONCILING = "Reconciling"
    STABLE = "Stable"
    DEAD = "Dead"


class StreamsGroup(ModernGroup, group_type=GroupType.STREAMS, records=records, member=StreamsMember):
    """``members``: StreamsMember by id; ``target``: a TasksTuple by member id; the topology as
    the first member gave it, and as configured against the topics that exist."""

    def __init__(self, group_id: str, now_ms: int) -> None:
        super().__init__(group_id, now_ms)
        self.topology: StreamsTopology | None = None
        self.configured: ConfiguredTopology | None = None
        self.metadata_hash = 0
        self.validated_topology_epoch = -1
        self.assignment_configs: tuple[tuple[str, str], ...] = ()
        self.endpoint_information_epoch = 0
        self.shutdown_request_member_id: str | None = None

    @property
    def state(self) -> StreamsGroupState:
        if self.dead:
            return StreamsGroupState.DEAD
        if not self.members:
            return StreamsGroupState.EMPTY
        if self.topology is None or self.topology.epoch != self.validated_topology_epoch:
            return StreamsGroupState.NOT_READY
        if self.group_epoch > self.assignment_epoch:
            return StreamsGroupState.ASSIGNING
        if any(not m.is_reconciled_to(self.assignment_epoch) for m in self.members.values()):
            return StreamsGroupState.RECONCILING
        return StreamsGroupState.STABLE

    def owners(self) -> tuple[dict, dict, dict]:
        """Who holds each task now, assigned or pending revocation: (active (sub, p) -> process id,
        standby and warm-up (sub, p) -> {process ids})."""
        active: dict[tuple[str, int], str] = {}
        standby: dict[tuple[str, int], set[str]] = {}
        warmup: dict[tuple[str, int], set[str]] = {}
        for m in self.members.values():
            for tasks in (m.assigned, m.pending_revocation):
                for s, ps in tasks.active.items():
                    for p in ps:
                        active[(s, p)] = m.process_id
                for held, into in ((tasks.standby, standby), (tasks.warmup, warmup)):
                    for s, ps in held.items():
                        for p in ps:
                            into.setdefault((s, p), set()).add(m.process_id)
        return active, standby, warmup

    def source_topics(self) -> set[str]:
        return self.topology.source_topics() if self.topology is not None else set()

    def is_subscribed_to_topic(self, topic: str) -> bool:
        if self.dead or not self.members:
            return False
        return topic in self.source_topics()

    # --- the Group interface ---------------------------------------------------------------
    def validate_offset_commit(self, member_id: str, instance_id: str | None, generation_or_epoch: int,
                               api_version: int, is_transactional: bool = False) -> PartitionCheck | None:
        """StreamsGroup.validateOffsetCommit: the member's own epoch commits anything; an older one
        is checked partition by partition."""
        if generation_or_epoch < 0 and not self.members:
            return
        if is_transactional and generation_or_epoch == -1 and not member_id and instance_id is None:
            return
        member = self.members.get(member_id)
        if member is None:
            raise GroupError(E.UNKNOWN_MEMBER_ID, f"Member {member_id} is not a member of group {self.group_id}.")
        if not is_transactional and api_version < 9:
            raise GroupError(E.UNSUPPORTED_VERSION, "OffsetCommit version 9 or above must be used by members "
                                                    "using the streams group protocol")
        if generation_or_epoch == member.member_epoch:
            return None
        if generation_or_epoch > member.member_epoch:
            raise GroupError(E.STALE_MEMBER_EPOCH, f"Received member epoch {generation_or_epoch} is newer than "
                                                   f"current member epoch {member.member_epoch}.")
        return self._assignment_epoch_check(member, generation_or_epoch)

    def _assignment_epoch_check(self, member: StreamsMember, received: int) -> PartitionCheck:
        """StreamsGroup.createAssignmentEpochValidator (KAFKA-19779): a commit at an older member
        epoch may commit a partition of an active task the member holds (assigned or pending
        revocation) since that epoch or before."""
        if self.topology is None:
            raise GroupError(E.STALE_MEMBER_EPOCH, "Topology is not available for offset commit validation.")
        subtopology_of = {t: s.subtopology_id for s in self.topology.subtopologies
                          for t in (*s.source_topics, *(r.name for r in s.repartition_source_topics))}
        epochs = member.assignment_epochs()

        def check(topic: str, partition: int) -> ErrorCode:
            sub = subtopology_of.get(topic)
            epoch = epochs.get((sub, partition)) if sub is not None else None
            return E.NONE if epoch is not None and received >= epoch else E.STALE_MEMBER_EPOCH
        return check

    def validate_offset_fetch(self, member_id: str | None, member_epoch: int) -> None:
        if member_id is None and member_epoch < 0:
            return
        member = self.members.get(member_id or "")
        if member is None:
            raise GroupError(E.UNKNOWN_MEMBER_ID, f"Member {member_id} is not a member of group {self.group_id}.")
        if member_epoch != member.member_epoch:
            raise GroupError(E.STALE_MEMBER_EPOCH, f"The received member epoch {member_epoch} does not match the "
                                                   f"expected member epoch {member.member_epoch}.")

    def snapshot(self) -> tuple:
        """Members and topologies are immutable: copying the containers that change is enough."""
        return (self.group_epoch, self.assignment_epoch, dict(self.members), dict(self.static_members),
                dict(self.target), self.topology, self.configured, self.metadata_hash, self.validated_topology_epoch,
                self.assignment_configs, self.endpoint_information_epoch, self.shutdown_request_member_id,
                self.created_ms, self.dead, self.written)

    def restore(self, snapshot: tuple) -> None:
        (self.group_epoch, self.assignment_epoch, self.members, self.static_members, self.target, self.topology,
         self.configured, self.metadata_hash, self.validated_topology_epoch, self.assignment_configs,
         self.endpoint_information_epoch, self.shutdown_request_member_id, self.created_ms, self.dead,
         self.written) = snapshot
