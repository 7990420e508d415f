"""Server-side assignors against the seeds' Range and Sticky worked examples, and their invariants."""
from __future__ import annotations

import random

import pytest

from kafkaemu.core.consumer.assignors import MemberSpec, RangeAssignor, UniformAssignor


def names(assignment: dict) -> set[str]:
    """{b"T1": {0, 1}} -> {"T1P0", "T1P1"} (topic ids here are the topic names as bytes)."""
    return {f"{t.decode()}P{p}" for t, ps in assignment.items() for p in ps}


def specs(subscriptions: dict[str, list[str]], current: dict[str, dict] | None = None) -> dict[str, MemberSpec]:
    current = current or {}
    return {m: MemberSpec(frozenset(t.encode() for t in topics), current.get(m, {}))
            for m, topics in subscriptions.items()}


def parts(**counts: int) -> dict[bytes, int]:
    return {t.encode(): n for t, n in counts.items()}


# ---------------------------------------------------------------- range: the seeds' examples
@pytest.mark.parametrize("t1, t2, c1, c2", [
    (4, 4, {"T1P0", "T1P1", "T2P0", "T2P1"}, {"T1P2", "T1P3", "T2P2", "T2P3"}),   # Eg1
    (3, 3, {"T1P0", "T1P1", "T2P0", "T2P1"}, {"T1P2", "T2P2"}),                   # Eg2
    (3, 4, {"T1P0", "T1P1", "T2P0", "T2P1"}, {"T1P2", "T2P2", "T2P3"}),           # Eg3
])
def test_range_seed_examples(t1, t2, c1, c2):
    out = RangeAssignor().assign(specs({"C1": ["T1", "T2"], "C2": ["T1", "T2"]}), parts(T1=t1, T2=t2))
    assert names(out["C1"]) == c1 and names(out["C2"]) == c2


def test_range_five_partitions_three_consumers():
    out = RangeAssignor().assign(specs({"cg0": ["test"], "cg1": ["test"], "cg2": ["test"]}), parts(test=5))
    assert [sorted(out[m][b"test"]) for m in ("cg0", "cg1", "cg2")] == [[0, 1], [2, 3], [4]]


def test_range_is_sticky_when_a_member_leaves():
    first = RangeAssignor().assign(specs({"a": ["t"], "b": ["t"], "c": ["t"]}), parts(t=6))
    second = RangeAssignor().assign(specs({"b": ["t"], "c": ["t"]}, {"b": first["b"], "c": first["c"]}), parts(t=6))
    assert first["b"][b"t"] <= second["b"][b"t"] and first["c"][b"t"] <= second["c"][b"t"]
    assert second["b"][b"t"] | second["c"][b"t"] == set(range(6))


# ---------------------------------------------------------------- uniform: the seeds' sticky examples
def test_uniform_sticky_when_c0_leaves():
    subs = {m: ["t0", "t1", "t2", "t3"] for m in ("C0", "C1", "C2")}
    counts = parts(t0=2, t1=2, t2=2, t3=2)
    # The seed's starting point: C0 t0p0 t1p1 t3p0; C1 t0p1 t2p0 t3p1; C2 t1p0 t2p1.
    current = {"C0": {b"t0": frozenset({0}), b"t1": frozenset({1}), b"t3": frozenset({0})},
               "C1": {b"t0": frozenset({1}), b"t2": frozenset({0}), b"t3": frozenset({1})},
               "C2": {b"t1": frozenset({0}), b"t2": frozenset({1})}}
    same = UniformAssignor().assign(specs(subs, current), counts)
    assert same == current                       # balanced already: nothing moves
    del subs["C0"]
    out = UniformAssignor().assign(specs(subs, current), counts)
    assert names(current["C1"]) <= names(out["C1"]) and names(current["C2"]) <= names(out["C2"])
    assert len(names(out["C1"])) == len(names(out["C2"])) == 4
    assert names(out["C1"]) | names(out["C2"]) == {f"t{t}P{p}" for t in range(4) for p in range(2)}


def test_uniform_heterogeneous_seed_example_and_c0_leaving():
    subs = {"C0": ["t0"], "C1": ["t0", "t1"], "C2": ["t0", "t1", "t2"]}
    counts = parts(t0=1, t1=2, t2=3)
    out = UniformAssignor().assign(specs(subs), counts)
    assert names(out["C0"]) == {"t0P0"}
    assert names(out["C1"]) == {"t1P0", "t1P1"}
    assert names(out["C2"]) == {"t2P0", "t2P1", "t2P2"}
    del subs["C0"]
    after = UniformAssignor().assign(specs(subs, out), counts)
    assert names(after["C1"]) == {"t1P0", "t1P1", "t0P0"}
    assert names(after["C2"]) == {"t2P0", "t2P1", "t2P2"}


@pytest.mark.parametrize("seed", range(30))
def test_uniform_invariants(seed):
    rnd = random.Random(seed)
    topics = {f"t{i}": rnd.randint(1, 6) for i in range(rnd.randint(1, 4))}
    members = {f"m{i}": rnd.sample(sorted(topics), rnd.randint(1, len(topics))) for i in range(rnd.randint(1, 5))}
    homogeneous = rnd.random() < 0.5
    if homogeneous:
        members = {m: sorted(topics) for m in members}
    counts = parts(**topics)
    out = UniformAssignor().assign(specs(members), counts)
    seen = set()
    for m, a in out.items():
        for t, ps in a.items():
            assert t.decode() in members[m]                    # only subscribed topics
            for p in ps:
                assert (t, p) not in seen                      # disjoint
                seen.add((t, p))
    subscribed = {t for ts in members.values() for t in ts}
    assert seen == {(t.encode(), p) for t in subscribed for p in range(topics[t])}   # complete
    sizes = [sum(len(ps) for ps in out[m].values()) for m in members]
    if homogeneous:
        assert max(sizes) - min(sizes) <= 1
    # Sticky: rerunning with the result as current changes nothing.
    assert UniformAssignor().assign(specs(members, out), counts) == out
    # A member leaving: everyone else keeps all they had (heterogeneous groups: best effort, as Kafka).
    if len(members) > 1 and homogeneous:
        gone = rnd.choice(sorted(members))
        rest = {m: ts for m, ts in members.items() if m != gone}
        again = UniformAssignor().assign(specs(rest, out), counts)
        for m in rest:
            for t, ps in out[m].items():
                assert ps <= again[m].get(t, frozenset())
