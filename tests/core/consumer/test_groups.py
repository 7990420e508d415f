"""KIP-848 consumer groups in the pure coordinator: epochs, incremental revocation, fencing, timers."""
from __future__ import annotations

import itertools
import random

import pytest

from kafkaemu.core.consumer.member import MemberState
from kafkaemu.core.classic.requests import Heartbeat, JoinGroup, LeaveGroup, LeavingMember
from kafkaemu.core.offsets.requests import CommitPartition, OffsetCommit, TxnOffsetCommit
from kafkaemu.protocol.errors import ErrorCode as E

from .harness import Client, ConsumerHarness, settle, tid

T = tid("t")


def owners(h: ConsumerHarness, gid: str = "g") -> dict[tuple[bytes, int], list[str]]:
    """Every partition a member holds or still revokes, as the coordinator sees it."""
    out: dict[tuple[bytes, int], list[str]] = {}
    group = h.group(gid)
    for m in (group.members.values() if group else ()):
        for a in (m.assigned, m.pending_revocation):
            for t, ps in a.items():
                for p in ps:
                    out.setdefault((t, p), []).append(m.member_id)
    return out


def assert_disjoint_clients(clients: list[Client]) -> None:
    seen: dict[tuple[bytes, int], str] = {}
    for c in clients:
        for t, ps in c.owned.items():
            for p in ps:
                assert (t, p) not in seen, f"{(t, p)} owned by {seen[(t, p)]} and {c.member_id}"
                seen[(t, p)] = c.member_id


# ---------------------------------------------------------------- joining and epochs
def test_first_member_gets_every_partition_at_epoch_two():
    """A new group is at epoch 1 (Kafka's ModernGroup); the first member moves it to 2."""
    h = ConsumerHarness()
    r = h.heartbeat(member_id="m1")
    assert r["error_code"] == 0
    assert r["member_id"] == "m1" and r["member_epoch"] == 2
    assert r["heartbeat_interval_ms"] == 5000
    assert r["assignment"] == {"topic_partitions": [{"topic_id": T, "partitions": [0, 1, 2, 3, 4, 5]}]}
    assert h.state() == "Stable"
    assert h.group().group_epoch == 2 and h.group().assignment_epoch == 2


def test_v0_empty_member_id_gets_a_generated_one():
    h = ConsumerHarness()
    r = h.heartbeat(member_id="", version=0)
    assert r["error_code"] == 0
    assert len(r["member_id"]) == 22 and r["member_id"] in h.group().members


def test_steady_heartbeat_carries_no_assignment():
    h = ConsumerHarness()
    a = Client(h, "m1")
    a.beat()
    r = a.beat()
    assert r["error_code"] == 0 and r["member_epoch"] == 2 and r["assignment"] is None


def test_second_member_waits_until_first_revokes():
    h = ConsumerHarness()
    a, b = Client(h, "a"), Client(h, "b")
    a.beat()
    r = b.beat()
    assert r["member_epoch"] == 3
    assert b.partitions() == set()                      # every target partition is still owned by a
    assert h.group().members["b"].state is MemberState.UNRELEASED_PARTITIONS
    assert h.state() == "Reconciling"
    r = a.beat()                                        # a is asked to revoke: its epoch stays 2
    assert r["member_epoch"] == 2 and len(a.partitions()) == 3
    assert h.group().members["a"].state is MemberState.UNREVOKED_PARTITIONS
    revoked = set(range(6)) - a.partitions()
    assert b.beat()["assignment"] is None               # not released yet
    assert b.partitions() == set()
    r = a.beat()                                        # acknowledges: reports only the 3 it kept
    assert r["member_epoch"] == 3
    b.beat()
    assert b.partitions() == revoked
    assert h.state() == "Stable"


def test_revocation_is_not_acknowledged_while_still_reported():
    h = ConsumerHarness()
    a, b = Client(h, "a"), Client(h, "b")
    a.beat()
    b.beat()
    a.beat()
    keep = a.partitions()
    for _ in range(3):   # a keeps reporting all six partitions: nothing moves
        r = h.heartbeat(member_id="a", epoch=2, owned={T: set(range(6))})
        assert r["member_epoch"] == 2
        b.beat()
        assert b.partitions() == set()
    r = h.heartbeat(member_id="a", epoch=2, owned={T: keep})
    assert r["member_epoch"] == 3
    b.beat()
    assert b.partitions() == set(range(6)) - keep


