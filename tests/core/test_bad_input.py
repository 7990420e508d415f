"""Bad input to the group coordinator answers as Kafka does and leaves nothing half done:
duplicate JoinGroup protocols, the empty group id, OffsetCommit retention overflow, group ids too
long for a record key, unreadable __consumer_offsets records, and timers that raise."""
import struct

import pytest

from kafkaemu.core.consumer import records as consumer_records
from kafkaemu.core.classic import records as group_records
from kafkaemu.core.offsets import records as offset_records
from kafkaemu.core.consumer.requests import ConsumerHeartbeat
from kafkaemu.core.coordinator import GroupCoordinator
from kafkaemu.core.offsets.store import CommittedOffset
from kafkaemu.protocol.errors import ErrorCode as E

from .harness import Harness, coordinator_settings

INT64_MAX = 2**63 - 1


# -- JoinGroup listing a protocol twice ----------------------------------------------------------

def test_distinct_protocols_keeps_the_first_of_each_name():
    from kafkaemu.core.classic.requests import distinct_protocols
    assert distinct_protocols([("range", b"1"), ("rr", b"2"), ("range", b"3")]) == [("range", b"1"), ("rr", b"2")]


def test_a_protocol_listed_twice_joins_and_later_members_still_join():
    h = Harness()
    twice = [("range", b"first"), ("range", b"second")]
    a, ra = h.join_new("g", protocols=twice)
    assert ra.error == E.NONE and ra.value["protocol_name"] == "range"
    assert ra.value["members"][0]["metadata"] == b"first"
    b, rb = h.join_new("g", client_id="C2")              # a correct member is not refused
    assert rb.parked and h.state("g") == "PreparingRebalance"
    assert h.join("g", a, protocols=twice).error == E.NONE
    assert rb.error == E.NONE and h.state("g") == "CompletingRebalance"
    assert h.group("g").supported_protocols == {"range": 2}


def test_a_protocol_listed_twice_in_a_rejoin_matches_the_stored_one():
    h = Harness()
    leader, follower = h.stable_group("g", n=2)
    gen = h.group("g").generation_id
    # A follower rejoining in Stable with its same protocol (listed twice) gets the current answer.
    r = h.join("g", follower, client_id="C2", protocols=[("range", b"range-meta"), ("range", b"other")])
    assert r.error == E.NONE and r.value["generation_id"] == gen and h.state("g") == "Stable"


# -- timers ---------------------------------------------------------------------------------------

def test_a_failing_timer_is_contained_and_the_coordinator_keeps_serving():
    h = Harness()
    [a] = h.stable_group("g", n=1)
    gen = h.group("g").generation_id

    def boom():
        raise RuntimeError("bug in a timer")
    h.c.timers.schedule("broken", h.now + 10, boom)
    h.advance(10)                                          # the ticker does not raise
    h.c.timers.schedule("broken", h.now, boom)             # due inside the next request
    assert h.heartbeat("g", a, gen) == E.NONE
    assert not h.c.timers.is_scheduled("broken")


# -- the empty group id ---------------------------------------------------------------------------

def test_the_empty_group_id_is_invalid_for_the_group_membership_apis():
    h = Harness()
    assert h.join("").error == E.INVALID_GROUP_ID
    assert h.sync("", "m", 1).error == E.INVALID_GROUP_ID
    assert h.heartbeat("", "m", 1) == E.INVALID_GROUP_ID
    assert h.leave("", "m")["error_code"] == E.INVALID_GROUP_ID
    assert h.c.delete_offsets(h.now, "", [("t", [0])])["error_code"] == E.INVALID_GROUP_ID
    [d] = h.c.consumer_group_describe(h.now, [""], {})
    assert d["error_code"] == E.INVALID_GROUP_ID
    assert h.c.classic.groups == {}


def test_the_empty_group_id_still_commits_and_fetches_offsets_as_in_kafka():
    # Kafka's GroupCoordinatorService only refuses a null group id for OffsetCommit/OffsetFetch.
    h = Harness()
    assert h.commit_errors("", {("t", 0): 5}) == {E.NONE}
    assert h.fetch("", [("t", [0])]) == {("t", 0): 5}
    # DescribeGroups and DeleteGroups accept it too.
    [d] = h.c.describe_groups(h.now, [""])
    assert d["error_code"] == E.NONE and d["group_state"] == "Empty"
    assert h.c.delete_groups(h.now, [""]) == [{"group_id": "", "error_code": E.NONE}]


# -- OffsetCommit retention overflow and records that cannot be built -------------------------------

def test_retention_of_int64_max_commits_and_wraps_as_java_long_arithmetic():
    h = Harness()
    assert h.commit_errors("s", {("t", 0): 5}, version=2, retention=INT64_MAX) == {E.NONE}
    stored = h.c.offsets.store.get("s", "t", 0)
    assert stored.offset == 5
    assert stored.expire_timestamp_ms == h.now + INT64_MAX - 2**64   # Java long overflow
    [(key, value)] = h.all_records()
    assert offset_records.decode_offset_value(value) == stored               # the record was written
    fresh = GroupCoordinator(coordinator_settings(initial_rebalance_delay_ms=0), now_ms=h.now)
    fresh.load(h.all_records(), h.now)
    assert fresh.offsets.store.get("s", "t", 0) == stored
    assert h.c.expire_offsets(h.now) == 1                         # already past, as in Kafka
    assert h.fetch("s", [("t", [0])]) == {("t", 0): -1}


