"""Session expiry, rebalance timeout, initial delay, pending members and pending syncs: manual clock only."""
from kafkaemu.protocol.errors import ErrorCode as E

from ..harness import Harness


def test_session_expiry_removes_a_silent_member_and_triggers_rebalance():
    h = Harness()
    a, b = h.stable_group(n=2, session=6000)
    for _ in range(5):                     # a heartbeats, b is silent
        h.advance(2000)
        assert h.heartbeat("g", a, 2) in (E.NONE, E.REBALANCE_IN_PROGRESS)
        if h.state() == "PreparingRebalance":
            break
    assert b not in h.group().members
    assert h.state() == "PreparingRebalance"
    assert [t.to_state.value for t in h.c.transitions][-1] == "PreparingRebalance"


def test_heartbeats_keep_members_alive_indefinitely():
    h = Harness()
    a, b = h.stable_group(n=2, session=6000)
    for _ in range(20):
        h.advance(5000)
        assert h.heartbeat("g", a, 2) == E.NONE
        assert h.heartbeat("g", b, 2) == E.NONE
    assert h.state() == "Stable"


def test_commits_also_keep_the_session_alive():
    h = Harness()
    a, b = h.stable_group(n=2, session=6000)
    for _ in range(4):
        h.advance(5000)
        assert h.heartbeat("g", a, 2) == E.NONE
        assert h.commit_errors("g", {("t", 0): 1}, member_id=b, generation=2) == {E.NONE}
    assert h.state() == "Stable"


def test_last_member_expiring_empties_the_group():
    h = Harness()
    [a] = h.stable_group(n=1, session=6000)
    h.advance(6000)
    assert h.state() == "Empty" and not h.group().members
    assert h.group().generation_id == 2


def test_rebalance_timeout_removes_members_that_did_not_rejoin():
    h = Harness()
    a, b, c = h.stable_group(n=3, session=30000, rebalance=10000)
    ra = h.join("g", a, client_id="C1", session=30000, rebalance=10000)     # leader rejoins
    rb = h.join("g", b, client_id="C2", session=30000, rebalance=10000)
    assert ra.parked and rb.parked
    h.advance(9999)
    assert h.state() == "PreparingRebalance"
    h.advance(1)
    assert h.state() == "CompletingRebalance"
    assert set(h.group().members) == {a, b}
    assert len(ra.value["members"]) == 2 and ra.value["generation_id"] == 3


def test_leader_reelected_when_leader_misses_the_rebalance():
    h = Harness()
    a, b = h.stable_group(n=2, session=30000, rebalance=10000)
    assert h.group().leader_id == a
    h.leave("g", "ghost")                        # nothing happens
    rb = h.join("g", b, client_id="C2", protocols=[("range", b"changed")], session=30000, rebalance=10000)
    assert h.state() == "PreparingRebalance"
    h.advance(10000)                             # a never rejoins
    assert h.group().leader_id == b and set(h.group().members) == {b}
    assert rb.value["leader"] == b and rb.value["members"][0]["metadata"] == b"changed"


def test_initial_delay_only_for_empty_groups_and_extended_per_join_up_to_rebalance_timeout():
    h = Harness(initial_rebalance_delay_ms=3000)
    ra = h.join_new(client_id="A", rebalance=7000)[1]
    h.advance(2000)
    rb = h.join_new(client_id="B", rebalance=7000)[1]
    h.advance(1000)                              # first delay ends: B was added, so extend by 3000
    assert ra.parked and rb.parked
    h.advance(2000)
    rc = h.join_new(client_id="C", rebalance=7000)[1]
    h.advance(1000)                              # second delay ends: C added; remaining 1000 more
    assert ra.parked
    h.advance(999)
    assert ra.parked
    h.advance(1)
    assert ra.value["generation_id"] == 1 and len(ra.value["members"]) == 3
    assert rc.error == E.NONE
    # A later rebalance (not from Empty) completes as soon as everyone rejoined, without the delay.
    leader = h.group().leader_id
    h.sync("g", leader, 1, {})
    assert h.state() == "Stable"
    ids = list(h.group().members)
    replies = [h.join("g", leader, client_id="X", rebalance=7000)]
    assert h.state() == "PreparingRebalance"
    replies += [h.join("g", m, client_id="X", rebalance=7000) for m in ids if m != leader]
    assert all(not r.parked for r in replies)
    assert h.group().generation_id == 2