@pytest.mark.parametrize("seed", range(25))
def test_random_interleavings_stay_disjoint_and_end_complete_and_balanced(seed):
    rnd = random.Random(seed)
    h = ConsumerHarness({"t": 6, "u": 5})
    clients = [Client(h, f"m{i}", topics=("t", "u")) for i in range(3)]
    active: list[Client] = []
    for step in range(120):
        c = rnd.choice(clients)
        if c not in active and rnd.random() < 0.5:
            active.append(c)
        if c in active:
            if rnd.random() < 0.05 and len(active) > 1:
                c.leave()
                active.remove(c)
            else:
                c.beat()
        assert all(len(v) == 1 for v in owners(h).values())
        assert_disjoint_clients(active)
    settle(clients)
    sizes = sorted(sum(len(ps) for ps in c.owned.values()) for c in clients)
    assert sum(sizes) == 11 and sizes[-1] - sizes[0] <= 1
    assert h.state() == "Stable"


def test_three_members_disjoint_and_complete():
    h = ConsumerHarness()
    clients = [Client(h, f"m{i}") for i in range(3)]
    for c in clients:
        c.beat()
    settle(clients)
    assert [len(c.partitions()) for c in clients] == [2, 2, 2]
    assert set().union(*(c.partitions() for c in clients)) == set(range(6))
    assert_disjoint_clients(clients)


# ---------------------------------------------------------------- validation and fencing
@pytest.mark.parametrize("kwargs, code, message", [
    (dict(gid=""), E.INVALID_REQUEST, "GroupId can't be empty."),
    (dict(member_id=""), E.INVALID_REQUEST, "MemberId can't be empty."),
    (dict(instance=""), E.INVALID_REQUEST, "InstanceId can't be empty."),
    (dict(topics=[]), E.INVALID_REQUEST,
     "SubscribedTopicNames or SubscribedTopicRegex must be set in first request."),
    (dict(owned={T: {0}}), E.INVALID_REQUEST, "TopicPartitions must be empty when (re-)joining."),
    (dict(owned={T: set()}), E.INVALID_REQUEST, "TopicPartitions must be empty when (re-)joining."),
    (dict(epoch=-3), E.INVALID_REQUEST, "MemberEpoch is invalid."),
    (dict(epoch=-2), E.INVALID_REQUEST, "InstanceId can't be null."),
    (dict(assignor="sticky"), E.UNSUPPORTED_ASSIGNOR,
     "ServerAssignor sticky is not supported. Supported assignors: uniform, range."),
])
def test_invalid_requests(kwargs, code, message):
    h = ConsumerHarness()
    r = h.heartbeat(**kwargs)
    assert r["error_code"] == code and r["error_message"] == message
    assert h.group() is None


def test_first_request_needs_a_rebalance_timeout():
    h = ConsumerHarness()
    from kafkaemu.core.consumer.requests import ConsumerHeartbeat
    r = h.c.consumer_group_heartbeat(h.now, ConsumerHeartbeat("g", "m1", 0, subscribed_topic_names=["t"], owned={}),
                                     dict(h.topics))
    assert r["error_code"] == E.INVALID_REQUEST
    assert r["error_message"] == "RebalanceTimeoutMs must be provided in first request."


def test_invalid_regex():
    h = ConsumerHarness()
    r = h.heartbeat(topics=None, regex="t[")
    assert r["error_code"] == E.INVALID_REGULAR_EXPRESSION == 128


def test_unknown_group_and_unknown_member():
    h = ConsumerHarness()
    r = h.heartbeat(member_id="x", epoch=3, owned={})
    assert r["error_code"] == E.GROUP_ID_NOT_FOUND
    h.heartbeat(member_id="m1")
    r = h.heartbeat(member_id="x", epoch=3, owned={})
    assert r["error_code"] == E.UNKNOWN_MEMBER_ID
    assert r["error_message"] == "Member x is not a member of group g."


