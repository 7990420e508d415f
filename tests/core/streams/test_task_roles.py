"""Kafka 4.4's streams reconciliation of tasks changing role on a member (CurrentAssignmentBuilder:
demoteActiveTasksToStandby, convertReplicaRole, applyPromotionsToActive), and Kafka 4.4.0's warm-up
tasks: its AssignmentRefiner gives back the assignor's target unchanged, so no warm-up task is ever
assigned, whatever the warm-up settings and the lags members report."""
from __future__ import annotations

from kafkaemu.core.coordinator import CoordinatorSettings, GroupCoordinator
from kafkaemu.core.streams.group import MemberState, StreamsMember, TasksTuple
from kafkaemu.core.streams.reconciliation import reconcile
from kafkaemu.core.streams.settings import StreamsSettings
from tests.core.streams.test_streams_groups import Streams


def member(epoch=3, **tasks) -> StreamsMember:
    assigned = TasksTuple(**{k: {"0": frozenset(v)} for k, v in tasks.items()})
    return StreamsMember("m", member_epoch=epoch, previous_member_epoch=epoch - 1, process_id="p", assigned=assigned,
                         active_epochs=tuple(("0", p, epoch) for p in sorted(tasks.get("active", ()))))


def owners_of(m: StreamsMember, active_elsewhere=None):
    """The group's owners: the member's own tasks, plus active tasks other processes run."""
    active = {("0", p): m.process_id for p in m.assigned.active.get("0", ())}
    active.update({("0", p): pid for p, pid in (active_elsewhere or {}).items()})
    standby = {("0", p): {m.process_id} for p in m.assigned.standby.get("0", ())}
    warmup = {("0", p): {m.process_id} for p in m.assigned.warmup.get("0", ())}
    return lambda: (active, standby, warmup)


def target(**tasks) -> TasksTuple:
    return TasksTuple(**{k: {"0": frozenset(v)} for k, v in tasks.items()})


def test_an_active_task_becoming_a_standby_is_a_standby_at_once_while_the_active_is_revoked():
    m = member(active={0, 1})
    after = reconcile(m, 4, target(active={1}, standby={0}), owners_of(m), owned=m.assigned)
    assert after.state is MemberState.UNREVOKED_TASKS and after.member_epoch == 3
    assert after.assigned == target(active={1}, standby={0})
    assert after.pending_revocation == target(active={0})


def test_a_standby_becoming_a_warm_up_and_back_changes_role_without_a_revocation():
    m = member(standby={0}, warmup={1})
    after = reconcile(m, 4, target(warmup={0}, standby={1}), owners_of(m), owned=m.assigned)
    assert after.state is MemberState.STABLE and after.member_epoch == 4
    assert after.assigned == target(warmup={0}, standby={1}) and after.pending_revocation.is_empty()


def test_a_standby_becoming_active_stays_a_standby_until_the_active_task_is_free():
    m = member(active={0}, standby={1})
    waiting = reconcile(m, 4, target(active={0, 1}), owners_of(m, active_elsewhere={1: "other"}), owned=m.assigned)
    # Kafka 4.3 revoked the standby first (UNREVOKED_TASKS); 4.4 keeps it while the active is unreleased
    assert waiting.state is MemberState.UNRELEASED_TASKS and waiting.member_epoch == 4
    assert waiting.assigned == target(active={0}, standby={1}) and waiting.pending_revocation.is_empty()
    promoted = reconcile(waiting, 4, target(active={0, 1}), owners_of(waiting), owned=waiting.assigned)
    assert promoted.state is MemberState.STABLE and promoted.assigned == target(active={0, 1})
    assert dict((p, e) for _, p, e in promoted.active_epochs) == {0: 3, 1: 4}


def holding(s, member_id) -> dict:
    """A heartbeat's task fields reporting what the member holds now."""
    m = s.gc.group("app").members[member_id]
    return {f"{role}_tasks": [{"subtopology_id": "0", "partitions": sorted(getattr(m.assigned, role).get("0", ()))}]
            for role in ("active", "standby", "warmup")}


def test_the_standby_of_a_member_that_left_becomes_active_in_one_heartbeat():
    s = Streams()
    s.gc = GroupCoordinator(CoordinatorSettings(streams=StreamsSettings(num_standby_replicas=1)))
    epochs = {"m1": s.hb("m1", 0)["member_epoch"], "m2": s.hb("m2", 0)["member_epoch"]}
    group = s.gc.group("app")
    for _ in range(5):   # each reports what it holds until both are reconciled
        for mid in epochs:
            epochs[mid] = s.hb(mid, epochs[mid], **holding(s, mid))["member_epoch"]
    assert group.state.value == "Stable"
    m1 = group.members["m1"]
    assert len(m1.assigned.standby["0"]) == 2 and len(m1.assigned.active["0"]) == 2
    s.hb("m2", -1)
    r1 = s.hb("m1", m1.member_epoch, **holding(s, "m1"))
    # Kafka 4.3 first revoked the standbys (UNREVOKED_TASKS); 4.4 promotes them in this heartbeat
    assert r1["error_code"] == 0 and s.active(r1) == {0, 1, 2, 3} and r1["standby_tasks"] == []
    assert group.members["m1"].state is MemberState.STABLE


def test_no_warm_up_task_is_assigned_as_kafka_4_4_0s_assignment_refiner_gives_the_target_unchanged():
    s = Streams()
    s.gc = GroupCoordinator(CoordinatorSettings(streams=StreamsSettings(num_standby_replicas=1)))
    s.gc.group_configs.set("app", "streams.num.warmup.replicas", "4")
    s.gc.group_configs.set("app", "streams.acceptable.recovery.lag", "5")
    r1 = s.hb("m1", 0)
    assert r1["acceptable_recovery_lag"] == 5 and r1["warmup_tasks"] == []
    lag = [{"subtopology_id": "0", "partition": p, "offset": 1000} for p in range(4)]
    r1 = s.hb("m1", r1["member_epoch"], owned=s.active(r1), task_end_offsets=lag, task_offsets=lag)
    r2 = s.hb("m2", 0, task_offsets=[{"subtopology_id": "0", "partition": p, "offset": 0} for p in range(4)])
    group = s.gc.group("app")
    assert all(t.warmup == {} for t in group.target.values()) and r2["warmup_tasks"] == []
    described = s.gc.streams_group_describe(s.now, ["app"])[0]["members"]
    assert [m["target_assignment"]["warmup_tasks"] for m in described] == [[], []]
