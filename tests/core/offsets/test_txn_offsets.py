"""Transactional offset commits (Kafka's OffsetMetadataManager): pending per producer until the
transaction's marker, visible on commit, gone on abort; require_stable; replay with markers."""
import pytest

from kafkaemu.core.coordinator import GroupCoordinator
from kafkaemu.core.offsets.requests import CommitPartition, TxnOffsetCommit
from kafkaemu.core.record_format import EndTransactionMarker
from kafkaemu.protocol.errors import ErrorCode as E

from ..harness import Harness

PID, EPOCH = 4000, 0


def txn_commit(h, gid, offsets, *, pid=PID, member_id="", generation=-1, instance=None, version=4,
               metadata="", exists=None) -> dict:
    topics: dict[str, list[CommitPartition]] = {}
    for (topic, partition), offset in offsets.items():
        topics.setdefault(topic, []).append(CommitPartition(partition, offset, -1, metadata))
    return h.c.commit_transactional_offsets(h.now, TxnOffsetCommit("tx", gid, pid, EPOCH, list(topics.items()),
                                                                   generation, member_id, instance, version), exists)


def errors(resp) -> dict:
    return {(t["name"], p["partition_index"]): E(p["error_code"]) for t in resp["topics"] for p in t["partitions"]}


def stable(h, gid, topics) -> dict:
    resp = h.c.fetch_offsets(h.now, gid, topics, require_stable=True)
    return {(t["name"], p["partition_index"]): (p["committed_offset"], E(p["error_code"]))
            for t in resp["topics"] for p in t["partitions"]}


def test_pending_offsets_apply_on_commit_and_are_written_as_a_transactional_batch():
    h = Harness()
    h.commit("g", {("t", 0): 5})
    assert errors(txn_commit(h, "g", {("t", 0): 10, ("t", 1): 20})) == {("t", 0): E.NONE, ("t", 1): E.NONE}
    assert h.producers[-1] == PID and h.producers[-2] == -1
    assert h.fetch("g", [("t", [0, 1])]) == {("t", 0): 5, ("t", 1): -1}   # not visible yet
    assert stable(h, "g", [("t", [0, 1, 2])]) == {("t", 0): (-1, E.UNSTABLE_OFFSET_COMMIT),
                                                  ("t", 1): (-1, E.UNSTABLE_OFFSET_COMMIT), ("t", 2): (-1, E.NONE)}
    assert h.c.complete_transaction(h.now, PID, commit=True) == 2
    assert h.fetch("g", [("t", [0, 1])]) == {("t", 0): 10, ("t", 1): 20}
    assert stable(h, "g", [("t", [0])]) == {("t", 0): (10, E.NONE)}


def test_pending_offsets_vanish_on_abort():
    h = Harness()
    h.commit("g", {("t", 0): 5})
    txn_commit(h, "g", {("t", 0): 10})
    assert h.c.complete_transaction(h.now, PID, commit=False) == 0
    assert h.fetch("g", [("t", [0])]) == {("t", 0): 5}
    assert stable(h, "g", [("t", [0])]) == {("t", 0): (5, E.NONE)}


def test_a_plain_commit_written_after_the_transactional_one_wins():
    h = Harness()
    txn_commit(h, "g", {("t", 0): 10})
    h.commit("g", {("t", 0): 30})
    h.c.complete_transaction(h.now, PID, commit=True)
    assert h.fetch("g", [("t", [0])]) == {("t", 0): 30}


def test_require_stable_for_every_committed_partition_and_two_producers():
    h = Harness()
    h.commit("g", {("t", 0): 1, ("t", 1): 1})
    txn_commit(h, "g", {("t", 0): 10}, pid=PID)
    txn_commit(h, "g", {("t", 1): 11}, pid=PID + 1)
    resp = h.c.fetch_offsets(h.now, "g", None, require_stable=True)
    assert [(p["partition_index"], E(p["error_code"])) for p in resp["topics"][0]["partitions"]] == [
        (0, E.UNSTABLE_OFFSET_COMMIT), (1, E.UNSTABLE_OFFSET_COMMIT)]
    h.c.complete_transaction(h.now, PID, commit=True)
    assert stable(h, "g", [("t", [0, 1])]) == {("t", 0): (10, E.NONE), ("t", 1): (-1, E.UNSTABLE_OFFSET_COMMIT)}


def test_group_checks_for_transactional_commits():
    h = Harness()
    a, b = h.stable_group("g", n=2)
    gen = h.group("g").generation_id
    assert set(errors(txn_commit(h, "g", {("t", 0): 1}, member_id=a, generation=gen)).values()) == {E.NONE}
    assert set(errors(txn_commit(h, "g", {("t", 0): 1}, member_id=a, generation=gen - 1)).values()) == \
        {E.ILLEGAL_GENERATION}
    assert set(errors(txn_commit(h, "g", {("t", 0): 1}, member_id="ghost", generation=gen)).values()) == \
        {E.UNKNOWN_MEMBER_ID}
    # before v3 a transactional commit carries no member: accepted even with members (not for OffsetCommit)
    assert set(errors(txn_commit(h, "g", {("t", 0): 2}, version=2)).values()) == {E.NONE}
    assert h.commit_errors("g", {("t", 0): 2}) == {E.UNKNOWN_MEMBER_ID}
    # an unknown group with a generation
    assert set(errors(txn_commit(h, "nogroup", {("t", 0): 1}, generation=3)).values()) == {E.ILLEGAL_GENERATION}
    assert h.group("nogroup") is None