def test_epochs_ahead_or_behind_are_fenced_but_a_lost_response_is_tolerated():
    h = ConsumerHarness()
    a, b = Client(h, "a"), Client(h, "b")
    a.beat()
    b.beat()
    a.beat()
    a.beat()                                     # a is at epoch 3 now, previous epoch 2
    assert a.epoch == 3
    assert h.heartbeat(member_id="a", epoch=4, owned=a.owned)["error_code"] == E.FENCED_MEMBER_EPOCH
    # The epoch-3 answer was lost: epoch 2 with a subset of the assignment is accepted.
    r = h.heartbeat(member_id="a", epoch=2, owned=a.owned)
    assert r["error_code"] == 0 and r["member_epoch"] == 3
    # Epoch 2 claiming a partition no longer assigned is fenced.
    bp = next(iter(b.partitions() or {5}))
    r = h.heartbeat(member_id="a", epoch=2, owned={T: a.partitions() | {bp}})
    assert r["error_code"] == E.FENCED_MEMBER_EPOCH
    assert h.heartbeat(member_id="a", epoch=0)["error_code"] == E.FENCED_MEMBER_EPOCH


def test_fenced_member_can_rejoin_with_epoch_zero_after_leaving():
    h = ConsumerHarness()
    a = Client(h, "a")
    a.beat()
    assert a.leave()["member_epoch"] == -1
    assert h.state() == "Empty"
    r = a.beat()
    assert r["error_code"] == 0 and r["member_epoch"] == 4 and a.partitions() == set(range(6))


# ---------------------------------------------------------------- leaving, session and rebalance timeouts
def test_leave_moves_partitions_to_the_others_and_they_keep_theirs():
    h = ConsumerHarness()
    clients = [Client(h, f"m{i}") for i in range(3)]
    for c in clients:
        c.beat()
    settle(clients)
    before = {c.member_id: c.partitions() for c in clients}
    r = clients[0].leave()
    assert r == {"error_code": 0, "error_message": None, "member_id": "m0", "member_epoch": -1,
                 "heartbeat_interval_ms": 0, "assignment": None}
    settle(clients[1:])
    for c in clients[1:]:
        assert before[c.member_id] <= c.partitions() and len(c.partitions()) == 3
    assert clients[1].partitions() | clients[2].partitions() == set(range(6))


def test_after_a_leave_each_remaining_member_is_given_its_new_target_in_its_next_heartbeat_answer():
    # As Kafka 4.4 answers librdkafka (debug=cgrp, BENCHMARKS.md issue 31): the first heartbeat of
    # each remaining member after the leave is answered at the bumped epoch with its whole new target
    # (the leaver's partitions are free: nothing to revoke first, no second heartbeat needed).
    h = ConsumerHarness(topics={"t": 3})
    clients = [Client(h, f"m{i}") for i in range(3)]
    for c in clients:
        c.beat()
    settle(clients)
    assert sorted(len(c.partitions()) for c in clients) == [1, 1, 1]
    before = {c.member_id: c.partitions() for c in clients[:2]}
    h.advance(2500)
    epoch = h.group().group_epoch
    clients[2].leave()
    assert h.group().group_epoch == epoch + 1
    h.advance(2500)
    answers = [c.beat() for c in clients[:2]]
    assert [r["member_epoch"] for r in answers] == [epoch + 1, epoch + 1]
    assert clients[0].partitions() | clients[1].partitions() == {0, 1, 2}
    for c, r in zip(clients[:2], answers):
        assert before[c.member_id] <= c.partitions()
        assert (r["assignment"] is not None) == (c.partitions() != before[c.member_id])
    assert all(m.state is MemberState.STABLE for m in h.group().members.values())


def test_leave_of_unknown_member_and_group():
    h = ConsumerHarness()
    assert h.heartbeat(member_id="a", epoch=-1)["error_code"] == E.GROUP_ID_NOT_FOUND
    h.heartbeat(member_id="m1")
    assert h.heartbeat(member_id="a", epoch=-1)["error_code"] == E.UNKNOWN_MEMBER_ID


