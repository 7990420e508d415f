"""JoinGroup/SyncGroup with a manual clock: member ids, parking, generations, vote, leader."""
from kafkaemu.protocol.errors import ErrorCode as E

from ..harness import Harness


def test_v4_plus_dynamic_member_gets_member_id_required_with_client_id_prefix():
    h = Harness()
    first = h.join(client_id="consumer-1")
    assert first.error == E.MEMBER_ID_REQUIRED
    mid = first.value["member_id"]
    assert mid.startswith("consumer-1-") and len(mid) == len("consumer-1-") + 36
    assert h.group().is_pending_member(mid) and not h.group().members
    second = h.join(member_id=mid, client_id="consumer-1")
    assert second.error == E.NONE and second.value["member_id"] == mid


def test_old_versions_get_a_member_id_in_the_first_answer():
    h = Harness()
    reply = h.join(client_id="sarama", version=1)
    assert reply.error == E.NONE
    assert reply.value["member_id"].startswith("sarama-")
    assert reply.value["generation_id"] == 1
    assert reply.value["leader"] == reply.value["member_id"]


def test_first_stable_generation_is_1_and_each_rebalance_adds_one():
    h = Harness()
    ids = h.stable_group(n=1)
    assert h.group().generation_id == 1
    ids2 = h.stable_group(n=1, gid="other")
    assert h.group("other").generation_id == 1
    mid, parked = h.join_new(client_id="C2")
    assert parked.parked and h.state() == "PreparingRebalance"
    h.rejoin_all_and_sync("g", ids + [mid])
    assert h.group().generation_id == 2
    assert ids2


def test_leader_gets_all_metadata_followers_get_none():
    h = Harness(initial_rebalance_delay_ms=3000)
    a, ra = h.join_new(client_id="A", protocols=[("range", b"meta-a")])
    b, rb = h.join_new(client_id="B", protocols=[("range", b"meta-b")])
    assert ra.parked and rb.parked
    h.advance(3000)   # B joined during the delay: extended once more (Kafka's initial-rebalance rule)
    assert ra.parked
    h.advance(3000)
    leader = ra.value
    assert leader["leader"] == a and leader["generation_id"] == 1 and leader["protocol_name"] == "range"
    assert leader["protocol_type"] == "consumer"
    assert {(m["member_id"], m["metadata"]) for m in leader["members"]} == {(a, b"meta-a"), (b, b"meta-b")}
    assert rb.value["members"] == [] and rb.value["leader"] == a


def test_followers_park_in_sync_until_leader_assigns_and_missing_members_get_empty():
    h = Harness(initial_rebalance_delay_ms=100)
    ids = [h.join_new(client_id=f"C{i}")[0] for i in range(3)]
    h.advance(200)
    leader = h.group().leader_id
    followers = [m for m in ids if m != leader]
    s1 = h.sync("g", followers[0], 1)
    s2 = h.sync("g", followers[1], 1)
    assert s1.parked and s2.parked and h.state() == "CompletingRebalance"
    sl = h.sync("g", leader, 1, {leader: b"L", followers[0]: b"F0"})
    assert h.state() == "Stable"
    assert sl.value["assignment"] == b"L" and s1.value["assignment"] == b"F0"
    assert s2.error == E.NONE and s2.value["assignment"] == b""
    assert s1.value["protocol_name"] == "range" and s1.value["protocol_type"] == "consumer"
    # Stable: a late SyncGroup gets the current assignment.
    assert h.sync("g", followers[0], 1).value["assignment"] == b"F0"


def test_protocol_vote_picks_most_voted_common_protocol():
    h = Harness(initial_rebalance_delay_ms=100)
    h.join_new(client_id="A", protocols=[("roundrobin", b""), ("range", b""), ("sticky", b"")])
    h.join_new(client_id="B", protocols=[("range", b""), ("roundrobin", b"")])
    h.join_new(client_id="C", protocols=[("range", b""), ("roundrobin", b"")])
    h.advance(200)
    assert h.group().protocol_name == "range"   # sticky is not common; range 2 votes, roundrobin 1


def test_member_supporting_none_of_the_groups_protocols_is_rejected():
    h = Harness()
    h.stable_group(n=1)
    reply = h.join(protocols=[("sticky", b"")], client_id="X")
    assert reply.error == E.INCONSISTENT_GROUP_PROTOCOL and reply.value["member_id"] == ""
    reply = h.join(protocols=[("range", b"")], protocol_type="connect", client_id="X")
    assert reply.error == E.INCONSISTENT_GROUP_PROTOCOL
    assert h.join(protocols=[], gid="fresh").error == E.INCONSISTENT_GROUP_PROTOCOL


def test_join_validation_errors():
    h = Harness()
    assert h.join(gid="").error == E.INVALID_GROUP_ID
    assert h.join(session=5999).error == E.INVALID_SESSION_TIMEOUT
    assert h.join(session=1800001).error == E.INVALID_SESSION_TIMEOUT
    assert h.join(gid="nope", member_id="ghost").error == E.UNKNOWN_MEMBER_ID
    assert h.group("nope") is None


def test_group_max_size():
    h = Harness(max_size=2)
    h.stable_group(n=2)
    third = h.join(version=3, client_id="C3")
    assert third.error == E.GROUP_MAX_SIZE_REACHED
    assert len(h.group().members) == 2 and h.state() == "Stable"


