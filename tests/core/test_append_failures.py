"""A group coordinator write whose records cannot be appended: the group, its offsets and timers
stay exactly as they were, the requester gets Kafka's error for the failure, and a retry succeeds
(GroupCoordinatorService's error mapping; CoordinatorRuntime reverting to the last written state)."""
from __future__ import annotations

import copy

import pytest

from kafkaemu.core.offsets.requests import CommitPartition, TxnOffsetCommit
from kafkaemu.core.runtime import TIMER_RETRY_BACKOFF_MS, AppendError
from kafkaemu.protocol.errors import ErrorCode as E

from .consumer.harness import ConsumerHarness
from .harness import Harness


class FailingSink:
    """Wraps a coordinator's sink: while ``failure`` is set, every append raises it."""

    def __init__(self, sink) -> None:
        self.sink = sink
        self.failure: Exception | None = None
        self.refused = 0

    def __call__(self, *args, **kw) -> None:
        if self.failure is not None:
            self.refused += 1
            raise self.failure
        self.sink(*args, **kw)


def failing(h) -> FailingSink:
    sink = FailingSink(h.c.ctx.sink)
    h.c.ctx.sink = sink
    return sink


def _plain(value):
    return id(value) if callable(value) else copy.deepcopy(value)


def observe(c) -> tuple:
    """Everything a client or a test control could see of the coordinator, as plain values."""
    groups = {}
    for gid, g in c.ctx.groups.items():
        fields = {k: _plain(v) for k, v in vars(g).items() if k != "_on_transition"}
        fields["members"] = {mid: {k: _plain(v) for k, v in vars(m).items()} for mid, m in g.members.items()}
        groups[gid] = (type(g).__name__, fields)
    timers = {key: c.ctx.timers.deadline(key) for key in list(c.ctx.timers._by_key)}
    return (groups, c.offsets.store.snapshot(), copy.deepcopy(c.offsets.pending._by_producer),
            copy.deepcopy(c.offsets.pending._open_by_group), timers, list(c.ctx.transitions))


FAILURES = [
    (AppendError(E.UNKNOWN_TOPIC_OR_PARTITION), E.COORDINATOR_NOT_AVAILABLE),
    (AppendError(E.NOT_ENOUGH_REPLICAS), E.COORDINATOR_NOT_AVAILABLE),
    (AppendError(E.REQUEST_TIMED_OUT), E.COORDINATOR_NOT_AVAILABLE),
    (AppendError(E.NOT_LEADER_OR_FOLLOWER), E.NOT_COORDINATOR),
    (AppendError(E.KAFKA_STORAGE_ERROR), E.NOT_COORDINATOR),
    (AppendError(E.MESSAGE_TOO_LARGE), E.UNKNOWN_SERVER_ERROR),
    (AppendError(E.RECORD_LIST_TOO_LARGE), E.UNKNOWN_SERVER_ERROR),
    (AppendError(E.INVALID_FETCH_SIZE), E.UNKNOWN_SERVER_ERROR),
    (AppendError(E.CORRUPT_MESSAGE), E.CORRUPT_MESSAGE),           # anything else passes through
    (OSError("disk gone"), E.UNKNOWN_SERVER_ERROR),
]


# ------------------------------------------------------------------ classic groups
@pytest.mark.parametrize("failure,expected", FAILURES)
def test_join_creating_a_group_fails_and_leaves_no_group(failure, expected):
    h = Harness()
    sink = failing(h)
    before = observe(h.c)
    sink.failure = failure
    reply = h.join("g")
    assert reply.error == expected
    assert observe(h.c) == before and h.group("g") is None and h.records == []
    sink.failure = None
    assert h.join("g").error == E.MEMBER_ID_REQUIRED
    assert h.group("g") is not None and len(h.records) == 1