def test_session_timeout_fences_a_silent_member():
    h = ConsumerHarness()
    a, b = Client(h, "a"), Client(h, "b")
    a.beat()
    b.beat()
    settle([a, b])
    for _ in range(10):                     # b keeps heartbeating, a is silent
        h.advance(5000)
        b.beat()
    assert "a" not in h.group().members
    assert b.partitions() == set(range(6))
    assert h.heartbeat(member_id="a", epoch=a.epoch, owned=a.owned)["error_code"] == E.UNKNOWN_MEMBER_ID


def test_session_timeout_is_configurable_and_expires_at_its_deadline():
    h = ConsumerHarness(session_timeout_ms=6000, heartbeat_interval_ms=500)
    assert h.heartbeat(member_id="a")["heartbeat_interval_ms"] == 500
    h.advance(5999)
    assert "a" in h.group().members
    h.advance(1)
    assert h.state() == "Empty"


def test_session_timers_of_ids_with_dashes_do_not_collide():
    # Group "a-b" member "c" and group "a" member "b-c" once shared the timer key "consumer-session-a-b-c".
    h = ConsumerHarness(session_timeout_ms=6000)
    h.heartbeat("a-b", member_id="c")
    h.advance(3000)
    h.heartbeat("a", member_id="b-c")
    h.advance(3000)
    assert h.state("a-b") == "Empty" and h.state("a") == "Stable"
    h.advance(3000)
    assert h.state("a") == "Empty"


def test_rebalance_timeout_fences_a_member_that_does_not_revoke():
    h = ConsumerHarness()
    a, b = Client(h, "a"), Client(h, "b")
    h.heartbeat(member_id="a", rebalance=10000)
    a.epoch, a.owned = 2, {T: set(range(6))}
    b.beat()
    h.heartbeat(member_id="a", epoch=2, owned={T: set(range(6))})   # told to revoke; never does
    assert h.group().members["a"].state is MemberState.UNREVOKED_PARTITIONS
    for _ in range(3):
        h.advance(3000)
        h.heartbeat(member_id="a", epoch=2, owned={T: set(range(6))})
        b.beat()
    assert "a" in h.group().members
    h.advance(1000)
    assert "a" not in h.group().members
    b.beat()
    assert b.partitions() == set(range(6))


# ---------------------------------------------------------------- static members
def test_static_member_restart_gets_its_partitions_back_without_a_rebalance():
    h = ConsumerHarness()
    a = Client(h, "a1", instance="ia")
    b = Client(h, "b1", instance="ib")
    a.beat()
    b.beat()
    settle([a, b])
    mine = a.partitions()
    epoch = h.group().group_epoch
    r = a.leave(-2)
    assert r["member_epoch"] == -2
    assert h.group().members["a1"].member_epoch == -2
    assert h.group().group_epoch == epoch            # a temporary leave does not rebalance
    b.beat()
    assert len(b.partitions()) == 3                  # nothing of a's moves to b
    a.member_id = "a2"                               # the restarted process has a new member id
    r = a.beat()
    assert r["error_code"] == 0 and r["member_id"] == "a2" and r["member_epoch"] == epoch
    assert a.partitions() == mine
    assert h.group().group_epoch == epoch and "a1" not in h.group().members
    assert h.heartbeat(member_id="a1", epoch=epoch, owned={}, instance="ia")["error_code"] == E.FENCED_INSTANCE_ID


def test_static_instance_in_use_is_unreleased():
    h = ConsumerHarness()
    h.heartbeat(member_id="a1", instance="ia")
    r = h.heartbeat(member_id="a2", instance="ia")
    assert r["error_code"] == E.UNRELEASED_INSTANCE_ID


def test_static_member_that_left_temporarily_expires_with_its_session():
    h = ConsumerHarness()
    a, b = Client(h, "a1", instance="ia"), Client(h, "b1")
    a.beat()
    b.beat()
    settle([a, b])
    a.leave(-2)
    for _ in range(10):
        h.advance(5000)
        b.beat()
    assert "a1" not in h.group().members and b.partitions() == set(range(6))


