"""The streams groups' task assignor: Kafka 4.3's StickyTaskAssignor (group-coordinator module,
``streams.assignor``), named "sticky".

A task is a subtopology and one of its partitions; a subtopology has as many tasks as its largest
input topic has partitions. Every task is active on exactly one member; a task of a stateful
subtopology also gets up to ``num_standby_replicas`` standbys, each on a process that holds no other
copy of it. The members of one process share its load (its tasks over its member count).

How Kafka places them, and so this port:

1. Active tasks, sorted by partition then subtopology (previous assignments are range-like), go
   back to the member that had them while it is under the active quota (the active tasks over the
   members, rounded up; the quota is recomputed without a member once it reaches it); then to the
   least loaded member that had them as a standby, under the same quota.
2. The rest, sorted by subtopology then partition (so a new group gets a range-like assignment), go
   one by one to the least loaded member of the least loaded process.
3. Standbys, by partition then subtopology descending: to the previous active owner when its process
   holds no copy and it is under the total quota (active and standby tasks over the members); else to
   a previous standby owner likewise; the remaining replicas, by subtopology then partition
   descending, go to the least loaded member of the least loaded process holding no copy. A replica
   no process can take is left out (Kafka logs a warning).

Ties go where Kafka's go: Java's heap order and ``HashMap`` iteration orders are reproduced
(``assignor_java``). ``members`` is Kafka's ``GroupSpec.members()``: its order matters only among
ties; Kafka's coordinator passes a ``HashMap``, which ``in_kafka_order`` reproduces.

Errors: ``TaskAssignorError`` is Kafka's ``TaskAssignorException``, raised when there are tasks but
no member to take them ("No process available to assign active task 0_0.") and for a
``num_standby_replicas`` that is not an integer of at least 0 (Kafka's assignor would fail parsing
it; its group config refuses one before the assignor runs). Kafka's coordinator turns it into
UNKNOWN_SERVER_ERROR, the group's state unchanged; its message (GroupMetadataManager's ``"Failed to
compute a new target assignment for epoch %d: %s"``) is logged, not answered (GroupCoordinatorService).

The revision ported is 4.3.0's: the quotas and heaps of KAFKA-19661, before KAFKA-20719 (members'
reported task offsets as standby candidates) and KAFKA-20899 (the previous-standby search), which
came after 4.3.0.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, NamedTuple, Protocol

from kafkaemu.core.streams.assignor_java import JavaPriorityQueue, hash_map_order, utf16_key
from kafkaemu.core.streams.assignor_process import ProcessState, TaskAssignorError, TaskId
from kafkaemu.logging import get_logger

__all__ = ["NAME", "MemberSpec", "MemberAssignment", "TopologyDescriber", "TaskAssignorError",
           "assign", "in_kafka_order"]

NAME = "sticky"

log = get_logger("kafkaemu.coordinator")

Tasks = Mapping[str, frozenset[int]]          # subtopology id -> partitions


@dataclass(frozen=True)
class MemberSpec:
    """What the assignor knows of a member (Kafka's AssignmentMemberSpec)."""
    process_id: str
    active_tasks: Tasks = field(default_factory=dict)
    standby_tasks: Tasks = field(default_factory=dict)
    warmup_tasks: Tasks = field(default_factory=dict)
    instance_id: str | None = None
    rack_id: str | None = None
    client_tags: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class MemberAssignment:
    active_tasks: dict[str, frozenset[int]] = field(default_factory=dict)
    standby_tasks: dict[str, frozenset[int]] = field(default_factory=dict)
    warmup_tasks: dict[str, frozenset[int]] = field(default_factory=dict)


class TopologyDescriber(Protocol):
    """The configured topology as the assignor sees it (Kafka's TopologyDescriber)."""

    def subtopologies(self) -> list[str]: ...
    def max_num_input_partitions(self, subtopology_id: str) -> int: ...
    def is_stateful(self, subtopology_id: str) -> bool: ...


def in_kafka_order(members: Mapping[str, MemberSpec]) -> dict[str, MemberSpec]:
    """``members`` in the order Kafka's coordinator hands them to its assignor (a ``HashMap``)."""
    return {m: members[m] for m in hash_map_order(members)}


def assign(members: Mapping[str, MemberSpec], topology: TopologyDescriber,
           num_standby_replicas: int = 0) -> dict[str, MemberAssignment]:
    """member id -> its target assignment (every member of ``members`` has one, maybe empty)."""
    if isinstance(num_standby_replicas, bool) or not isinstance(num_standby_replicas, int) \
            or num_standby_replicas < 0:
        raise TaskAssignorError(f"num.standby.replicas must be an integer of at least 0, not {num_standby_replicas!r}")
    return _StickyAssignment(members, topology, num_standby_replicas).run()


class _Member(NamedTuple):
    process_id: str
    member_id: str


def _task_name(task: TaskId) -> str:
    return f"{task[0]}_{task[1]}"


class _StickyAssignment:
    """One run of the assignor (Kafka's ``LocalState`` and the methods that use it)."""

    def __init__(self, members: Mapping[str, MemberSpec], topology: TopologyDescriber,
                 num_standby_replicas: int):
        self.members = members
        self.num_standby = num_standby_replicas
        subtopologies = list(topology.subtopologies())
        self.sizes = {s: max(0, int(topology.max_num_input_partitions(s))) for s in subtopologies}
        self.stateful = [s for s in subtopologies if topology.is_stateful(s)]
        self.sort_key = {s: utf16_key(s) for s in subtopologies}

        self.total_active_tasks = sum(self.sizes.values())
        self.total_tasks = self.total_active_tasks + sum(self.sizes[s] for s in self.stateful) * self.num_standby
        self.members_with_active_capacity = len(members)
        self.members_with_task_capacity = len(members)
        self.active_tasks_per_member = _tasks_per_member(self.total_active_tasks, len(members))
        self.total_tasks_per_member = _tasks_per_member(self.total_tasks, len(members))

        self.processes: dict[str, ProcessState] = {}
        self.prev_active: dict[TaskId, _Member] = {}
        self.prev_standby: dict[TaskId, list[_Member]] = {}
        for member_id, spec in members.items():
            member = _Member(spec.process_id, member_id)
            process = self.processes.get(spec.process_id)
            if process is None:
                process = self.processes[spec.process_id] = ProcessState(spec.process_id)
            process.add_member(member_id)
            for sub, partitions in spec.active_tasks.items():
                for p in partitions:
                    self.prev_active[(sub, p)] = member
            for sub, partitions in spec.standby_tasks.items():
                for p in partitions:
                    self.prev_standby.setdefault((sub, p), []).append(member)
        # Kafka's processIdToState is a HashMap sized for the member count; its values seed the heaps.
        self.process_order = [self.processes[p] for p in hash_map_order(self.processes, len(members))]

    def run(self) -> dict[str, MemberAssignment]:
        self.assign_active([(s, p) for s, n in self.sizes.items() for p in range(n)])
        if self.num_standby > 0:
            self.assign_standby([(s, p) for s in self.stateful for p in range(self.sizes[s])])
        return self.group_assignment()

    # ------------------------------------------------------------------ active tasks
    def assign_active(self, tasks: list[TaskId]) -> None:
        key = self.sort_key
        tasks.sort(key=lambda t: (t[1], key[t[0]]))
        rest = []
        for task in tasks:                                  # 1. back to the previous owner
            prev = self.prev_active.get(task)
            if prev is None or not self._give_if_under_active_quota(prev, task):
                rest.append(task)
        tasks, rest = rest, []
        for task in tasks:                                  # 2. to a previous standby owner
            prev = self._find_prev_member_with_least_load(self.prev_standby.get(task), None)
            if prev is None or not self._give_if_under_active_quota(prev, task):
                rest.append(task)
        rest.sort(key=lambda t: (key[t[0]], t[1]))
        by_load = JavaPriorityQueue(_load, self.process_order)
        for task in rest:                                   # 3. to the least loaded
            process = by_load.poll()
            if process is None:
                raise TaskAssignorError(f"No process available to assign active task {_task_name(task)}.")
            n = process.add_task_to_least_loaded_member(task, True)
            if n == -1:
                raise TaskAssignorError(f"No member available to assign active task {_task_name(task)}.")
            self._maybe_update_active_tasks_per_member(n)
            self._maybe_update_total_tasks_per_member(n)
            by_load.offer(process)

    def _give_if_under_active_quota(self, member: _Member, task: TaskId) -> bool:
        process = self.processes[member.process_id]
        if process.member_task_counts[member.member_id] >= self.active_tasks_per_member:
            return False
        n = process.add_task(member.member_id, task, True)
        self._maybe_update_active_tasks_per_member(n)
        self._maybe_update_total_tasks_per_member(n)
        return True

    def _maybe_update_active_tasks_per_member(self, n: int) -> None:
        if n == self.active_tasks_per_member:
            self.members_with_active_capacity -= 1
            self.total_active_tasks -= n
            self.active_tasks_per_member = _tasks_per_member(self.total_active_tasks,
                                                             self.members_with_active_capacity)

    def _maybe_update_total_tasks_per_member(self, n: int) -> None:
        if n == self.total_tasks_per_member:
            self.members_with_task_capacity -= 1
            self.total_tasks -= n
            self.total_tasks_per_member = _tasks_per_member(self.total_tasks, self.members_with_task_capacity)

    def _find_prev_member_with_least_load(self, members: list[_Member] | None,
                                          task: TaskId | None) -> _Member | None:
        """Kafka 4.3.0's ``findPrevMemberWithLeastLoad``, as it is: a later member replaces the
        candidate only when both its process and the member itself are less loaded, and the final
        "holds no copy" check looks at the first member's process (KAFKA-20899 changed both after
        4.3.0)."""
        if not members:
            return None
        candidate = members[0]
        first_process = self.processes[candidate.process_id]
        candidate_process_load = first_process.load
        candidate_member_load = first_process.member_task_counts[candidate.member_id]
        for member in members[1:]:
            process = self.processes[member.process_id]
            if process.load < candidate_process_load and (task is None or not process.has_task(task)):
                member_load = process.member_task_counts[member.member_id]
                if member_load < candidate_member_load:
                    candidate_process_load = process.load
                    candidate_member_load = member_load
                    candidate = member
        if task is None or not first_process.has_task(task):
            return candidate
        return None

    # ------------------------------------------------------------------ standby tasks
    def assign_standby(self, tasks: list[TaskId]) -> None:
        key = self.sort_key
        tasks.sort(key=lambda t: (t[1], key[t[0]]), reverse=True)
        to_least_loaded: list[tuple[TaskId, int]] = []
        for task in tasks:
            for i in range(self.num_standby):
                prev = self.prev_active.get(task)
                if prev is not None:
                    process = self.processes[prev.process_id]
                    if not process.has_task(task) and self._under_total_quota(process, prev):
                        self._maybe_update_total_tasks_per_member(process.add_task(prev.member_id, task, False))
                        continue
                prevs = self.prev_standby.get(task)
                if prevs:
                    prev = self._find_prev_member_with_least_load(prevs, task)
                    if prev is not None:
                        process = self.processes[prev.process_id]
                        if self._under_total_quota(process, prev):
                            self._maybe_update_total_tasks_per_member(
                                process.add_task(prev.member_id, task, False))
                            continue
                to_least_loaded.append((task, self.num_standby - i))
                break
        to_least_loaded.sort(key=lambda x: (key[x[0][0]], x[0][1]), reverse=True)
        by_load = JavaPriorityQueue(_load, self.process_order)
        missing: dict[str, int] = {}
        for task, remaining in to_least_loaded:
            for i in range(remaining):
                if not self._standby_to_least_loaded(by_load, task):
                    missing[_task_name(task)] = remaining - i
                    break
        if missing:
            # Kafka warns once per task; one event per assignment says the same here.
            log.warning("standby_replicas_not_assigned", num_standby_replicas=self.num_standby,
                        tasks=len(missing), replicas=sum(missing.values()), first=sorted(missing)[:5],
                        reason="not enough processes without a copy of these tasks: add processes")

    def _under_total_quota(self, process: ProcessState, member: _Member) -> bool:
        return process.member_task_counts[member.member_id] < self.total_tasks_per_member

    def _standby_to_least_loaded(self, by_load: JavaPriorityQueue[ProcessState], task: TaskId) -> bool:
        """Kafka's recursive ``assignStandbyToMemberWithLeastLoad``: polls processes until one holds
        no copy of ``task``, then puts the polled ones back, the last polled first."""
        polled: list[ProcessState] = []
        found = False
        while True:
            process = by_load.poll()
            if process is None:
                break
            polled.append(process)
            if not process.has_task(task):
                n = process.add_task_to_least_loaded_member(task, False)
                if n != -1:
                    found = True
                    self._maybe_update_total_tasks_per_member(n)
                break
            if not len(by_load):
                break
        for process in reversed(polled):
            by_load.offer(process)
        return found

    # ------------------------------------------------------------------ result
    def group_assignment(self) -> dict[str, MemberAssignment]:
        active: dict[str, set[TaskId]] = {}
        standby: dict[str, set[TaskId]] = {}
        for process in self.processes.values():
            for member_id, tasks in process.active.items():
                active.setdefault(member_id, set()).update(tasks)
            for member_id, tasks in process.standby.items():
                standby.setdefault(member_id, set()).update(tasks)
        return {m: MemberAssignment(_compact(active.get(m, ())), _compact(standby.get(m, ())), {})
                for m in self.members}


def _load(process: ProcessState) -> float:
    return process.load


def _tasks_per_member(tasks: int, members: int) -> int:
    return 0 if members == 0 else -(-tasks // members)


def _compact(tasks) -> dict[str, frozenset[int]]:
    out: dict[str, set[int]] = {}
    for sub, p in tasks:
        out.setdefault(sub, set()).add(p)
    return {s: frozenset(ps) for s, ps in out.items()}
