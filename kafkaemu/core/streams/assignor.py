"""The streams groups' task assignor: Kafka's StickyTaskAssignor (group-coordinator module,
``streams.assignor``), named "sticky".

A task is a subtopology and one of its partitions; a subtopology has as many tasks as its largest
input topic has partitions. Every task is active on exactly one member; a stateful task also gets up
to ``num_standby_replicas`` standbys, each on a member of another process than its active one.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Protocol

NAME = "sticky"

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


def assign(members: Mapping[str, MemberSpec], topology: TopologyDescriber,
           num_standby_replicas: int = 0) -> dict[str, MemberAssignment]:
    """member id -> its target assignment. Placeholder until the sticky port lands: active tasks
    round robin over the members in id order, no standbys."""
    ids = sorted(members)
    out: dict[str, dict[str, set[int]]] = {mid: {} for mid in ids}
    if not ids:
        return {}
    i = 0
    for sub in sorted(topology.subtopologies()):
        for p in range(topology.max_num_input_partitions(sub)):
            out[ids[i % len(ids)]].setdefault(sub, set()).add(p)
            i += 1
    return {mid: MemberAssignment({s: frozenset(ps) for s, ps in tasks.items()})
            for mid, tasks in out.items()}
