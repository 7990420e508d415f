"""The port against Apache Kafka 4.3.0's StickyTaskAssignor itself: 100 random groups (processes of
one to four members, ids of every shape, previous assignments sane or not, tasks claimed twice or
unknown, either member order, 0-3 standby replicas) and the assignment Kafka's assignor computed
for each, run on Java 17 (data/sticky_assignor_kafka_4_3_0.txt). Every member's active and standby
tasks must match, ties included.

Each case is two lines. The group: ``S <standbys>``, then ``T <subtopology> <partitions>
<stateful 0|1>`` per subtopology, then ``M <member> <process> <n> <sub> <p>...(n) <m> <sub>
<p>...(m)`` per member (previous active tasks, then previous standbys), members in GroupSpec order.
Kafka's answer: ``<member>=<active tasks>/<standby tasks>`` per member, tasks ``<sub>_<p>`` sorted
and comma-separated, or ``ERROR:<TaskAssignorException message, _ for spaces>``."""
from __future__ import annotations

from pathlib import Path

import pytest

from kafkaemu.core.streams.assignor import MemberSpec, TaskAssignorError, assign
from tests.core.streams.topologies import Topology

DATA = Path(__file__).parent / "data" / "sticky_assignor_kafka_4_3_0.txt"


def parse(line: str) -> tuple[dict[str, MemberSpec], Topology, int]:
    tokens = iter(line.split(" "))
    standbys, topology, members = 0, Topology(), {}
    for kind in tokens:
        if kind == "S":
            standbys = int(next(tokens))
        elif kind == "T":
            sub = next(tokens)
            topology.sizes[sub] = int(next(tokens))
            if next(tokens) == "1":
                topology.stateful.add(sub)
        else:
            member, process = next(tokens), next(tokens)
            claimed = []
            for _ in range(2):
                tasks: dict[str, set[int]] = {}
                for _ in range(int(next(tokens))):
                    tasks.setdefault(next(tokens), set()).add(int(next(tokens)))
                claimed.append({s: frozenset(ps) for s, ps in tasks.items()})
            members[member] = MemberSpec(process, claimed[0], claimed[1])
    return members, topology, standbys


def answer(members: dict[str, MemberSpec], topology: Topology, standbys: int) -> str:
    try:
        result = assign(members, topology, standbys)
    except TaskAssignorError as exc:
        return "ERROR:" + str(exc).replace(" ", "_")

    def tasks(t) -> str:
        return ",".join(sorted(f"{s}_{p}" for s, ps in t.items() for p in ps))
    return " ".join(f"{m}={tasks(result[m].active_tasks)}/{tasks(result[m].standby_tasks)}" for m in members)


def cases() -> list[tuple[str, str]]:
    lines = DATA.read_text(encoding="utf-8").splitlines()
    return list(zip(lines[0::2], lines[1::2]))


@pytest.mark.parametrize("group, kafka", cases(), ids=lambda v: "")
def test_the_same_assignment_as_kafka(group, kafka):
    assert answer(*parse(group)) == kafka


def test_the_vectors_cover_what_they_claim():
    groups = [parse(g) for g, _ in cases()]
    assert len(groups) == 100
    assert any(s > 0 and t.stateful for _, t, s in groups)
    assert any(len({m.process_id for m in ms.values()}) < len(ms) for ms, _, _ in groups)   # shared processes
    assert sum(kafka.startswith("ERROR:") for _, kafka in cases()) < 20