def test_static_member_leaving_for_good():
    h = ConsumerHarness()
    a = Client(h, "a1", instance="ia")
    a.beat()
    assert a.leave(-1)["member_epoch"] == -1
    assert h.state() == "Empty" and h.group().static_members == {}
    assert h.heartbeat(member_id="a1", epoch=-2, instance="ix")["error_code"] == E.UNKNOWN_MEMBER_ID


# ---------------------------------------------------------------- metadata and regex
def test_new_partitions_bump_the_group_epoch():
    h = ConsumerHarness({"t": 2})
    a, b = Client(h, "a"), Client(h, "b")
    a.beat()
    b.beat()
    settle([a, b])
    epoch = h.group().group_epoch
    h.set_topic("t", 4)
    settle([a, b])
    assert h.group().group_epoch == epoch + 1
    assert a.partitions() | b.partitions() == {0, 1, 2, 3} and len(a.partitions()) == 2


def test_regex_subscription_picks_up_new_topics():
    h = ConsumerHarness({"orders-1": 2, "other": 2})
    a = Client(h, "a", topics=None, regex="orders-.*")
    a.beat()
    assert a.owned == {tid("orders-1"): {0, 1}}
    h.set_topic("orders-2", 1)
    h.set_topic("__orders-internal", 1)
    a.beat()
    assert a.owned == {tid("orders-1"): {0, 1}, tid("orders-2"): {0}}


def test_a_changed_subscription_bumps_the_epoch_but_a_changed_assignor_alone_does_not():
    h = ConsumerHarness({"t": 2, "u": 2})
    a = Client(h, "a")
    a.beat()
    r = h.heartbeat(member_id="a", epoch=2, owned=a.owned, assignor="range")
    assert r["member_epoch"] == 2 and h.group().group_epoch == 2
    r = h.heartbeat(member_id="a", epoch=2, owned=a.owned, topics=["t", "u"])
    assert r["member_epoch"] == 3 and h.group().group_epoch == 3
    assert {t["topic_id"] for t in r["assignment"]["topic_partitions"]} == {T, tid("u")}
    assert h.c.consumer_group_describe(h.now, ["g"], {})[0]["assignor_name"] == "range"


def test_deleted_topic_is_revoked_and_the_epoch_bumps():
    h = ConsumerHarness({"t": 2, "gone": 2})
    a = Client(h, "a", topics=("t", "gone"))
    a.beat()
    assert set(a.owned) == {T, tid("gone")}
    del h.topics["gone"]
    r = a.beat()                       # asked to give up the deleted topic's partitions
    assert r["member_epoch"] == 2 and a.owned == {T: {0, 1}}
    assert a.beat()["member_epoch"] == 3
    assert h.group().members["a"].pending_revocation == {}


def test_subscribing_to_a_missing_topic_then_creating_it():
    h = ConsumerHarness({})
    a = Client(h, "a", topics=("later",))
    assert a.beat()["assignment"] == {"topic_partitions": []}
    h.set_topic("later", 3)
    a.beat()
    assert a.partitions("later") == {0, 1, 2}


# ---------------------------------------------------------------- assignor choice and describe
def test_members_choose_the_range_assignor():
    h = ConsumerHarness({"t1": 3, "t2": 4})
    clients = [Client(h, f"C{i}", topics=("t1", "t2"), assignor="range") for i in (1, 2)]
    for c in clients:
        c.beat()
    settle(clients)
    desc = h.c.consumer_group_describe(h.now, ["g"], {tid("t1"): "t1", tid("t2"): "t2"})[0]
    assert desc["assignor_name"] == "range"
    assert clients[0].owned == {tid("t1"): {0, 1}, tid("t2"): {0, 1}}
    assert clients[1].owned == {tid("t1"): {2}, tid("t2"): {2, 3}}


