"""Control operations on the clock and on one member's session, against the broker core."""
import re

import pytest

from kafkaemu.control.params import BadRequest, ControlError
from kafkaemu.protocol.api_keys import ApiKey
from tests.conftest import T0

from .harness import Env


def test_clock_reads_advances_and_sets_the_manual_clock():
    env = Env()
    assert env.op("clock_get") == {"now_ms": T0, "manual": True, "iso": "2023-11-14T22:13:20.000Z"}
    assert env.op("clock_advance", ms="1m30s")["now_ms"] == T0 + 90_000
    assert env.op("clock_advance", ms=250)["now_ms"] == T0 + 90_250
    assert env.op("clock_set", now_ms="2023-11-14T23:00:00Z")["now_ms"] == 1_700_002_800_000
    assert env.broker.now_ms == 1_700_002_800_000   # the broker ticked to the new time


def test_clock_refuses_negative_durations_going_back_and_the_system_clock():
    env = Env()
    with pytest.raises(BadRequest, match="must not be negative"):
        env.op("clock_advance", ms=-5)
    with pytest.raises(BadRequest, match="must not be negative"):
        env.op("clock_advance", ms="-5s")
    with pytest.raises(BadRequest, match="duration such as"):
        env.op("clock_advance", ms="5 parsecs")
    with pytest.raises(ControlError, match="only moves forward") as refused:
        env.op("clock_set", now_ms=T0 - 1)
    assert refused.value.status == 409
    assert env.op("clock_get")["now_ms"] == T0
    with pytest.raises(ControlError, match="--manual-clock") as refused:
        Env(manual=False).op("clock_advance", ms=1000)
    assert refused.value.status == 409


def test_advancing_the_clock_fires_due_session_timeouts():
    env = Env()
    a, mid_a, b, mid_b, gen = env.two_member_group()
    env.op("clock_advance", ms=9_999)
    assert env.op("group", group="g")["state"] == "Stable"
    env.op("clock_advance", ms=1)       # both sessions (10 s) are over
    assert env.op("group", group="g")["member_count"] == 0


def test_expiring_one_member_rebalances_without_touching_the_clock_or_the_others():
    env = Env()
    a, mid_a, b, mid_b, gen = env.two_member_group()
    result = env.op("expire_member", group="g", client_id="b")
    assert result == {"group": "g", "expired": [mid_b], "failed": {}, "state": "PreparingRebalance",
                      "generation": gen}
    assert env.op("clock_get")["now_ms"] == T0
    assert a.heartbeat("g", gen, mid_a).error_code == 27      # REBALANCE_IN_PROGRESS: a stays
    assert b.heartbeat("g", gen, mid_b).error_code == 25      # UNKNOWN_MEMBER_ID: b is gone
    a.join("g", mid_a)
    assert a.replies()[-1].generation_id == gen + 1
    group = env.op("group", group="g")
    assert [m["member_id"] for m in group["members"]] == [mid_a]
    journal = [(e["from"], e["to"]) for e in env.op("journal_get", group="g")["entries"]]
    assert journal[-2:] == [("Stable", "PreparingRebalance"), ("PreparingRebalance", "CompletingRebalance")]


def test_expire_by_member_id_and_by_instance_id():
    env = Env()
    env.broker.topics.create("t", 2, {})
    a = env.client("a")
    a.join("s", instance="i-1")
    joined = a.replies()[-1]
    a.sync("s", joined.generation_id, joined.member_id, {joined.member_id: b""}, instance="i-1")
    assert env.op("expire_member", group="s", instance_id="i-1")["expired"] == [joined.member_id]
    assert env.op("group", group="s")["member_count"] == 0
    _, mid_a, _, mid_b, _ = env.two_member_group()
    assert env.op("expire_member", group="g", member_id=mid_a)["expired"] == [mid_a]


