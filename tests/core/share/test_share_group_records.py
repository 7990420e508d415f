"""Share groups in __consumer_offsets: Kafka's ShareGroup* record format, only changes written,
replay rebuilding the group a restarted coordinator continues with, and a failed append leaving the
group as it was."""
from __future__ import annotations

from kafkaemu.core.coordinator import GroupCoordinator
from kafkaemu.core.modern import TopicMeta
from kafkaemu.core.runtime import AppendError
from kafkaemu.core.share import records as sr
from kafkaemu.core.share.requests import ShareHeartbeat
from kafkaemu.protocol.errors import ErrorCode as E
from tests.core.harness import RecordingLog as Log
from tests.core.share.plane import ScriptedEvents

T1, T2 = b"\x01" * 16, b"\x02" * 16
TOPICS = {"a": TopicMeta("a", T1, 2), "b": TopicMeta("b", T2, 3)}


def coordinator(log: Log, now: int = 0) -> GroupCoordinator:
    return GroupCoordinator(sink=log, now_ms=now, share_events=ScriptedEvents())


def hb(c, now, member, epoch, topics=None, group="g"):
    return c.share_group_heartbeat(now, ShareHeartbeat(group, member, epoch, subscribed_topic_names=topics), TOPICS)


def share_versions(records) -> list[int]:
    return [sr.decode_key(k).version for k, _ in records if int.from_bytes(k[:2], "big") in sr.KEY_VERSIONS]


def test_key_and_value_bytes_are_kafkas():
    key = sr.encode_key(sr.ShareKey(sr.GROUP_METADATA, "g"))
    assert key == b"\x00\x0b" + b"\x00\x01g"
    assert sr.encode_value(sr.ShareKey(sr.GROUP_METADATA, "g"), (7,)) == b"\x00\x00" + b"\x00\x00\x00\x07" + b"\x00"
    member_key = sr.encode_key(sr.ShareKey(sr.CURRENT_MEMBER, "g", "m"))
    assert member_key == b"\x00\x0e" + b"\x00\x01g" + b"\x00\x01m"
    value = sr.encode_value(sr.ShareKey(sr.CURRENT_MEMBER, "g", "m"), (3, 2, ((T1, (0, 1)),)))
    # epoch, previous epoch, state 0, one topic (compact array length 2) with partitions [0, 1]
    assert value == (b"\x00\x00" + b"\x00\x00\x00\x03" + b"\x00\x00\x00\x02" + b"\x00"
                     + b"\x02" + T1 + b"\x03" + b"\x00\x00\x00\x00\x00\x00\x00\x01" + b"\x00" + b"\x00")
    assert sr.decode_key(member_key) == sr.ShareKey(sr.CURRENT_MEMBER, "g", "m")
    meta = sr.encode_value(sr.ShareKey(sr.MEMBER_METADATA, "g", "m"), (None, "cid", "/h", ("a",)))
    v = sr.decode_value(sr.ShareKey(sr.MEMBER_METADATA, "g", "m"), meta)
    assert (v.rack_id, v.client_id, v.client_host, list(v.subscribed_topic_names)) == (None, "cid", "/h", ["a"])


def test_a_join_writes_the_group_member_and_assignment_records_and_nothing_when_unchanged():
    log = Log()
    c = coordinator(log)
    hb(c, 0, "m1", 0, ["a"])
    # the heartbeat's batch records its partitions initializing, a write of its own initialized (15 twice)
    assert sorted(share_versions(log.records)) == [9, 10, 11, 12, 13, 14, 15, 15]
    n = len(log.records)
    hb(c, 10, "m1", 2)
    assert len(log.records) == n