def test_static_member_rejoin_fails_and_the_old_member_keeps_its_slot():
    h = Harness()
    sink = failing(h)
    first = h.join("g", instance="i1")
    old_id = first.value["member_id"]
    assert h.sync("g", old_id, 1, {old_id: b"a"}).error == E.NONE and h.state() == "Stable"
    before = observe(h.c)
    records = len(h.records)
    sink.failure = AppendError(E.NOT_LEADER_OR_FOLLOWER)
    reply = h.join("g", instance="i1")               # a restarted instance takes its slot: a record
    assert reply.error == E.NOT_COORDINATOR
    assert observe(h.c) == before and len(h.records) == records
    assert h.heartbeat("g", old_id, 1, instance="i1") == E.NONE
    sink.failure = None
    reply = h.join("g", instance="i1")
    assert reply.error == E.NONE and reply.value["member_id"] != old_id
    assert h.heartbeat("g", old_id, 1, instance="i1") == E.FENCED_INSTANCE_ID


def test_leader_sync_fails_every_member_gets_the_error_and_the_group_rebalances():
    """Kafka's SyncGroup append callback: the assignment is not stored, every member waiting in
    SyncGroup gets the error, and the group prepares a rebalance (the write itself is undone)."""
    h = Harness()
    sink = failing(h)
    ids = [h.join_new("g", client_id=f"C{i}")[0] for i in (1, 2)]
    for i, mid in enumerate(ids):
        if not h.group().members[mid].is_awaiting_join:
            h.join("g", mid, client_id=f"C{i + 1}")
    assert h.state() == "CompletingRebalance"
    group = h.group()
    leader = group.leader_id
    follower = next(m for m in ids if m != leader)
    gen = group.generation_id
    follower_sync = h.sync("g", follower, gen)
    assert follower_sync.parked
    records = len(h.records)
    sink.failure = AppendError(E.REQUEST_TIMED_OUT)
    leader_sync = h.sync("g", leader, gen, {m: b"x" for m in ids})
    assert leader_sync.error == E.COORDINATOR_NOT_AVAILABLE
    assert follower_sync.error == E.COORDINATOR_NOT_AVAILABLE
    assert len(h.records) == records
    assert h.state() == "PreparingRebalance"
    assert all(m.assignment == b"" for m in h.group().members.values())
    sink.failure = None
    assert h.rejoin_all_and_sync("g", ids)


def test_leave_of_the_last_member_fails_and_the_member_stays():
    h = Harness()
    sink = failing(h)
    [mid] = h.stable_group(n=1)
    before = observe(h.c)
    sink.failure = AppendError(E.KAFKA_STORAGE_ERROR)
    result = h.leave("g", mid)
    assert result == {"error_code": int(E.NOT_COORDINATOR), "members": []}
    assert observe(h.c) == before and h.state() == "Stable"
    assert h.heartbeat("g", mid, h.group().generation_id) == E.NONE
    sink.failure = None
    assert h.leave("g", mid)["members"][0]["error_code"] == E.NONE
    assert h.state() == "Empty"


def test_session_expiry_that_cannot_be_written_is_retried():
    h = Harness()
    sink = failing(h)
    [mid] = h.stable_group(n=1, session=10000)
    sink.failure = AppendError(E.NOT_ENOUGH_REPLICAS)
    transitions = len(h.c.ctx.transitions)
    h.advance(10001)
    assert sink.refused == 1
    assert h.state() == "Stable" and mid in h.group().members
    assert len(h.c.ctx.transitions) == transitions    # the undone transitions were never published
    h.advance(TIMER_RETRY_BACKOFF_MS)                 # still failing: retried again
    assert sink.refused == 2 and h.state() == "Stable"
    sink.failure = None
    h.advance(TIMER_RETRY_BACKOFF_MS)
    assert h.state() == "Empty" and not h.group().members


def test_delete_groups_fails_and_the_group_keeps_its_offsets():
    h = Harness()
    sink = failing(h)
    h.commit("g", {("t", 0): 5})
    before = observe(h.c)
    sink.failure = AppendError(E.NOT_LEADER_OR_FOLLOWER)
    assert h.c.delete_groups(h.now, ["g"]) == [{"group_id": "g", "error_code": int(E.NOT_COORDINATOR)}]
    assert observe(h.c) == before and h.fetch("g") == {("t", 0): 5}
    sink.failure = None
    assert h.c.delete_groups(h.now, ["g"]) == [{"group_id": "g", "error_code": 0}]
    assert h.c.group("g") is None and h.fetch("g", [("t", [0])]) == {("t", 0): -1}