def test_expire_refuses_unknown_groups_members_and_ambiguous_selectors():
    env = Env()
    _, mid_a, _, mid_b, _ = env.two_member_group()
    with pytest.raises(ControlError, match="no group 'nope'") as refused:
        env.op("expire_member", group="nope", client_id="a")
    assert refused.value.status == 404
    with pytest.raises(ControlError, match="no member with client id 'zed'") as refused:
        env.op("expire_member", group="g", client_id="zed")
    assert refused.value.status == 404 and sorted(refused.value.details["members"]) == sorted([mid_a, mid_b])
    with pytest.raises(BadRequest, match="exactly one of"):
        env.op("expire_member", group="g", client_id="a", member_id=mid_a)
    with pytest.raises(BadRequest, match="exactly one of"):
        env.op("expire_member", group="g")
    with pytest.raises(BadRequest, match="unknown parameter"):
        env.op("expire_member", group="g", client="a")
    assert env.op("group", group="g")["member_count"] == 2    # nothing happened


def test_expiring_a_consumer_protocol_member_fences_it_alone():
    env = Env(extra={"group.consumer.heartbeat.interval.ms": 500,
                         "group.consumer.min.heartbeat.interval.ms": 500})
    topic = env.broker.topics.create("t", 4, {})

    def beat(client, member_id, epoch):
        return client.call(ApiKey.CONSUMER_GROUP_HEARTBEAT, 0, {
            "group_id": "kip", "member_id": member_id, "member_epoch": epoch, "instance_id": None, "rack_id": None,
            "rebalance_timeout_ms": 30000, "subscribed_topic_names": ["t"] if epoch == 0 else None,
            "server_assignor": None, "topic_partitions": [] if epoch == 0 else None})
    a, b = env.client("a"), env.client("b")
    ra = beat(a, "m-a", 0)
    rb = beat(b, "m-b", 0)
    assert ra.error_code == rb.error_code == 0 and topic
    before = env.op("group", group="kip")
    assert before["type"] == "consumer" and before["member_count"] == 2
    result = env.op("expire_member", group="kip", client_id="b")
    assert result["expired"] == ["m-b"] and result["generation"] == before["generation"] + 1
    assert [m["member_id"] for m in env.op("group", group="kip")["members"]] == ["m-a"]


def test_a_huge_advance_runs_each_periodic_check_once():
    """Advancing 1e11 ms used to replay the 10 s transaction check ten million times (the loop
    froze); each periodic check now runs once, at the last period the advance reaches."""
    env = Env()
    runs = {"abort": 0, "offsets": 0}
    txn, groups = env.broker.txn_coordinator, env.broker.coordinator
    abort, expire = txn.abort_timed_out_transactions, groups.expire_offsets
    txn.abort_timed_out_transactions = lambda now: (runs.__setitem__("abort", runs["abort"] + 1), abort(now))[1]
    groups.expire_offsets = lambda now: (runs.__setitem__("offsets", runs["offsets"] + 1), expire(now))[1]
    env.op("clock_advance", ms=10**11)
    assert runs == {"abort": 1, "offsets": 1}
    env.op("clock_advance", ms="10s")
    assert runs["abort"] == 2


@pytest.mark.parametrize("params,message", [
    ({"ms": 1e308}, "at most 3155760000000 ms (100 years)"),
    ({"ms": 10**30}, "at most 3155760000000 ms (100 years)"),
    ({"ms": "9" * 5000}, "must be a duration"),
    ({"ms": float("nan")}, "at most"),
    ({"ms": float("inf")}, "at most"),
    ({"ms": "1e400s"}, "must be a duration"),
])
def test_absurd_advances_are_refused_and_the_clock_stays(params, message):
    env = Env()
    before = env.clock.now_ms()
    with pytest.raises(BadRequest, match=re.escape(message)):
        env.op("clock_advance", **params)
    assert env.clock.now_ms() == before


def test_the_clock_cannot_be_set_past_9999_or_a_century_ahead():
    env = Env()
    with pytest.raises(BadRequest, match="between 1970 and the end of 9999"):
        env.op("clock_set", now_ms="9" * 18)
    with pytest.raises(BadRequest, match="more than 100 years"):
        env.op("clock_set", now_ms="2500-01-01T00:00:00Z")
    env.op("clock_set", now_ms="2030-01-01T00:00:00Z")