def test_a_commit_whose_record_cannot_be_built_changes_nothing():
    h = Harness()
    long_group = "g" * 40000                    # over a record key's int16 string length
    resp = h.commit(long_group, {("t", 0): 5, ("gone", 0): 1}, exists=lambda t, p: t == "t")
    codes = {(t["name"], p["partition_index"]): E(p["error_code"]) for t in resp["topics"] for p in t["partitions"]}
    assert codes == {("t", 0): E.UNKNOWN_SERVER_ERROR, ("gone", 0): E.UNKNOWN_TOPIC_OR_PARTITION}
    assert h.c.offsets.store.snapshot() == {} and h.c.classic.groups == {} and h.records == []


def test_a_commit_whose_metadata_cannot_be_stored_changes_nothing():
    h = Harness(metadata_max_bytes=100000)
    [a] = h.stable_group("g", n=1)
    before = len(h.records)
    errors = h.commit_errors("g", {("t", 0): 5, ("t", 1): 6}, member_id=a, generation=1, metadata="m" * 40000)
    assert errors == {E.UNKNOWN_SERVER_ERROR}
    assert h.c.offsets.store.group("g") == {} and len(h.records) == before


def test_a_group_id_too_long_for_a_record_key_creates_no_group():
    h = Harness()
    long_group = "g" * 40000
    assert h.join(long_group).error == E.UNKNOWN_SERVER_ERROR
    resp = h.c.consumer_group_heartbeat(h.now, ConsumerHeartbeat(
        group_id=long_group, member_id="m1", member_epoch=0, rebalance_timeout_ms=30000,
        subscribed_topic_names=["t"], owned={}), {})
    assert resp["error_code"] == E.UNKNOWN_SERVER_ERROR
    assert h.c.classic.groups == {} and h.c.consumer.groups == {} and h.records == []
    assert h.join("g" * 32767).error == E.MEMBER_ID_REQUIRED   # the longest that fits still works


# -- records __consumer_offsets may hold that do not load ----------------------------------------------

def _some_state() -> Harness:
    h = Harness()
    h.stable_group("g", n=2)
    h.commit("s", {("t", 0): 7})
    return h


def _load(records) -> GroupCoordinator:
    fresh = GroupCoordinator(coordinator_settings(initial_rebalance_delay_ms=0), now_ms=1_000_000)
    fresh.load(records, 1_000_000)
    return fresh


@pytest.mark.parametrize("bad", [
    (struct.pack(">h", 99) + b"whatever", b"value"),                         # unknown record type
    (struct.pack(">h", 99) + b"whatever", None),
    (struct.pack(">h", -1), b""),
    (b"\x00", b"x"),                                                          # no version at all
    (offset_records.encode_offset_key("s", "t", 0), b"\x00\x03garbage"),                 # value does not decode
    (offset_records.encode_offset_key("s", "t", 0), struct.pack(">h", 77) + b"\x00" * 40),   # unknown value version
    (offset_records.encode_offset_key("s", "t", 1)[:5], b"\x00\x03"),                   # key cut short
    (group_records.encode_group_key("g"), b"\x00\x03\x00\x08consumer"),                  # group value cut short
    (consumer_records.encode_key(consumer_records.ConsumerKey(3, "c")), b"\x00\x00\xff"),
])
def test_a_record_that_does_not_load_is_skipped_and_the_rest_loads(bad):
    h = _some_state()
    good = h.all_records()
    fresh = _load(good[:1] + [bad] + good[1:])
    expected = _load(good)
    assert fresh.offsets.store.snapshot() == expected.offsets.store.snapshot()
    assert {gid: (g.state, g.generation_id, sorted(g.members)) for gid, g in fresh.classic.groups.items()} == \
        {gid: (g.state, g.generation_id, sorted(g.members)) for gid, g in expected.classic.groups.items()}
    assert fresh.consumer.groups == {}


def test_a_bad_consumer_group_record_does_not_drop_the_classic_group_of_that_name():
    h = Harness()
    h.commit("c", {("t", 0): 3})
    bad = (consumer_records.encode_key(consumer_records.ConsumerKey(3, "c")), b"\x00\x00\xff")
    fresh = _load(h.all_records() + [bad])
    assert "c" in fresh.classic.groups and "c" not in fresh.consumer.groups
    assert fresh.offsets.store.get("c", "t", 0) == CommittedOffset(3, -1, "", h.now)


def test_a_group_record_that_cannot_be_written_fails_the_sync_and_rebalances():
    h = Harness()
    mid, joined = h.join_new("g", client_id="c" * 32767)   # its member id is too long for the record
    assert joined.error == E.NONE and h.state("g") == "CompletingRebalance"
    sync = h.sync("g", mid, 1, {mid: b"assignment"})
    assert sync.error == E.UNKNOWN_SERVER_ERROR             # as Kafka's failed append, no exception
    assert h.state("g") == "PreparingRebalance"
    assert h.group("g").members[mid].assignment == b""
    assert [k for _, recs, _ in h.records for k, _ in recs if k != group_records.encode_group_key("g")] == []
    assert all(v is None or group_records.decode_group_value(v).members == () for _, recs, _ in h.records for _, v in recs)