def test_join_completes_as_soon_as_all_known_members_rejoined():
    h = Harness()
    a, b = h.stable_group(n=2)
    ra = h.join("g", a, client_id="C1")   # the leader rejoining forces a rebalance
    assert ra.parked and h.state() == "PreparingRebalance"
    assert h.heartbeat("g", b, 2) == E.REBALANCE_IN_PROGRESS
    rb = h.join("g", b, client_id="C2")
    assert h.state() == "CompletingRebalance" and ra.value["generation_id"] == 3 == rb.value["generation_id"]


def test_follower_rejoin_with_same_metadata_in_stable_is_answered_without_rebalance():
    h = Harness()
    leader, follower = h.stable_group(n=2)
    reply = h.join("g", follower, client_id="C2")
    assert h.state() == "Stable"
    assert reply.error == E.NONE and reply.value["generation_id"] == 2 and reply.value["members"] == []
    changed = h.join("g", follower, client_id="C2", protocols=[("range", b"new-subscription")])
    assert changed.parked and h.state() == "PreparingRebalance"


def test_completing_rebalance_repeats_the_join_answer_for_same_metadata():
    h = Harness(initial_rebalance_delay_ms=10)
    a, _ = h.join_new(client_id="A")
    b, _ = h.join_new(client_id="B")
    h.advance(20)
    again = h.join("g", a, client_id="A")
    assert again.error == E.NONE and again.value["generation_id"] == 1
    assert len(again.value["members"]) == 2       # a is the leader
    assert h.state() == "CompletingRebalance"


def test_sync_errors():
    h = Harness()
    leader, follower = h.stable_group(n=2)
    assert h.sync("g", follower, 1).error == E.ILLEGAL_GENERATION
    assert h.sync("g", "ghost", 2).error == E.UNKNOWN_MEMBER_ID
    assert h.sync("nope", follower, 2).error == E.UNKNOWN_MEMBER_ID
    assert h.sync("g", follower, 2, protocol_type="connect").error == E.INCONSISTENT_GROUP_PROTOCOL
    assert h.sync("g", follower, 2, protocol_name="roundrobin").error == E.INCONSISTENT_GROUP_PROTOCOL
    assert h.sync("g", follower, 2, protocol_type="consumer", protocol_name="range").error == E.NONE


def test_new_member_during_completing_rebalance_sends_parked_syncs_rebalance_in_progress():
    h = Harness(initial_rebalance_delay_ms=10)
    a, _ = h.join_new(client_id="A")
    b, _ = h.join_new(client_id="B")
    h.advance(20)
    follower = b if h.group().leader_id == a else a
    parked = h.sync("g", follower, 1)
    assert parked.parked
    h.join_new(client_id="C")
    assert h.state() == "PreparingRebalance"
    assert parked.error == E.REBALANCE_IN_PROGRESS and parked.value["assignment"] == b""


def test_leave_moves_group_to_rebalance_or_empty_and_reelects_leader():
    h = Harness()
    leader, follower = h.stable_group(n=2)
    resp = h.leave("g", leader)
    assert resp["error_code"] == 0 and resp["members"][0]["error_code"] == 0
    assert h.group().leader_id == follower
    assert h.state() == "PreparingRebalance"
    # The remaining member rejoins: it is the only one left, so the join completes at once.
    r = h.join("g", follower, client_id="C2")
    assert r.value["leader"] == follower and r.value["generation_id"] == 3
    h.sync("g", follower, 3, {follower: b"all"})
    h.leave("g", follower)
    assert h.state() == "Empty" and h.group().generation_id == 4
    assert h.group().protocol_name is None


def test_leave_errors_and_batch():
    h = Harness()
    a, b = h.stable_group(n=2)
    # no such group: Kafka answers each member UNKNOWN_MEMBER_ID, with no top-level error
    assert [(r["error_code"], r["member_id"]) for r in h.leave("nope", a)["members"]] == [(E.UNKNOWN_MEMBER_ID, a)]
    assert h.leave("nope", a)["error_code"] == 0
    resp = h.leave("g", a, "ghost", ("", "no-such-instance"))
    assert [m["error_code"] for m in resp["members"]] == [0, E.UNKNOWN_MEMBER_ID, E.UNKNOWN_MEMBER_ID]
    assert set(h.group().members) == {b}


def test_pending_member_can_leave():
    h = Harness()
    first = h.join(client_id="P")
    mid = first.value["member_id"]
    assert h.leave("g", mid)["members"][0]["error_code"] == 0
    assert not h.group().is_pending_member(mid)


def test_duplicate_parked_requests_release_the_superseded_reply():
    h = Harness()
    a, b = h.stable_group(n=2)
    first = h.join("g", a, client_id="C1")
    second = h.join("g", a, client_id="C1")
    assert first.error == E.REBALANCE_IN_PROGRESS and second.parked
    h.join("g", b, client_id="C2")
    assert second.error == E.NONE and h.state() == "CompletingRebalance"
    follower = b if h.group().leader_id == a else a
    s1 = h.sync("g", follower, 3)
    s2 = h.sync("g", follower, 3)
    assert s1.error == E.REBALANCE_IN_PROGRESS and s2.parked
