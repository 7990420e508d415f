"""Static members of streams groups (Kafka 4.4's GroupMetadataManager.streamsGroupHeartbeat and
streamsGroupLeave with an instance id), driven with requests and a manual clock: join, the rejoin of
an instance under a new member id, UNRELEASED_INSTANCE_ID, FENCED_INSTANCE_ID, leaving with -2 (for
now) and -1, the session expiry of a member that left for now, and the replay of its records."""
from __future__ import annotations

from kafkaemu.core.coordinator import GroupCoordinator
from kafkaemu.core.streams import records
from kafkaemu.protocol.errors import ErrorCode as E
from tests.core.harness import RecordingLog as Log
from tests.core.streams.test_streams_groups import Streams

SESSION_MS = 45000   # group.streams.session.timeout.ms's default


def static(s, member, epoch, instance, owned=None, **over):
    return s.hb(member, epoch, owned, instance_id=instance, **over)


def settled(s, replies):
    """Every member heartbeats what it was last given until none is told anything new; the last answers."""
    for _ in range(6):
        for member, (instance, reply) in list(replies.items()):
            again = static(s, member, reply["member_epoch"], instance, owned=s.active(reply))
            assert again["error_code"] == 0, again
            if again["active_tasks"] is None:
                again["active_tasks"] = reply["active_tasks"]
            replies[member] = (instance, again)
    return replies


def two_static_members(s):
    """i1 (member a1) and i2 (member b1), each with two of the four tasks, reconciled."""
    a = static(s, "a1", 0, "i1")
    b = static(s, "b1", 0, "i2")
    replies = settled(s, {"a1": ("i1", a), "b1": ("i2", b)})
    assert s.gc.group("app").state.value == "Stable"
    return replies


def test_a_static_member_joins_and_is_known_by_its_instance_id():
    s = Streams()
    r = static(s, "a1", 0, "i1")
    assert r["error_code"] == 0 and s.active(r) == {0, 1, 2, 3}
    group = s.gc.group("app")
    assert group.static_member("i1").member_id == "a1"
    described = s.gc.streams_group_describe(s.now, ["app"])[0]["members"]
    assert [(m["member_id"], m["instance_id"]) for m in described] == [("a1", "i1")]


def test_an_instance_id_held_by_a_live_member_is_unreleased():
    s = Streams()
    two_static_members(s)
    group = s.gc.group("app")
    before = (group.group_epoch, dict(group.members))
    refused = static(s, "a2", 0, "i1")
    assert (refused["error_code"], refused["error_message"]) == (
        E.UNRELEASED_INSTANCE_ID,
        "Static member a2 with instance id i1 cannot join the group because the instance id is owned by a1 member.")
    assert (group.group_epoch, group.members) == before


def test_a_heartbeat_of_another_member_with_the_instance_id_is_fenced_and_an_unknown_one_is_unknown():
    s = Streams()
    replies = two_static_members(s)
    epoch = replies["a1"][1]["member_epoch"]
    fenced = static(s, "x", epoch, "i1", owned=set())
    assert (fenced["error_code"], fenced["error_message"]) == (
        E.FENCED_INSTANCE_ID, "Static member x with instance id i1 was fenced by member a1.")
    unknown = static(s, "x", epoch, "i9", owned=set())
    assert (unknown["error_code"], unknown["error_message"]) == (E.UNKNOWN_MEMBER_ID, "Instance id i9 is unknown.")
    # the member's own epoch checks stay as a dynamic member's
    assert static(s, "a1", epoch + 1, "i1", owned=set())["error_code"] == E.FENCED_MEMBER_EPOCH