# ------------------------------------------------------------------ offsets
@pytest.mark.parametrize("failure,expected", FAILURES[:3] + FAILURES[-1:])
def test_offset_commit_fails_and_nothing_is_committed(failure, expected):
    h = Harness()
    sink = failing(h)
    h.commit("g", {("t", 0): 1})
    before = observe(h.c)
    sink.failure = failure
    resp = h.commit("g", {("t", 0): 7, ("t", 1): 8, ("gone", 0): 9},
                    exists=lambda topic, p: topic != "gone")
    codes = {(t["name"], p["partition_index"]): E(p["error_code"]) for t in resp["topics"] for p in t["partitions"]}
    assert codes == {("t", 0): expected, ("t", 1): expected, ("gone", 0): E.UNKNOWN_TOPIC_OR_PARTITION}
    assert observe(h.c) == before and h.fetch("g") == {("t", 0): 1}
    sink.failure = None
    assert h.commit_errors("g", {("t", 0): 7}) == {E.NONE}
    assert h.fetch("g") == {("t", 0): 7}


def test_first_commit_fails_and_makes_no_simple_group():
    h = Harness()
    sink = failing(h)
    sink.failure = AppendError(E.UNKNOWN_TOPIC_OR_PARTITION)
    assert h.commit_errors("simple", {("t", 0): 3}) == {E.COORDINATOR_NOT_AVAILABLE}
    assert h.c.group("simple") is None and h.fetch("simple") == {}
    sink.failure = None
    assert h.commit_errors("simple", {("t", 0): 3}) == {E.NONE}
    assert h.c.group("simple") is not None


def test_commit_by_a_member_fails_and_its_session_is_not_extended():
    h = Harness()
    sink = failing(h)
    [mid] = h.stable_group(n=1, session=10000)
    gen = h.group().generation_id
    h.advance(6000)
    before = observe(h.c)
    sink.failure = AppendError(E.NOT_LEADER_OR_FOLLOWER)
    assert h.commit_errors("g", {("t", 0): 1}, member_id=mid, generation=gen) == {E.NOT_COORDINATOR}
    assert observe(h.c) == before


def test_transactional_offset_commit_fails_and_nothing_is_pending():
    h = Harness()
    sink = failing(h)
    req = TxnOffsetCommit("tx", "g", 42, 0, [("t", [CommitPartition(0, 10, -1, "")])])
    before = observe(h.c)
    sink.failure = AppendError(E.NOT_LEADER_OR_FOLLOWER)
    resp = h.c.commit_transactional_offsets(h.now, req)
    assert [p["error_code"] for t in resp["topics"] for p in t["partitions"]] == [E.NOT_COORDINATOR]
    assert observe(h.c) == before and not h.c.offsets.pending.has_open_transactions("g")
    sink.failure = None
    resp = h.c.commit_transactional_offsets(h.now, req)
    assert [p["error_code"] for t in resp["topics"] for p in t["partitions"]] == [E.NONE]
    assert h.c.complete_transaction(h.now, 42, True) == 1 and h.fetch("g") == {("t", 0): 10}


def test_offset_delete_fails_and_the_offsets_stay():
    h = Harness()
    sink = failing(h)
    h.commit("g", {("t", 0): 4})
    before = observe(h.c)
    sink.failure = AppendError(E.REQUEST_TIMED_OUT)
    assert h.c.delete_offsets(h.now, "g", [("t", [0])]) == {"error_code": int(E.COORDINATOR_NOT_AVAILABLE),
                                                             "topics": []}
    assert observe(h.c) == before
    sink.failure = None
    assert h.c.delete_offsets(h.now, "g", [("t", [0])])["error_code"] == E.NONE
    assert h.fetch("g") == {}