def test_replay_brings_the_group_back_and_its_members_continue():
    log = Log()
    c = coordinator(log)
    hb(c, 0, "m1", 0, ["a"])
    hb(c, 1, "m2", 0, ["a", "b"])
    hb(c, 2, "m1", 2)
    before = c.share.group("g")
    restarted = coordinator(Log(), 100)
    restarted.load(list(log.records), 100)
    after = restarted.share.group("g")
    assert (after.group_epoch, after.assignment_epoch) == (before.group_epoch, before.assignment_epoch) == (3, 3)
    assert after.members == before.members and after.target == before.target
    assert after.subscription_metadata == before.subscription_metadata
    described = restarted.share_group_describe(100, ["g"], {T1: "a", T2: "b"})[0]
    assert described["group_state"] == "Stable" and described["group_epoch"] == 3
    assert {m["member_id"] for m in described["members"]} == {"m1", "m2"}
    # a member heartbeats at its epoch as if nothing happened: no new epoch
    again = hb(restarted, 110, "m1", 3)
    assert again["error_code"] == 0 and again["member_epoch"] == 3


def test_replayed_members_expire_after_their_session_and_that_is_written():
    log = Log()
    c = coordinator(log)
    hb(c, 0, "m1", 0, ["a"])
    restarted_log = Log()
    restarted = coordinator(restarted_log, 1000)
    restarted.load(list(log.records), 1000)
    restarted.tick(1000 + 45_000 + 1)
    assert restarted.share.group("g").state.value == "Empty"
    tombstoned = {sr.decode_key(k).version for k, v in restarted_log.records if v is None}
    assert tombstoned == {sr.MEMBER_METADATA, sr.TARGET_MEMBER, sr.CURRENT_MEMBER}
    again = coordinator(Log(), 2000)
    again.load(list(log.records) + restarted_log.records, 2000)
    assert again.share.group("g").members == {} and again.share.group("g").group_epoch == 3


def test_leave_and_delete_write_tombstones_and_replay_drops_the_group():
    log = Log()
    c = coordinator(log)
    hb(c, 0, "m1", 0, ["a"])
    hb(c, 1, "m1", -1)
    assert c.delete_groups(2, ["g"]) == [{"group_id": "g", "error_code": 0}]
    assert c.share.group("g") is None
    restarted = coordinator(Log(), 10)
    restarted.load(list(log.records), 10)
    assert restarted.share.group("g") is None and "g" not in restarted.ctx.groups


def test_a_failed_append_leaves_the_share_group_unchanged():
    log = Log()
    c = coordinator(log)
    hb(c, 0, "m1", 0, ["a"])
    before = c.share.group("g").snapshot()
    n = len(log.records)
    log.fail = AppendError(E.NOT_ENOUGH_REPLICAS)
    r = hb(c, 1, "m2", 0, ["a", "b"])
    assert r["error_code"] == E.COORDINATOR_NOT_AVAILABLE
    assert c.share.group("g").snapshot() == before and "m2" not in c.share.group("g").members
    assert len(log.records) == n
    log.fail = None
    ok = hb(c, 2, "m2", 0, ["a", "b"])            # the retry writes everything the failed one would have
    assert ok["error_code"] == 0 and ok["member_epoch"] == 3
    restarted = coordinator(Log(), 10)
    restarted.load(list(log.records), 10)
    assert set(restarted.share.group("g").members) == {"m1", "m2"}


def test_a_new_group_whose_first_write_fails_does_not_exist():
    log = Log()
    log.fail = AppendError(E.NOT_ENOUGH_REPLICAS)
    c = coordinator(log)
    assert hb(c, 0, "m1", 0, ["a"])["error_code"] == E.COORDINATOR_NOT_AVAILABLE
    assert c.share.group("g") is None


def test_a_leave_whose_write_fails_keeps_the_member_and_its_share_partitions_untouched():
    log = Log()
    c = coordinator(log)
    hb(c, 0, "m1", 0, ["a"])
    removed = []
    c.share.events.listeners["member_left"].append(lambda g, m: removed.append(m))
    log.fail = AppendError(E.NOT_LEADER_OR_FOLLOWER)
    assert hb(c, 1, "m1", -1)["error_code"] == E.NOT_COORDINATOR
    assert "m1" in c.share.group("g").members and removed == []
    log.fail = None
    assert hb(c, 2, "m1", -1)["error_code"] == 0 and removed == ["m1"]