def test_leaving_with_minus_two_keeps_the_member_and_its_tasks_until_its_instance_rejoins():
    s = Streams()
    log = s.gc.ctx.sink = Log()
    replies = two_static_members(s)
    group = s.gc.group("app")
    epoch, a_tasks = group.group_epoch, s.active(replies["a1"][1])
    left = static(s, "a1", -2, "i1")
    assert (left["error_code"], left["member_id"], left["member_epoch"]) == (0, "a1", -2)
    member = group.members["a1"]
    assert member.member_epoch == -2 and member.assigned.active == {"0": frozenset(a_tasks)}
    assert {e for _, _, e in member.active_epochs} == {0}          # resetAssignedTasksEpochsToZero
    assert group.group_epoch == epoch and group.state.value == "Reconciling"
    b_epoch = replies["b1"][1]["member_epoch"]
    b = static(s, "b1", b_epoch, "i2", owned=s.active(replies["b1"][1]), process_id="p-b1")
    assert b["active_tasks"] is None and b["member_epoch"] == b_epoch   # nothing of a1's moves to b1
    written = len(log.records)
    back = static(s, "a2", 0, "i1", process_id="p-a1")                 # the same process, a new member id
    assert back["error_code"] == 0 and back["member_id"] == "a2"
    assert s.active(back) == a_tasks and back["member_epoch"] == epoch   # no rebalance: same group epoch
    assert group.group_epoch == epoch and set(group.members) == {"a2", "b1"}
    assert group.static_member("i1").member_id == "a2"
    # as replaceStreamsMember: the old member's three tombstones, then the new member's records
    keys = [records.decode_key(k) for k, _ in log.records[written:]]
    assert {(k.version, k.member_id) for k, (_, v) in zip(keys, log.records[written:]) if v is None} == \
        {(records.CURRENT_MEMBER, "a1"), (records.TARGET_MEMBER, "a1"), (records.MEMBER_METADATA, "a1")}
    assert {(k.version, k.member_id) for k, (_, v) in zip(keys, log.records[written:]) if v is not None} >= \
        {(records.CURRENT_MEMBER, "a2"), (records.TARGET_MEMBER, "a2"), (records.MEMBER_METADATA, "a2")}
    # the member it replaced is fenced by its instance
    old = static(s, "a1", epoch, "i1", owned=a_tasks)
    assert old["error_code"] == E.FENCED_INSTANCE_ID


def test_a_rejoin_from_another_process_bumps_the_group_epoch():
    """hasEpochRelevantMemberConfigChanged: a static member's process id is read by the assignor."""
    s = Streams()
    two_static_members(s)
    group = s.gc.group("app")
    epoch = group.group_epoch
    static(s, "a1", -2, "i1")
    back = static(s, "a2", 0, "i1", process_id="another-process")
    assert back["error_code"] == 0 and group.group_epoch == epoch + 1


def test_a_static_member_bumps_the_group_epoch_only_for_what_the_assignor_reads():
    s = Streams()
    replies = two_static_members(s)
    group = s.gc.group("app")
    epoch = group.group_epoch
    r = replies["a1"][1]
    r = static(s, "a1", r["member_epoch"], "i1", owned=s.active(r), user_endpoint={"host": "h", "port": 1})
    assert group.group_epoch == epoch and group.members["a1"].user_endpoint is not None
    static(s, "a1", r["member_epoch"], "i1", owned=s.active(r), client_tags=[{"key": "az", "value": "a"}])
    assert group.group_epoch == epoch + 1
    # a dynamic member's endpoint is a change of its metadata like any other
    d = s.hb("d1", 0)
    epoch = group.group_epoch
    s.hb("d1", d["member_epoch"], owned=s.active(d), user_endpoint={"host": "h", "port": 2})
    assert group.group_epoch == epoch + 1


def test_leaving_with_minus_one_removes_the_static_member_and_its_tasks_move():
    s = Streams()
    replies = two_static_members(s)
    group = s.gc.group("app")
    epoch = group.group_epoch
    left = static(s, "a1", -1, "i1")
    assert (left["error_code"], left["member_epoch"]) == (0, -1)
    assert "a1" not in group.members and group.static_member("i1") is None
    assert group.group_epoch == epoch + 1
    b = replies["b1"][1]
    b = static(s, "b1", b["member_epoch"], "i2", owned=s.active(b), process_id="p-b1")
    assert s.active(b) == {0, 1, 2, 3}
    # the instance id is free again: a new member takes it as a new member
    assert static(s, "a9", 0, "i1")["error_code"] == 0


def test_a_leave_must_come_from_the_member_holding_the_instance_id():
    s = Streams()
    two_static_members(s)
    for epoch in (-1, -2):
        fenced = static(s, "x", epoch, "i1")
        assert (fenced["error_code"], fenced["error_message"]) == (
            E.FENCED_INSTANCE_ID, "Static member x with instance id i1 was fenced by member a1.")
        unknown = static(s, "a1", epoch, "i9")
        assert (unknown["error_code"], unknown["error_message"]) == (E.UNKNOWN_MEMBER_ID, "Instance id i9 is unknown.")
    assert s.hb("a1", -2)["error_code"] == E.INVALID_REQUEST    # -2 needs an instance id
    assert set(s.gc.group("app").members) == {"a1", "b1"}