def test_describe():
    h = ConsumerHarness()
    a = Client(h, "a")
    a.beat()
    [d] = h.c.consumer_group_describe(h.now, ["g"], {T: "t"}, include_authorized_operations=True)
    assert d["error_code"] == 0 and d["group_state"] == "Stable"
    assert d["group_epoch"] == 2 and d["assignment_epoch"] == 2 and d["assignor_name"] == "uniform"
    assert d["authorized_operations"] == (1 << 3) | (1 << 6) | (1 << 8) | (1 << 10) | (1 << 11)   # AclEntry.supportedOperations(GROUP)
    [m] = d["members"]
    assert m["member_id"] == "a" and m["member_epoch"] == 2 and m["client_id"] == "C1"
    assert m["subscribed_topic_names"] == ["t"]
    assert m["subscribed_topic_regex"] == ""     # unset: ConsumerGroupMember.Builder's default
    assert m["assignment"] == m["target_assignment"] == {
        "topic_partitions": [{"topic_id": T, "topic_name": "t", "partitions": [0, 1, 2, 3, 4, 5]}]}
    [unknown] = h.c.consumer_group_describe(h.now, ["nope"], {})
    assert unknown["error_code"] == E.GROUP_ID_NOT_FOUND


# ---------------------------------------------------------------- the shared namespace with classic groups
def _join_classic(h, gid="cg"):
    replies = []
    h.c.join_group(h.now, JoinGroup(gid, "", "consumer", [("range", b"x")], api_version=3), replies.append)
    return replies


def test_a_classic_join_on_a_consumer_group_is_served_by_it():
    h = ConsumerHarness()
    h.heartbeat(member_id="a")
    replies = []
    h.c.join_group(h.now, JoinGroup("g", "", "consumer", [("range", b"x")]), replies.append)
    assert replies[0]["error_code"] == E.MEMBER_ID_REQUIRED   # as a classic group would (KIP-394)
    replies = []
    h.c.join_group(h.now, JoinGroup("g", "", "connect", [("range", b"x")]), replies.append)
    assert replies[0]["error_code"] == E.INCONSISTENT_GROUP_PROTOCOL
    # a consumer-protocol member cannot heartbeat through the classic protocol
    assert h.c.heartbeat(h.now, Heartbeat("g", 1, "a"))["error_code"] == E.UNKNOWN_MEMBER_ID


def test_consumer_heartbeat_on_a_live_classic_group_is_not_found():
    h = ConsumerHarness()
    assert _join_classic(h)[0]["error_code"] == 0
    r = h.heartbeat(gid="cg", member_id="a")
    assert r["error_code"] == E.GROUP_ID_NOT_FOUND and r["error_message"] == "Group cg is not a consumer group."
    [d] = h.c.consumer_group_describe(h.now, ["cg"], {})
    assert d["error_code"] == E.GROUP_ID_NOT_FOUND


def test_an_empty_classic_group_with_offsets_becomes_a_consumer_group():
    h = ConsumerHarness()
    h.c.commit_offsets(h.now, OffsetCommit("g", [("t", [CommitPartition(0, 42)])]))
    assert "g" in h.c.classic.groups
    assert h.heartbeat(member_id="a")["member_epoch"] == 2
    assert "g" not in h.c.classic.groups and h.state() == "Stable"
    fetched = h.c.fetch_offsets(h.now, "g", [("t", [0])], "a", 2)
    assert fetched["error_code"] == 0 and fetched["topics"][0]["partitions"][0]["committed_offset"] == 42


def test_list_and_describe_groups_see_consumer_groups():
    h = ConsumerHarness()
    h.heartbeat(member_id="a")
    _join_classic(h)
    listed = {g["group_id"]: g for g in h.c.list_groups(h.now)}
    assert listed["g"] == {"group_id": "g", "protocol_type": "consumer", "group_state": "Stable",
                           "group_type": "consumer"}
    assert listed["cg"]["group_type"] == "classic"
    assert [g["group_id"] for g in h.c.list_groups(h.now, types_filter=["Consumer"])] == ["g"]
    assert [g["group_id"] for g in h.c.list_groups(h.now, types_filter=["classic"])] == ["cg"]
    assert [g["group_id"] for g in h.c.list_groups(h.now, states_filter=["stable"])] == ["g"]
    [d] = h.c.describe_groups(h.now, ["g"])
    assert d["group_state"] == "Dead" and d["error_code"] == 0