def test_offset_expiry_that_cannot_be_written_keeps_offsets_and_group_until_the_next_check():
    h = Harness(retention_minutes=1000 / 60000, retention_check_interval_ms=500)
    sink = failing(h)
    h.commit("g", {("t", 0): 4})
    sink.failure = AppendError(E.NOT_LEADER_OR_FOLLOWER)
    h.advance(1500)
    assert sink.refused >= 1
    assert h.fetch("g") == {("t", 0): 4} and h.c.group("g") is not None
    sink.failure = None
    h.advance(500)
    assert h.fetch("g") == {} and h.c.group("g") is None


def test_deleted_topic_offsets_stay_where_the_tombstones_cannot_be_written():
    h = Harness()
    sink = failing(h)
    h.commit("g", {("t", 0): 4})
    sink.failure = AppendError(E.NOT_LEADER_OR_FOLLOWER)
    assert h.c.on_topic_deleted(h.now, "t") == 0
    assert h.fetch("g") == {("t", 0): 4}
    sink.failure = None
    assert h.c.on_topic_deleted(h.now, "t") == 1 and h.fetch("g") == {}


# ------------------------------------------------------------------ consumer groups (KIP-848)
def test_consumer_heartbeat_creating_a_group_fails_and_leaves_no_group():
    h = ConsumerHarness()
    sink = failing(h)
    before = observe(h.c)
    sink.failure = AppendError(E.NOT_LEADER_OR_FOLLOWER)
    r = h.heartbeat("g", "m1", 0)
    assert r["error_code"] == E.NOT_COORDINATOR
    assert observe(h.c) == before and h.group() is None
    sink.failure = None
    r = h.heartbeat("g", "m1", 0)
    assert r["error_code"] == E.NONE and r["member_epoch"] == 2 and h.group() is not None


def test_consumer_heartbeat_of_a_joining_member_fails_and_the_group_is_as_before():
    h = ConsumerHarness()
    sink = failing(h)
    first = h.heartbeat("g", "m1", 0)
    assert first["error_code"] == E.NONE
    before = observe(h.c)
    written = len(h.records)
    sink.failure = AppendError(E.UNKNOWN_TOPIC_OR_PARTITION)
    r = h.heartbeat("g", "m2", 0, client_id="C2")
    assert r["error_code"] == E.COORDINATOR_NOT_AVAILABLE
    assert observe(h.c) == before and len(h.records) == written
    assert h.group().group_epoch == 2 and set(h.group().members) == {"m1"}
    sink.failure = None
    r = h.heartbeat("g", "m2", 0, client_id="C2")
    assert r["error_code"] == E.NONE and h.group().group_epoch == 3
    # what the retry wrote is the whole change: replayed into a fresh coordinator, it is the group
    assert set(h.group().members) == {"m1", "m2"}


def test_consumer_session_expiry_that_cannot_be_written_is_retried():
    h = ConsumerHarness(session_timeout_ms=10000)
    sink = failing(h)
    assert h.heartbeat("g", "m1", 0)["error_code"] == E.NONE
    sink.failure = AppendError(E.NOT_LEADER_OR_FOLLOWER)
    h.advance(10001)
    assert sink.refused == 1 and "m1" in h.group().members and h.group().group_epoch == 2
    sink.failure = None
    h.advance(TIMER_RETRY_BACKOFF_MS)
    assert "m1" not in h.group().members and h.group().group_epoch == 3


@pytest.mark.parametrize("make", ["classic", "consumer"])
def test_a_group_snapshot_restores_every_attribute(make):
    """A field added to a group later must be added to its snapshot too."""
    if make == "classic":
        h = Harness()
        h.stable_group(n=2)
        group = h.group()
    else:
        h = ConsumerHarness()
        h.heartbeat("g", "m1", 0)
        group = h.group()
    before = {k: _plain(v) for k, v in vars(group).items()}
    snapshot = group.snapshot()
    for name in vars(group):
        if name not in ("group_id", "_on_transition"):
            setattr(group, name, object())
    group.restore(snapshot)
    assert {k: _plain(v) for k, v in vars(group).items()} == before
