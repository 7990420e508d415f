"""One process of a streams group while the sticky assignor places tasks (Kafka's ``ProcessState``):
its members share its load, which is its tasks (active and standby) over its member count."""
from __future__ import annotations

import sys

from kafkaemu.core.streams.assignor_java import JavaPriorityQueue, hash_map_order

TaskId = tuple[str, int]            # (subtopology id, partition)


class TaskAssignorError(Exception):
    """Kafka's ``TaskAssignorException``: no target assignment can be computed (see ``assignor``)."""


def _count(entry: list) -> int:
    return entry[1]


class ProcessState:
    __slots__ = ("process_id", "capacity", "load", "task_count", "member_task_counts", "active",
                 "standby", "tasks", "_members_by_load", "_java_member_order")

    def __init__(self, process_id: str):
        self.process_id = process_id
        self.capacity = 0
        self.load = sys.float_info.max
        self.task_count = 0
        self.member_task_counts: dict[str, int] = {}      # member id -> its tasks, active + standby
        self.active: dict[str, set[TaskId]] = {}
        self.standby: dict[str, set[TaskId]] = {}
        self.tasks: set[TaskId] = set()
        self._members_by_load: JavaPriorityQueue[list] | None = None
        self._java_member_order: list[str] | None = None

    def add_member(self, member_id: str) -> None:
        self.member_task_counts[member_id] = 0
        self._java_member_order = None
        self.capacity += 1
        self._compute_load()

    def has_task(self, task: TaskId) -> bool:
        return task in self.tasks

    def add_task(self, member_id: str, task: TaskId, is_active: bool) -> int:
        """Gives ``task`` to ``member_id``; returns the member's task count after it."""
        n = self._add(member_id, task, is_active)
        # A task given to a chosen member unorders the heap of members; Kafka drops it, and the
        # order of its calls rebuilds it at most once for actives and once for standbys.
        self._members_by_load = None
        return n

    def add_task_to_least_loaded_member(self, task: TaskId, is_active: bool) -> int:
        """Gives ``task`` to the member with the fewest tasks (Java's heap order among equals);
        returns that member's task count after it, -1 when the process has no member."""
        counts = self.member_task_counts
        if not counts:
            return -1
        if len(counts) == 1:
            return self._add(next(iter(counts)), task, is_active)
        heap = self._members_by_load
        if heap is None:
            if self._java_member_order is None:
                self._java_member_order = hash_map_order(counts)
            heap = self._members_by_load = JavaPriorityQueue(
                _count, ([m, counts[m]] for m in self._java_member_order))
        entry = heap.poll()
        if entry is None:
            raise TaskAssignorError(f"No members available to assign task {task[0]}_{task[1]}")
        entry[1] = self._add(entry[0], task, is_active)
        heap.offer(entry)
        return entry[1]

    def _add(self, member_id: str, task: TaskId, is_active: bool) -> int:
        self.task_count += 1
        self.tasks.add(task)
        (self.active if is_active else self.standby).setdefault(member_id, set()).add(task)
        n = self.member_task_counts[member_id] + 1
        self.member_task_counts[member_id] = n
        self._compute_load()
        return n

    def _compute_load(self) -> None:
        self.load = -1.0 if self.capacity <= 0 else self.task_count / self.capacity
