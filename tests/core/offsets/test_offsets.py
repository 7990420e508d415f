"""Offset commits, fetches, deletes and retention."""
from kafkaemu.core.offsets.store import CommittedOffset
from kafkaemu.protocol.errors import ErrorCode as E

from ..harness import Harness

DAY = 24 * 3600 * 1000


def test_standalone_commit_creates_a_simple_group_and_fetch_returns_it():
    h = Harness()
    assert h.commit_errors("simple", {("t", 0): 10, ("t", 1): 20}, metadata="m") == {E.NONE}
    assert h.state("simple") == "Empty" and h.group("simple").protocol_type is None
    resp = h.c.fetch_offsets(h.now, "simple", [("t", [0, 1, 2])])
    parts = resp["topics"][0]["partitions"]
    assert [(p["partition_index"], p["committed_offset"], p["metadata"]) for p in parts] == [
        (0, 10, "m"), (1, 20, "m"), (2, -1, "")]
    assert h.fetch("simple", None) == {("t", 0): 10, ("t", 1): 20}


def test_commit_with_stale_generation_is_illegal_and_changes_nothing():
    h = Harness()
    a, b = h.stable_group(n=2)
    assert h.commit_errors("g", {("t", 0): 5}, member_id=a, generation=2) == {E.NONE}
    assert h.commit_errors("g", {("t", 0): 9}, member_id=a, generation=1) == {E.ILLEGAL_GENERATION}
    assert h.commit_errors("g", {("t", 0): 9}, member_id="ghost", generation=2) == {E.UNKNOWN_MEMBER_ID}
    assert h.fetch("g", [("t", [0])]) == {("t", 0): 5}


def test_commit_during_preparing_rebalance_with_current_generation_is_accepted():
    h = Harness()
    a, b = h.stable_group(n=2)
    h.join("g", a, client_id="C1")
    assert h.state() == "PreparingRebalance"
    assert h.commit_errors("g", {("t", 0): 42}, member_id=b, generation=2) == {E.NONE}
    h.join("g", b, client_id="C2")
    assert h.state() == "CompletingRebalance"
    assert h.commit_errors("g", {("t", 0): 43}, member_id=b, generation=3) == {E.REBALANCE_IN_PROGRESS}
    assert h.commit_errors("g", {("t", 0): 43}, member_id=b, generation=2) == {E.ILLEGAL_GENERATION}
    assert h.fetch("g", [("t", [0])]) == {("t", 0): 42}


def test_metadata_size_limit_and_unknown_partitions():
    h = Harness(metadata_max_bytes=10)
    exists = lambda topic, p: topic == "t" and p < 2
    resp = h.commit("s", {("t", 0): 1}, metadata="x" * 11, exists=exists)
    assert resp["topics"][0]["partitions"][0]["error_code"] == E.OFFSET_METADATA_TOO_LARGE
    resp = h.commit("s", {("t", 1): 1, ("t", 5): 1, ("nope", 0): 1}, metadata="x" * 10, exists=exists)
    codes = {(t["name"], p["partition_index"]): p["error_code"] for t in resp["topics"] for p in t["partitions"]}
    assert codes == {("t", 1): 0, ("t", 5): E.UNKNOWN_TOPIC_OR_PARTITION, ("nope", 0): E.UNKNOWN_TOPIC_OR_PARTITION}
    assert h.fetch("s", None) == {("t", 1): 1}


def test_commit_writes_offset_commit_records_to_the_groups_partition():
    h = Harness()
    h.commit("my-group", {("t", 3): 77})
    [(partition, [(key, value)], _)] = h.records
    assert partition == 12                     # abs("my-group".hashCode()) % 50
    assert key[:2] == b"\x00\x01"              # offset commit key version 1
    assert value[:2] == b"\x00\x03"            # offset commit value version 3


def test_offset_delete_rules():
    h = Harness()
    a, b = h.stable_group(n=1) + [None]
    h.group().subscribed_topics = {"t"}         # what the consumer subscription would say
    h.commit("g", {("t", 0): 1, ("other", 0): 2}, member_id=a, generation=1)
    resp = h.c.delete_offsets(h.now, "g", [("t", [0]), ("other", [0])])
    codes = {t["name"]: t["partitions"][0]["error_code"] for t in resp["topics"]}
    assert resp["error_code"] == 0 and codes == {"t": E.GROUP_SUBSCRIBED_TO_TOPIC, "other": 0}
    assert h.fetch("g", None) == {("t", 0): 1}
    # A non-consumer group with members refuses outright.
    h2 = Harness()
    h2.stable_group(n=1, protocol_type="connect")
    assert h2.c.delete_offsets(h2.now, "g", [("t", [0])])["error_code"] == E.NON_EMPTY_GROUP
    # Empty group: deletes and writes a tombstone.
    h3 = Harness()
    h3.commit("s", {("t", 0): 1})
    resp = h3.c.delete_offsets(h3.now, "s", [("t", [0])])
    assert resp["topics"][0]["partitions"][0]["error_code"] == 0 and h3.fetch("s", None) == {}
    assert h3.all_records()[-1][1] is None