def test_offset_commit_checks_member_epochs():
    h = ConsumerHarness()
    a = Client(h, "a")
    a.beat()

    def commit(member, epoch, version=9):
        out = h.c.commit_offsets(h.now, OffsetCommit("g", [("t", [CommitPartition(0, 7)])], epoch, member,
                                                     api_version=version))
        return out["topics"][0]["partitions"][0]["error_code"]

    assert commit("a", 2) == 0
    assert commit("a", 0) == E.STALE_MEMBER_EPOCH
    assert commit("a", 3) == E.STALE_MEMBER_EPOCH
    assert commit("zz", 2) == E.UNKNOWN_MEMBER_ID
    assert commit("", -1) == E.UNKNOWN_MEMBER_ID       # a group with members takes no standalone commits
    assert commit("a", 2, version=8) == E.UNSUPPORTED_VERSION
    assert "g" not in h.c.classic.groups                       # no classic twin created
    assert h.c.fetch_offsets(h.now, "g", [("t", [0])], "a", 0)["error_code"] == E.STALE_MEMBER_EPOCH
    assert h.c.fetch_offsets(h.now, "g", [("t", [0])], "zz", 2)["error_code"] == E.UNKNOWN_MEMBER_ID
    assert h.c.fetch_offsets(h.now, "g", [("t", [0])])["topics"][0]["partitions"][0]["committed_offset"] == 7
    a.leave()
    assert commit("", -1) == 0                          # empty now: standalone commits are fine


def test_delete_groups_and_offset_delete():
    h = ConsumerHarness()
    a = Client(h, "a")
    a.beat()
    h.c.commit_offsets(h.now, OffsetCommit("g", [("t", [CommitPartition(0, 7)]), ("u", [CommitPartition(0, 1)])],
                                           1, "a"))
    out = h.c.delete_offsets(h.now, "g", [("t", [0]), ("u", [0])])
    assert [t["partitions"][0]["error_code"] for t in out["topics"]] == [E.GROUP_SUBSCRIBED_TO_TOPIC, 0]
    assert h.c.delete_groups(h.now, ["g"]) == [{"group_id": "g", "error_code": E.NON_EMPTY_GROUP}]
    a.leave()
    assert h.c.delete_groups(h.now, ["g"]) == [{"group_id": "g", "error_code": 0}]
    assert h.group() is None
    assert h.c.fetch_offsets(h.now, "g", [("t", [0])])["topics"][0]["partitions"][0]["committed_offset"] == -1


def test_classic_leave_group_removes_consumer_members():
    h = ConsumerHarness()
    Client(h, "a", instance="ia").beat()
    Client(h, "b").beat()
    out = h.c.leave_group(h.now, LeaveGroup("g", [LeavingMember("", "ia"), LeavingMember("zz")]))
    assert [m["error_code"] for m in out["members"]] == [0, E.UNKNOWN_MEMBER_ID]
    assert list(h.group().members) == ["b"]


def test_empty_consumer_group_expires_with_its_offsets():
    h = ConsumerHarness()
    a = Client(h, "a")
    a.beat()
    h.c.commit_offsets(h.now, OffsetCommit("g", [("t", [CommitPartition(0, 7)])], 1, "a"))
    h.advance(8 * 24 * 3600 * 1000)   # a is long gone (session), offsets past retention
    assert h.group() is None
    assert h.c.offsets.store.group("g") == {}


def test_group_state_transitions_are_recorded():
    h = ConsumerHarness()
    a, b = Client(h, "a"), Client(h, "b")
    a.beat()
    b.beat()
    settle([a, b])
    a.leave()
    b.leave()
    seen = [(t.group_id, t.from_state.value, t.to_state.value, t.generation_id) for t in h.c.transitions]
    assert seen == [("g", "Empty", "Stable", 2), ("g", "Stable", "Reconciling", 3),
                    ("g", "Reconciling", "Stable", 3),
                    # A departure bumps the epoch; the next heartbeat computes the new target (Kafka too).
                    ("g", "Stable", "Assigning", 4), ("g", "Assigning", "Empty", 5)]