def test_a_member_that_left_for_now_is_removed_when_its_session_times_out():
    s = Streams()
    replies = two_static_members(s)
    group = s.gc.group("app")
    epoch = group.group_epoch
    static(s, "a1", -2, "i1")
    b = replies["b1"][1]
    s.now = SESSION_MS - 1
    b = static(s, "b1", b["member_epoch"], "i2", owned=s.active(b), process_id="p-b1")   # b1's session goes on
    s.gc.tick(s.now)
    assert "a1" in group.members
    s.now = SESSION_MS
    s.gc.tick(s.now)
    assert "a1" not in group.members and group.static_member("i1") is None
    assert group.group_epoch == epoch + 1
    b = static(s, "b1", b["member_epoch"], "i2", owned=s.active(b), process_id="p-b1")
    assert s.active(b) == {0, 1, 2, 3}


def test_a_full_group_takes_back_a_static_member_rejoining():
    from kafkaemu.config import BrokerConfig
    from kafkaemu.core.coordinator import CoordinatorSettings
    s = Streams()
    s.gc = GroupCoordinator(CoordinatorSettings(streams=BrokerConfig(extra={"group.streams.max.size": 1}).streams))
    assert static(s, "a1", 0, "i1")["error_code"] == 0
    assert static(s, "b1", 0, "i2")["error_code"] == E.GROUP_MAX_SIZE_REACHED
    static(s, "a1", -2, "i1")
    assert static(s, "a2", 0, "i1", process_id="p-a1")["error_code"] == 0


def test_static_members_are_written_and_replayed_after_a_restart():
    s = Streams()
    log = s.gc.ctx.sink = Log()
    replies = two_static_members(s)
    a_tasks = s.active(replies["a1"][1])
    static(s, "a1", -2, "i1")
    key = records.Key(records.MEMBER_METADATA, "app", "a1")
    value = [v for k, v in log.records if k == records.encode_key(key)][-1]
    assert value[:2] == b"\x00\x00" and records.decode_value(key, value).instance_id == "i1"
    current = records.Key(records.CURRENT_MEMBER, "app", "a1")
    decoded = records.decode_value(current, [v for k, v in log.records if k == records.encode_key(current)][-1])
    assert decoded.member_epoch == -2 and [t.assignment_epochs for t in decoded.active_tasks] == [[0, 0]]
    before = s.gc.group("app")
    s.gc = GroupCoordinator(now_ms=10, sink=log)
    s.gc.load(list(log.records), 10)
    group = s.gc.group("app")
    assert group.members == before.members and group.static_members == {"i1": "a1", "i2": "b1"}
    assert static(s, "x", 0, "i2")["error_code"] == E.UNRELEASED_INSTANCE_ID
    back = static(s, "a2", 0, "i1", process_id="p-a1")
    assert back["error_code"] == 0 and s.active(back) == a_tasks
    again = GroupCoordinator(now_ms=20)
    again.load(list(log.records), 20)
    assert again.group("app").static_members == {"i1": "a2", "i2": "b1"}
    # the replayed member's session starts again at the load
    s.gc = again
    s.now = 20 + SESSION_MS
    s.gc.tick(s.now)
    assert again.group("app").members == {}


def test_task_offsets_reported_twice_for_a_task_are_an_invalid_request():
    s = Streams()
    r = s.hb("m1", 0)
    twice = [{"subtopology_id": "0", "partition": 1, "offset": 5}, {"subtopology_id": "0", "partition": 1, "offset": 6}]
    bad = s.hb("m1", r["member_epoch"], owned=s.active(r), task_offsets=twice)
    assert (bad["error_code"], bad["error_message"]) == (
        E.INVALID_REQUEST, "Task offsets contain a duplicate entry for subtopology 0 and partition 1.")
    ok = s.hb("m1", r["member_epoch"], owned=s.active(r), task_end_offsets=twice[:1])
    assert ok["error_code"] == 0
    assert s.gc.group("app").members["m1"].task_end_offsets == (("0", 1, 5),)