def test_zero_initial_delay_completes_the_first_join_at_once():
    h = Harness()
    mid, reply = h.join_new(client_id="A")
    assert reply.error == E.NONE and reply.value["generation_id"] == 1 and h.state() == "CompletingRebalance"


def test_broker_default_initial_delay_holds_a_new_groups_first_generation():
    """kafkaemu's default group.initial.rebalance.delay.ms is not 0 (docs/groups.md): consumers
    starting together make one first generation, and its leader has had time to learn the topic's
    partitions; a member joining during the delay extends it once more, as in Kafka."""
    from kafkaemu.config import BrokerConfig
    delay = BrokerConfig().classic.initial_rebalance_delay_ms
    assert delay > 0
    h = Harness(initial_rebalance_delay_ms=delay)
    a, ra = h.join_new(client_id="A")
    h.advance(delay // 2)
    b, rb = h.join_new(client_id="B")
    h.advance(delay - delay // 2)                # the first delay ends: B joined meanwhile, wait once more
    assert ra.parked and rb.parked and h.state() == "PreparingRebalance"
    h.advance(delay - 1)
    assert ra.parked and rb.parked
    h.advance(1)
    assert ra.value["generation_id"] == rb.value["generation_id"] == 1
    assert ra.value["leader"] == a and {m["member_id"] for m in ra.value["members"]} == {a, b}


def test_pending_member_that_never_rejoins_expires_after_session_timeout():
    h = Harness()
    a, b = h.stable_group(n=2)
    first = h.join(client_id="P", session=6000)
    pending = first.value["member_id"]
    ra = h.join("g", a, client_id="C1")
    h.join("g", b, client_id="C2")
    assert ra.parked                             # waiting for the pending member too
    h.advance(6000)
    assert not h.group().is_pending_member(pending)
    assert ra.error == E.NONE and h.state() == "CompletingRebalance"


def test_member_that_never_syncs_is_removed_after_rebalance_timeout():
    h = Harness(initial_rebalance_delay_ms=10)
    a, _ = h.join_new(client_id="A", rebalance=8000, session=30000)
    b, _ = h.join_new(client_id="B", rebalance=8000, session=30000)
    h.advance(20)
    leader = h.group().leader_id
    other = b if leader == a else a
    h.sync("g", leader, 1, {leader: b"x", other: b"y"})
    assert h.state() == "Stable"
    h.advance(8000)                               # the follower never sent SyncGroup
    assert other not in h.group().members and h.state() == "PreparingRebalance"


def test_parked_new_member_join_times_out_after_five_minutes():
    h = Harness()
    a, b = h.stable_group(n=2, session=1800000, rebalance=1800000)
    r_new = h.join(client_id="slow", version=3, session=1800000, rebalance=1800000)   # v3: added at once
    assert r_new.parked and h.state() == "PreparingRebalance"
    h.advance(300000)
    assert r_new.error == E.UNKNOWN_MEMBER_ID
    assert len(h.group().members) == 2


def test_every_transition_is_recorded_with_time_and_generation():
    h = Harness()
    start = h.now
    [a] = h.stable_group(n=1, session=6000)
    h.advance(6000)
    got = [(t.group_id, t.from_state.value, t.to_state.value, t.generation_id, t.at_ms - start) for t in h.c.transitions]
    assert got == [("g", "Empty", "PreparingRebalance", 0, 0), ("g", "PreparingRebalance", "CompletingRebalance", 1, 0),
                   ("g", "CompletingRebalance", "Stable", 1, 0), ("g", "Stable", "PreparingRebalance", 1, 6000),
                   ("g", "PreparingRebalance", "Empty", 2, 6000)]