def test_many_members_join_in_any_order():
    for order in itertools.permutations(range(4)):
        h = ConsumerHarness({"t": 8})
        clients = [Client(h, f"m{i}") for i in order]
        for c in clients:
            c.beat()
        settle(clients)
        assert sorted(len(c.partitions()) for c in clients) == [2, 2, 2, 2]
        assert_disjoint_clients(clients)


def test_a_commit_at_an_older_epoch_is_checked_partition_by_partition_against_assignment_epochs():
    """ConsumerGroup.validateOffsetCommit with createAssignmentEpochValidator (Kafka 4.4): an older
    member epoch may commit a partition held since that epoch or before (assigned or pending
    revocation); a partition it may not commit fails the whole request (the validator throws)."""
    h = ConsumerHarness()
    a, b = Client(h, "a"), Client(h, "b")
    a.beat()
    first = a.epoch
    assert a.partitions() == set(range(6))

    def commit(member, epoch, partitions, topic="t", txn=False, txn_version=4):
        parts = [CommitPartition(p, 7) for p in partitions]
        if txn:
            req = TxnOffsetCommit("tx", "g", 9, 0, [(topic, parts)], generation_id=epoch, member_id=member,
                                  api_version=txn_version)
            out = h.c.commit_transactional_offsets(h.now, req)
        else:
            out = h.c.commit_offsets(h.now, OffsetCommit("g", [(topic, parts)], epoch, member, api_version=9))
        return [p["error_code"] for p in out["topics"][0]["partitions"]]

    b.beat()   # the group's epoch moves on: a gives up half of its partitions to b
    settle([a, b])
    kept, given = a.partitions(), b.partitions()
    assert len(kept) == 3 and a.epoch > first
    assert given == set(range(6)) - kept and b.epoch == a.epoch
    one_kept, one_given = min(kept), min(given)
    assert commit("a", first, [one_kept]) == [0]                     # held since the first epoch
    assert commit("a", first, [one_given]) == [E.STALE_MEMBER_EPOCH]  # given away
    assert commit("a", first, [one_kept, one_given]) == [E.STALE_MEMBER_EPOCH] * 2   # the whole request fails
    assert commit("a", a.epoch + 1, [one_kept]) == [E.STALE_MEMBER_EPOCH]            # newer than the member's
    assert commit("a", first, [0], topic="other") == [E.STALE_MEMBER_EPOCH]          # not its topic
    assert commit("b", first, [one_given]) == [E.STALE_MEMBER_EPOCH]  # given at a later epoch
    assert commit("b", b.epoch, [one_given]) == [0]
    assert commit("a", first, [one_kept, one_given], txn=True) == [E.ILLEGAL_GENERATION] * 2
    # TxnOffsetCommit v6 (Kafka 4.4: supportsStaleMemberEpochError) answers STALE_MEMBER_EPOCH as it is
    assert commit("a", first, [one_kept, one_given], txn=True, txn_version=5) == [E.ILLEGAL_GENERATION] * 2
    assert commit("a", first, [one_kept, one_given], txn=True, txn_version=6) == [E.STALE_MEMBER_EPOCH] * 2
    assert commit("a", a.epoch + 1, [one_kept], txn=True, txn_version=5) == [E.ILLEGAL_GENERATION]
    assert commit("a", a.epoch + 1, [one_kept], txn=True, txn_version=6) == [E.STALE_MEMBER_EPOCH]
    assert commit("a", first, [one_kept], txn=True) == [0]
    assert commit("", -1, [one_kept], txn=True) == [0]   # a producer committing without the group's member
    fetched = h.c.fetch_offsets(h.now, "g", [("t", [one_kept, one_given])])["topics"][0]["partitions"]
    assert [p["committed_offset"] for p in fetched] == [7, 7]
    member = h.group().members["a"]
    assert {p: member.assignment_epoch(tid("t"), p) for p in kept} == {p: first for p in kept}

