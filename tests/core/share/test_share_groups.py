"""Share groups in the coordinator on a manual clock: heartbeats and epochs, the simple assignor
(a partition shared when members outnumber partitions), subscription changes, session expiry, the
share partitions' start offsets (the share data plane hearing of the group), lock timers on the data
plane's own clock, and the group APIs."""
from kafkaemu.core.coordinator import GroupCoordinator
from kafkaemu.core.share import assignor
from kafkaemu.core.modern import TopicMeta
from kafkaemu.core.share.requests import ShareHeartbeat
from kafkaemu.protocol.errors import ErrorCode as E
from tests.core.share.plane import coordinator_with_plane

T1, T2 = b"\x01" * 16, b"\x02" * 16
TOPICS = {"a": TopicMeta("a", T1, 2), "b": TopicMeta("b", T2, 3)}


def hb(c, now, member, epoch, topics=None, group="g"):
    return c.share_group_heartbeat(now, ShareHeartbeat(group, member, epoch, subscribed_topic_names=topics), TOPICS)


def parts(response):
    return {(tp["topic_id"], p) for tp in response["assignment"]["topic_partitions"] for p in tp["partitions"]}


def test_join_heartbeat_and_leave():
    c = GroupCoordinator()
    r = hb(c, 0, "m1", 0, ["a"])
    assert r["error_code"] == 0 and r["member_epoch"] == 2 and parts(r) == {(T1, 0), (T1, 1)}
    assert r["heartbeat_interval_ms"] == 5000
    again = hb(c, 10, "m1", 2)
    assert again["member_epoch"] == 2 and again["assignment"] is None
    r2 = hb(c, 20, "m2", 0, ["a"])
    assert r2["member_epoch"] == 3 and len(parts(r2)) == 1
    moved = hb(c, 30, "m1", 2)                       # m1 gives one partition to m2: no revocation step
    assert moved["member_epoch"] == 3 and len(parts(moved)) == 1 and parts(moved) != parts(r2)
    left = hb(c, 40, "m2", -1)
    assert left["member_epoch"] == -1
    assert c.share.group("g").state.value == "Stable"
    hb(c, 50, "m1", -1)
    assert c.share.group("g").state.value == "Empty"


def test_after_a_leave_each_remaining_member_is_given_its_new_target_in_its_next_heartbeat_answer():
    # As Kafka 4.4 answers librdkafka (debug=cgrp, BENCHMARKS.md issue 31): the next
    # ShareGroupHeartbeat of each remaining member is answered at the bumped epoch with its new
    # assignment, the leaver's partition in it.
    c = GroupCoordinator()
    members = ["m0", "m1", "m2"]
    for i, m in enumerate(members):
        hb(c, i, m, 0, ["b"])
    group = c.share.group("g")
    for m in members:
        hb(c, 10, m, group.members[m].member_epoch)
    held = {m: {(t, p) for t, ps in group.members[m].assigned.items() for p in ps} for m in members}
    assert sorted(len(v) for v in held.values()) == [1, 1, 1]
    epoch = group.group_epoch
    hb(c, 2500, "m2", -1)
    assert group.group_epoch == epoch + 1
    answers = {m: hb(c, 5010, m, epoch) for m in members[:2]}
    assert {m: r["member_epoch"] for m, r in answers.items()} == {"m0": epoch + 1, "m1": epoch + 1}
    now = {m: parts(r) if r["assignment"] is not None else held[m] for m, r in answers.items()}
    assert now["m0"] | now["m1"] == {(T2, 0), (T2, 1), (T2, 2)}
    assert any(r["assignment"] is not None and held["m2"] <= parts(r) for r in answers.values())


def test_more_members_than_partitions_share_partitions():
    c = GroupCoordinator()
    for i in range(3):
        hb(c, i, f"m{i}", 0, ["a"])
    for i in range(3):
        hb(c, 10, f"m{i}", c.share.group("g").members[f"m{i}"].member_epoch)
    got = {m: {(t, p) for t, ps in member.assigned.items() for p in ps}
           for m, member in c.share.group("g").members.items()}
    counts = sorted(len(v) for v in got.values())
    assert counts == [1, 1, 2]
    every = [tp for v in got.values() for tp in v]
    assert {tp: every.count(tp) for tp in set(every)} == {(T1, 0): 2, (T1, 1): 2}


def test_simple_assignor_balances_and_sticks():
    members = {f"m{i}": frozenset({T2}) for i in range(2)}
    first = assignor.assign(members, {}, {T2: 3})
    assert sorted(len(a[T2]) for a in first.values()) == [1, 2]
    members["m2"] = frozenset({T2})
    second = assignor.assign(members, first, {T2: 3})
    assert all(len(a[T2]) == 1 for a in second.values())
    assert sum(len(second[m][T2] & first[m][T2]) for m in ("m0", "m1")) == 2   # kept what they could