def test_subscribed_topics_come_from_consumer_protocol_metadata():
    import struct
    meta = struct.pack(">hi", 0, 2) + struct.pack(">h", 2) + b"t1" + struct.pack(">h", 2) + b"t2" + struct.pack(">i", -1)
    h = Harness()
    h.stable_group(n=1, protocols=[("range", meta)])
    assert h.group().subscribed_topics == {"t1", "t2"}
    assert h.group().is_subscribed_to_topic("t1") and not h.group().is_subscribed_to_topic("t3")


def test_delete_group_removes_offsets_and_writes_tombstones():
    h = Harness()
    h.commit("s", {("t", 0): 1, ("t", 1): 2})
    assert h.c.delete_groups(h.now, ["s"]) == [{"group_id": "s", "error_code": 0}]
    assert h.fetch("s", None) == {} and h.group("s") is None
    tombstones = [k for k, v in h.all_records() if v is None]
    assert len(tombstones) == 3                # two offsets and the group


def test_offsets_of_an_empty_group_expire_after_retention_then_the_group_goes():
    h = Harness(retention_minutes=7 * DAY / 60000, retention_check_interval_ms=600000)
    [a] = h.stable_group(n=1)
    h.commit("g", {("t", 0): 5}, member_id=a, generation=1)
    h.leave("g", a)
    assert h.state() == "Empty"
    h.advance(7 * DAY - 600000)
    assert h.fetch("g", None) == {("t", 0): 5}
    h.advance(600000)
    assert h.fetch("g", None) == {}
    assert h.group("g") is None
    assert h.c.transitions[-1].to_state.value == "Dead"


def test_offsets_of_an_active_group_do_not_expire():
    h = Harness(retention_minutes=DAY / 60000, retention_check_interval_ms=600000)
    a, b = h.stable_group(n=2, session=1800000)
    h.commit("g", {("t", 0): 5}, member_id=a, generation=2)
    for _ in range(3 * 24 * 3):                   # three days, heartbeating every 20 minutes
        h.advance(20 * 60 * 1000)
        assert h.heartbeat("g", a, 2) == E.NONE and h.heartbeat("g", b, 2) == E.NONE
    assert h.fetch("g", None) == {("t", 0): 5}


def test_simple_group_offsets_expire_from_their_commit_time_and_explicit_retention_wins():
    h = Harness(retention_minutes=DAY / 60000, retention_check_interval_ms=1000)
    h.commit("s", {("t", 0): 1})
    h.advance(DAY // 2)
    h.commit("s", {("t", 1): 2})
    h.commit("s", {("t", 2): 3}, retention=5000, version=2)
    h.advance(5000)
    assert h.fetch("s", None) == {("t", 0): 1, ("t", 1): 2}
    h.advance(DAY // 2)
    assert h.fetch("s", None) == {("t", 1): 2}
    h.advance(DAY // 2)
    assert h.fetch("s", None) == {} and h.group("s") is None


def test_committed_offsets_survive_only_from_members_of_the_current_generation():
    """A consumer committing through a rebalance never rolls back: stale commits are refused."""
    h = Harness()
    a, b = h.stable_group(n=2)
    offset = 0
    for gen_round in range(3):
        gen = h.group().generation_id
        offset += 10
        assert h.commit_errors("g", {("t", 0): offset}, member_id=b, generation=gen) == {E.NONE}
        h.join("g", a, client_id="C1")                     # leader rejoin: rebalance
        assert h.commit_errors("g", {("t", 0): offset + 1}, member_id=b, generation=gen) == {E.NONE}
        offset += 1
        h.join("g", b, client_id="C2")
        # b's old-generation commit now fails, so the stored offset never goes backwards.
        assert h.commit_errors("g", {("t", 0): 0}, member_id=b, generation=gen) == {E.ILLEGAL_GENERATION}
        new_gen = h.group().generation_id
        leader = h.group().leader_id
        h.sync("g", b if leader != b else a, new_gen)
        h.sync("g", leader, new_gen, {})
        assert h.fetch("g", [("t", [0])]) == {("t", 0): offset}


def test_fetch_dead_group_and_offset_store_directly():
    h = Harness()
    h.c.offsets.store.put("x", "t", 0, CommittedOffset(3, 7, "meta", 0))
    resp = h.c.fetch_offsets(h.now, "x", [("t", [0])])
    assert resp["topics"][0]["partitions"][0]["committed_leader_epoch"] == 7


def test_deleting_a_topic_drops_its_offsets_in_every_group_with_tombstones():
    from kafkaemu.core.offsets.records import decode_key

    h = Harness()
    assert h.commit_errors("one", {("gone", 0): 5, ("gone", 1): 6, ("kept", 0): 7}) == {E.NONE}
    assert h.commit_errors("two", {("gone", 0): 8}) == {E.NONE}
    written = len(h.all_records())
    assert h.c.on_topic_deleted(h.now, "gone") == 3
    assert h.fetch("one", None) == {("kept", 0): 7}
    assert h.fetch("two", None) == {}
    tombstones = h.all_records()[written:]
    assert all(value is None for _, value in tombstones)
    assert sorted((k.group_id, k.topic, k.partition) for k in (decode_key(key) for key, _ in tombstones)) == [
        ("one", "gone", 0), ("one", "gone", 1), ("two", "gone", 0)]
    assert h.c.on_topic_deleted(h.now, "gone") == 0  # nothing left to drop
