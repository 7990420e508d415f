"""What the sticky task assignor guarantees for any group, checked over random groups: processes of
one to three members, subtopologies stateful or not, standby replicas, previous assignments that
are sane (an earlier run's) or not (tasks claimed twice, unknown tasks)."""
from __future__ import annotations

import pytest

pytest.importorskip("hypothesis", reason="the assignor property tests need hypothesis (pip install kafkaemu[test])")

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from kafkaemu.core.streams.assignor import MemberAssignment, MemberSpec, assign  # noqa: E402
from tests.core.streams.topologies import Topology  # noqa: E402

SETTINGS = settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def groups(draw, previous: bool = False):
    """(members, topology, standby replicas); with ``previous``, members claim random tasks."""
    members_per_process = draw(st.lists(st.integers(1, 3), min_size=1, max_size=6))
    sizes = draw(st.dictionaries(st.sampled_from(["0", "1", "2", "sub-a", "sub-b"]), st.integers(0, 8),
                                 min_size=1, max_size=4))
    stateful = draw(st.sets(st.sampled_from(sorted(sizes))))
    standbys = draw(st.integers(0, 3))
    topology = Topology(sizes, stateful)
    claimable = topology.tasks() + [("gone", 0), ("0", 99)]
    members = {}
    for p, n in enumerate(members_per_process):
        for m in range(n):
            spec = MemberSpec(f"process-{p}")
            if previous:
                active = draw(st.sets(st.sampled_from(claimable)))
                standby = draw(st.sets(st.sampled_from(claimable)))
                spec = MemberSpec(f"process-{p}", _tasks(active), _tasks(standby))
            members[f"member-{p}-{m}"] = spec
    return members, topology, standbys


def _tasks(pairs) -> dict[str, frozenset[int]]:
    out: dict[str, set[int]] = {}
    for s, p in pairs:
        out.setdefault(s, set()).add(p)
    return {s: frozenset(ps) for s, ps in out.items()}


def _pairs(tasks) -> set[tuple[str, int]]:
    return {(s, p) for s, ps in tasks.items() for p in ps}


def active_counts(result: dict[str, MemberAssignment]) -> list[int]:
    return [len(_pairs(a.active_tasks)) for a in result.values()]


def previous_from(members: dict[str, MemberSpec], result: dict[str, MemberAssignment]) -> dict[str, MemberSpec]:
    return {m: MemberSpec(members[m].process_id, result[m].active_tasks, result[m].standby_tasks)
            for m in result}


def check_invariants(members: dict[str, MemberSpec], topology: Topology, standbys: int,
                     result: dict[str, MemberAssignment]) -> None:
    assert set(result) == set(members)
    tasks = topology.tasks()
    owners: dict[tuple[str, int], list[str]] = {}
    for m, a in result.items():
        for t in _pairs(a.active_tasks):
            owners.setdefault(t, []).append(m)
        assert a.warmup_tasks == {}
    assert sorted(owners) == sorted(tasks) and all(len(o) == 1 for o in owners.values())  # each active once

    processes = {s.process_id for s in members.values()}
    for t in tasks:
        holders = [members[owners[t][0]].process_id]
        holders += [members[m].process_id for m, a in result.items() if t in _pairs(a.standby_tasks)]
        assert len(holders) == len(set(holders))                     # one copy per process at most
        expected = min(standbys, len(processes) - 1) if t[0] in topology.stateful else 0
        assert len(holders) - 1 == expected                           # standbys of stateful tasks only

    quota = -(-len(tasks) // len(members)) if members else 0
    assert all(n <= quota for n in active_counts(result))             # never above the first quota


@SETTINGS
@given(groups(previous=True))
def test_invariants_hold_whatever_the_previous_assignment(group):
    members, topology, standbys = group
    result = assign(members, topology, standbys)
    check_invariants(members, topology, standbys, result)
    assert assign(dict(members), topology, standbys) == result        # deterministic


@SETTINGS
@given(groups())
def test_a_new_group_is_balanced_within_one_active_task(group):
    members, topology, standbys = group
    result = assign(members, topology, standbys)
    check_invariants(members, topology, standbys, result)
    counts = active_counts(result)
    assert max(counts) - min(counts) <= 1


@SETTINGS
@given(groups())
def test_an_assignment_given_back_keeps_every_active_task(group):
    members, topology, standbys = group
    first = assign(members, topology, standbys)
    again = assign(previous_from(members, first), topology, standbys)
    assert {m: a.active_tasks for m, a in again.items()} == {m: a.active_tasks for m, a in first.items()}


@SETTINGS
@given(groups())
def test_a_member_joining_on_a_new_process_takes_tasks_without_moving_others_between_old_members(group):
    """(On an existing process the quota can drop below what an old member held, and the task it
    gives up goes to the least loaded process, which may be another old one: Kafka's algorithm.)"""
    members, topology, standbys = group
    first = assign(members, topology, standbys)
    joined = previous_from(members, first)
    joined["member-new"] = MemberSpec("process-new")
    members_after = dict(members, **{"member-new": joined["member-new"]})
    result = assign(joined, topology, standbys)
    check_invariants(members_after, topology, standbys, result)
    for m in members:
        assert _pairs(result[m].active_tasks) <= _pairs(first[m].active_tasks)


@SETTINGS
@given(groups(), st.data())
def test_a_leaving_member_moves_only_its_own_tasks(group, data):
    members, topology, standbys = group
    if len(members) < 2:
        return
    first = assign(members, topology, standbys)
    leaver = data.draw(st.sampled_from(sorted(members)))
    remaining = {m: s for m, s in previous_from(members, first).items() if m != leaver}
    result = assign(remaining, topology, standbys)
    check_invariants(remaining, topology, standbys, result)
    for m in remaining:
        assert _pairs(result[m].active_tasks) >= _pairs(first[m].active_tasks)