def test_errors_as_kafka():
    c = GroupCoordinator()
    assert hb(c, 0, "", 0, ["a"])["error_code"] == E.INVALID_REQUEST
    assert hb(c, 0, "m1", 0, [])["error_message"] == "SubscribedTopicNames must be set in first request."
    assert hb(c, 0, "m1", -2)["error_code"] == E.INVALID_REQUEST
    assert hb(c, 0, "m1", 2)["error_code"] == E.GROUP_ID_NOT_FOUND
    hb(c, 0, "m1", 0, ["a"])
    assert hb(c, 1, "m1", 8)["error_code"] == E.FENCED_MEMBER_EPOCH
    assert hb(c, 1, "zz", 2)["error_code"] == E.UNKNOWN_MEMBER_ID
    assert hb(c, 1, "zz", -1)["error_code"] == E.UNKNOWN_MEMBER_ID


def test_subscription_change_bumps_the_epoch():
    c = GroupCoordinator()
    hb(c, 0, "m1", 0, ["a"])
    r = hb(c, 1, "m1", 2, ["a", "b"])
    assert r["member_epoch"] == 3 and len(parts(r)) == 5


def test_session_expiry_removes_the_member_and_releases_its_records():
    c, shares = coordinator_with_plane(log_offsets=lambda tid, p, committed: (0, 10))
    shares.group_configs.set("g", "share.auto.offset.reset", "earliest")
    hb(c, 0, "m1", 0, ["a"])
    shares.acquire(0, "g", "m1", T1, 0, 100, [(0, 9)])
    c.tick(44999)
    assert "m1" in c.share.group("g").members
    c.tick(45000)
    assert c.share.group("g").members == {}
    assert {r["state"] for r in shares.existing("g", T1, 0).in_flight()} == {"Available"}


def test_assigned_partitions_start_where_auto_offset_reset_says_at_their_first_fetch():
    ends = {"end": 42}
    c, shares = coordinator_with_plane(log_offsets=lambda tid, p, committed: (3, ends["end"]))
    hb(c, 0, "m1", 0, ["a"])
    assert shares.start_offsets("g") == {(T1, 0): -1, (T1, 1): -1}    # uninitialized, as Kafka's
    ends["end"] = 45                                                   # records produced meanwhile
    assert shares.partition(1, "g", T1, 0).start_offset == 45          # latest: the end at the fetch
    assert shares.start_offsets("g") == {(T1, 0): 45, (T1, 1): -1}
    shares.group_configs.set("h", "share.auto.offset.reset", "earliest")
    hb(c, 0, "m1", 0, ["a"], group="h")
    assert shares.start_offsets("h") == {(T1, 0): -1, (T1, 1): -1}
    assert shares.partition(2, "h", T1, 1).start_offset == 3


def test_an_uninitialized_partition_is_left_alone_by_retention_and_members_leaving():
    c, shares = coordinator_with_plane(log_offsets=lambda tid, p, committed: (3, 42))
    hb(c, 0, "m1", 0, ["a"])
    sp = shares.existing("g", T1, 0)
    sp.skip_to(10)                                 # retention: nothing of it is in flight yet
    assert (sp.start_offset, sp.end_offset, sp.written) == (-1, -1, (-1, 0))
    hb(c, 1, "m1", -1)
    assert shares.start_offsets("g") == {(T1, 0): -1, (T1, 1): -1} and shares.next_deadline_ms() is None
    assert shares.partition(2, "g", T1, 0).start_offset == 42


def test_lock_timers_fire_on_the_data_planes_tick():
    c, shares = coordinator_with_plane(log_offsets=lambda tid, p, committed: (0, 0))
    hb(c, 0, "m1", 0, ["a"])
    woken = shares.ports.wake
    shares.acquire(1000, "g", "m1", T1, 0, 100, [(0, 4)])
    assert shares.next_deadline_ms() == 31000
    shares.tick(30999)
    assert woken == []
    shares.tick(31000)
    assert woken == [("g", T1, 0)]
    assert shares.acquire(31000, "g", "m1", T1, 0, 100, [])[0].delivery_count == 2


def test_list_describe_and_delete():
    c, shares = coordinator_with_plane(log_offsets=lambda tid, p, committed: (0, 0))
    hb(c, 0, "m1", 0, ["a"])
    listed = c.list_groups(1, types_filter=["share"])
    assert listed == [{"group_id": "g", "protocol_type": "share", "group_state": "Stable", "group_type": "share"}]
    assert c.list_groups(1, types_filter=["consumer"]) == []
    d = c.share_group_describe(1, ["g", "nope"], {T1: "a"})
    assert d[0]["group_state"] == "Stable" and d[0]["assignor_name"] == "simple"
    assert d[0]["members"][0]["assignment"]["topic_partitions"][0]["topic_name"] == "a"
    assert d[1]["error_code"] == E.GROUP_ID_NOT_FOUND
    assert c.describe_groups(1, ["g"])[0]["group_state"] == "Dead"   # not a classic group
    assert c.delete_groups(1, ["g"])[0]["error_code"] == E.NON_EMPTY_GROUP
    hb(c, 2, "m1", -1)
    assert c.delete_groups(3, ["g"])[0]["error_code"] == E.NONE
    assert c.share.group("g") is None and shares.start_offsets("g") == {}