def test_transactional_commits_are_accepted_while_completing_a_rebalance():
    h = Harness()
    a, b = h.stable_group("g", n=2)
    h.join("g", a, client_id="C1")
    h.join("g", b, client_id="C2")
    assert h.state("g") == "CompletingRebalance"
    gen = h.group("g").generation_id
    assert h.commit_errors("g", {("t", 0): 1}, member_id=a, generation=gen) == {E.REBALANCE_IN_PROGRESS}
    assert set(errors(txn_commit(h, "g", {("t", 0): 1}, member_id=a, generation=gen)).values()) == {E.NONE}


def test_unknown_partitions_and_metadata_too_large_per_partition():
    h = Harness(metadata_max_bytes=3)
    exists = lambda topic, p: topic == "t"  # noqa: E731
    resp = txn_commit(h, "g", {("t", 0): 1, ("gone", 0): 1}, exists=exists)
    assert errors(resp) == {("t", 0): E.NONE, ("gone", 0): E.UNKNOWN_TOPIC_OR_PARTITION}
    resp = txn_commit(h, "g", {("t", 1): 1}, metadata="toolong")
    assert errors(resp) == {("t", 1): E.OFFSET_METADATA_TOO_LARGE}
    # only unknown partitions: the group is not even looked at
    resp = txn_commit(h, "g2", {("gone", 0): 1}, generation=5, exists=exists)
    assert errors(resp) == {("gone", 0): E.UNKNOWN_TOPIC_OR_PARTITION}
    # a group error spares the unknown partitions
    resp = txn_commit(h, "g3", {("t", 0): 1, ("gone", 0): 1}, generation=5, exists=exists)
    assert errors(resp) == {("t", 0): E.ILLEGAL_GENERATION, ("gone", 0): E.UNKNOWN_TOPIC_OR_PARTITION}


def test_pending_offsets_do_not_expire_and_keep_the_group():
    h = Harness(retention_minutes=1000 / 60000)
    h.commit("g", {("t", 0): 1})
    txn_commit(h, "g", {("t", 0): 2})
    h.advance(5000)
    h.c.expire_offsets(h.now)
    assert h.group("g") is not None and h.fetch("g", [("t", [0])]) == {("t", 0): 1}
    h.c.complete_transaction(h.now, PID, commit=True)
    assert h.fetch("g", [("t", [0])]) == {("t", 0): 2}


def test_deleting_a_group_or_an_offset_removes_pending_offsets_with_tombstones():
    h = Harness()
    txn_commit(h, "g", {("t", 0): 7})
    assert h.c.delete_groups(h.now, ["g"])[0]["error_code"] == E.NONE
    assert h.records[-1][1][0][1] is None   # a tombstone for the pending-only partition
    h.c.complete_transaction(h.now, PID, commit=True)
    assert h.fetch("g", [("t", [0])]) == {("t", 0): -1}


def test_replay_keeps_transactional_records_pending_until_their_marker():
    h = Harness()
    h.commit("g", {("t", 0): 1})
    txn_commit(h, "g", {("t", 0): 2, ("t", 1): 3})
    txn_commit(h, "g", {("t", 2): 4}, pid=PID + 1)
    log = []
    for (_, recs, _), pid in zip(h.records, h.producers):
        log += [(k, v) if pid < 0 else (k, v, pid) for k, v in recs]
    fresh = GroupCoordinator()
    fresh.load(log + [EndTransactionMarker(PID, True), EndTransactionMarker(PID + 1, False)], h.now)
    resp = fresh.fetch_offsets(h.now, "g", [("t", [0, 1, 2])])
    assert [p["committed_offset"] for p in resp["topics"][0]["partitions"]] == [2, 3, -1]
    # without markers the offsets stay pending
    fresh = GroupCoordinator()
    fresh.load(log, h.now)
    resp = fresh.fetch_offsets(h.now, "g", [("t", [0, 1])], require_stable=True)
    assert [E(p["error_code"]) for p in resp["topics"][0]["partitions"]] == [E.UNSTABLE_OFFSET_COMMIT] * 2


@pytest.mark.parametrize("commit", [True, False])
def test_a_marker_without_pending_offsets_is_ignored(commit):
    h = Harness()
    h.commit("g", {("t", 0): 1})
    assert h.c.complete_transaction(h.now, 99, commit) == 0
    assert h.fetch("g", [("t", [0])]) == {("t", 0): 1}


def test_a_kip848_member_commits_transactionally_with_its_epoch_below_v9():
    from ..consumer.harness import ConsumerHarness
    h = ConsumerHarness()
    h.c.ctx.sink = lambda partition, records, now_ms, **producer: None
    epoch = h.heartbeat("g", "m1", 0)["member_epoch"]

    def commit(generation, member="m1"):
        return h.c.commit_transactional_offsets(h.now, TxnOffsetCommit(
            "tx", "g", PID, EPOCH, [("t", [CommitPartition(0, 5)])], generation, member, None, 3))

    assert set(errors(commit(epoch)).values()) == {E.NONE}   # OffsetCommit would need v9
    assert set(errors(commit(epoch + 1)).values()) == {E.ILLEGAL_GENERATION}   # stale epoch, in v3's words
    assert set(errors(commit(epoch, "ghost")).values()) == {E.UNKNOWN_MEMBER_ID}


def test_an_unknown_group_with_a_generation_is_group_id_not_found_from_v6():
    """Kafka 4.4's validateTransactionalOffsetCommit: GROUP_ID_NOT_FOUND when the version supports it
    (TxnOffsetCommitRequest.supportsGroupIdNotFoundError, v6), ILLEGAL_GENERATION before."""
    h = Harness()
    for version, code in ((3, E.ILLEGAL_GENERATION), (5, E.ILLEGAL_GENERATION), (6, E.GROUP_ID_NOT_FOUND)):
        resp = txn_commit(h, "nobody", {("t", 0): 1}, member_id="m", generation=2, version=version)
        assert errors(resp) == {("t", 0): code}
    assert h.records == []   # nothing was written