def test_empty_share_groups_do_not_expire_with_offset_retention():
    c = GroupCoordinator()
    hb(c, 0, "m1", 0, ["a"])
    hb(c, 1, "m1", -1)
    c.expire_offsets(10 ** 12)
    assert c.share.group("g") is not None


def test_consumer_group_ids_are_not_share_groups():
    c = GroupCoordinator()
    from kafkaemu.core.consumer.requests import ConsumerHeartbeat
    c.consumer_group_heartbeat(0, ConsumerHeartbeat("cg", "m", 0, rebalance_timeout_ms=1000,
                                                    subscribed_topic_names=["a"], owned={}),
                               {"a": TopicMeta("a", T1, 2)})
    r = hb(c, 1, "m", 0, ["a"], group="cg")
    assert r["error_code"] == E.GROUP_ID_NOT_FOUND


def test_a_leaving_member_keeps_its_sessions_to_close_them_an_expired_one_loses_them():
    c, shares = coordinator_with_plane()
    hb(c, 0, "m1", 0, ["a"])
    hb(c, 0, "m2", 0, ["a"])
    sessions = shares.sessions
    sessions.for_fetch((0, "g", "m1"), 0, [(T1, 0)], [], False)
    sessions.for_fetch((0, "g", "m2"), 0, [(T1, 0)], [], False)
    hb(c, 1, "m1", -1)
    assert (0, "g", "m1") in sessions.sessions          # its final ShareAcknowledge still finds it
    hb(c, 40000, "m2", 3)                               # (m2 saw the epoch m1's leave made)
    c.tick(40000 + 45000)
    assert (0, "g", "m2") not in sessions.sessions


def test_the_group_configs_set_the_heartbeat_interval_and_session_timeout():
    c, shares = coordinator_with_plane()
    shares.group_configs.set("g", "share.heartbeat.interval.ms", "7000")
    shares.group_configs.set("g", "share.session.timeout.ms", "50000")
    assert hb(c, 0, "m1", 0, ["a"])["heartbeat_interval_ms"] == 7000
    c.tick(49999)
    assert "m1" in c.share.group("g").members
    c.tick(50000)
    assert "m1" not in c.share.group("g").members


def test_by_duration_starts_at_the_first_record_that_young():
    from kafkaemu.core.share.partitions import duration_ms
    assert duration_ms("PT1H") == 3_600_000 and duration_ms("P1DT0.5S") == 86_400_500 and duration_ms("1H") is None
    asked = []
    c, spm = coordinator_with_plane(log_offsets=lambda tid, p, committed: (0, 100),
                                    offset_for_time=lambda tid, p, ts: asked.append(ts) or (40 if ts <= 7_000_000 else None))
    spm.group_configs.set("g", "share.auto.offset.reset", "by_duration:PT1H")
    hb(c, 9_000_000, "m1", 0, ["a"])
    assert asked == []                             # resolved at the first fetch, not at the assignment
    for p in (0, 1):
        spm.partition(10_000_000, "g", T1, p)
    assert asked[0] == 10_000_000 - 3_600_000
    assert spm.start_offsets("g") == {(T1, 0): 40, (T1, 1): 40}
    c.group_configs.set("h", "share.auto.offset.reset", "by_duration:PT1S")
    hb(c, 10_000_000, "m1", 0, ["a"], group="h")
    for p in (0, 1):
        spm.partition(10_000_000, "h", T1, p)
    assert spm.start_offsets("h") == {(T1, 0): 100, (T1, 1): 100}   # nothing that young: the end


def test_offset_apis_on_a_share_group_id():
    from kafkaemu.core.offsets.requests import CommitPartition, OffsetCommit
    c = GroupCoordinator()
    hb(c, 0, "m1", 0, ["a"])
    commit = c.commit_offsets(1, OffsetCommit("g", [("a", [CommitPartition(0, 5)])], member_id="m1"))
    assert {p["error_code"] for t in commit["topics"] for p in t["partitions"]} == {E.GROUP_ID_NOT_FOUND}
    fetched = c.fetch_offsets(1, "g", [("a", [0])])      # as for a group that is gone: no offset
    assert fetched["error_code"] == 0 and fetched["topics"][0]["partitions"][0]["committed_offset"] == -1
    assert c.delete_offsets(1, "g", [("a", [0])])["error_code"] == E.GROUP_ID_NOT_FOUND


def test_an_empty_share_group_is_not_turned_into_a_consumer_group():
    from kafkaemu.core.consumer.requests import ConsumerHeartbeat
    c = GroupCoordinator()
    hb(c, 0, "m1", 0, ["a"])
    hb(c, 1, "m1", -1)
    r = c.consumer_group_heartbeat(2, ConsumerHeartbeat("g", "m2", 0, rebalance_timeout_ms=1000,
                                                        subscribed_topic_names=["a"], owned={}),
                                   {"a": TopicMeta("a", T1, 2)})
    assert (r["error_code"], r["error_message"]) == (E.GROUP_ID_NOT_FOUND, "Group g is not a consumer group.")
    assert c.share.group("g") is not None
