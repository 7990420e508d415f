"""Rebuilding the coordinator from __consumer_offsets gives the same groups and offsets."""
import struct

import pytest

from kafkaemu.core.coordinator import GroupCoordinator
from kafkaemu.core.offsets.store import CommittedOffset
from kafkaemu.core.classic import records as group_records
from kafkaemu.core.offsets import records as offset_records
from kafkaemu.storage.offsets_topic import log_sink, read_records
from kafkaemu.protocol.errors import ErrorCode as E
from kafkaemu.storage.log_store import OFFSETS_TOPIC, LogStore

from .harness import Harness, coordinator_settings
from .classic.test_static_members import static_group


def group_view(c: GroupCoordinator) -> dict:
    return {gid: (g.state.value, g.generation_id, g.protocol_type, g.protocol_name, g.leader_id,
                  {mid: (m.group_instance_id, m.client_id, m.client_host, m.session_timeout_ms,
                         m.rebalance_timeout_ms, m.metadata(g.protocol_name) if g.protocol_name else None,
                         m.assignment) for mid, m in g.members.items()})
            for gid, g in c.classic.groups.items()}


def busy_history(h: Harness) -> None:
    a, b = h.stable_group("dyn", n=2)
    h.commit("dyn", {("t", 0): 5, ("t", 1): 6}, member_id=a, generation=2)
    h.commit("dyn", {("t", 0): 7}, member_id=b, generation=2)
    static_group(h)                                        # group "g" with static members i0, i1
    h.join(instance="i1", client_id="restarted")           # static restart: new member id stored
    h.commit("simple", {("u", 0): 100, ("u", 1): 200}, metadata="meta")
    h.c.delete_offsets(h.now, "simple", [("u", [1])])
    h.commit("gone", {("u", 0): 1})
    h.c.delete_groups(h.now, ["gone"])
    [x] = h.stable_group("emptied", n=1)
    h.commit("emptied", {("t", 2): 9}, member_id=x, generation=1)
    h.leave("emptied", x)


def test_replay_rebuilds_the_same_groups_and_offsets():
    h = Harness()
    busy_history(h)
    fresh = GroupCoordinator(coordinator_settings(initial_rebalance_delay_ms=0), now_ms=h.now)
    fresh.load(h.all_records(), h.now)
    assert group_view(fresh) == group_view(h.c)
    assert fresh.offsets.store.snapshot() == h.c.offsets.store.snapshot()
    assert "gone" not in fresh.classic.groups and fresh.offsets.store.group("gone") == {}
    assert fresh.classic.groups["emptied"].state.value == "Empty"
    assert fresh.classic.groups["g"].static_members == h.c.classic.groups["g"].static_members


def test_session_timers_of_loaded_ids_with_dashes_do_not_collide():
    # Group "a-b" member "c" and group "a" member "b-c" once shared the timer key "heartbeat-a-b-c".
    def stored(group_id, member_id):
        member = group_records.StoredMember(member_id, None, "c", "/127.0.0.1", 30000, 6000, b"", b"")
        return group_records.encode_group_key(group_id), group_records.encode_group_value(
            group_records.StoredGroup("consumer", 1, "range", member_id, 0, (member,)))
    c = GroupCoordinator(coordinator_settings(initial_rebalance_delay_ms=0), now_ms=0)
    c.load([stored("a-b", "c"), stored("a", "b-c")], 0)
    assert {c.classic.groups[g].state.value for g in ("a-b", "a")} == {"Stable"}
    c.tick(6000)
    assert {c.classic.groups[g].state.value for g in ("a-b", "a")} == {"Empty"}


def test_replayed_members_keep_working_and_expire_if_silent():
    h = Harness()
    a, b = h.stable_group("dyn", n=2, session=6000)
    fresh = GroupCoordinator(coordinator_settings(initial_rebalance_delay_ms=0), now_ms=h.now)
    fresh.load(h.all_records(), h.now)
    h.c = fresh
    assert h.heartbeat("dyn", a, 2) == E.NONE
    assert h.sync("dyn", b, 2).value["assignment"] == f"a-{b}".encode()
    assert h.commit_errors("dyn", {("t", 0): 3}, member_id=a, generation=2) == {E.NONE}
    h.advance(6000)                                      # nobody heartbeats after the "restart"
    assert h.state("dyn") == "Empty"


def test_round_trip_through_the_real_offsets_topic_log():
    store = LogStore()
    h = Harness()
    h.c.ctx.sink = log_sink(store, 50)
    busy_history(h)
    topic = store.get(OFFSETS_TOPIC)
    assert topic is not None and topic.internal and len(topic.partitions) == 50
    assert topic.configs["cleanup.policy"] == "compact"
    fresh = GroupCoordinator(coordinator_settings(initial_rebalance_delay_ms=0), now_ms=h.now)
    fresh.load(read_records(store), h.now)
    assert group_view(fresh) == group_view(h.c)
    assert fresh.offsets.store.snapshot() == h.c.offsets.store.snapshot()


def test_offset_commit_record_bytes_match_kafkas_layout():
    key = offset_records.encode_offset_key("g", "t", 3)
    # int16 key version 1, then group, topic (int16-length strings), partition int32
    assert key == struct.pack(">h", 1) + struct.pack(">h", 1) + b"g" + struct.pack(">h", 1) + b"t" + struct.pack(">i", 3)
    value = offset_records.encode_offset_value(CommittedOffset(42, 5, "md", 1000))
    # v3: offset int64, leader_epoch int32, metadata string, commit_timestamp int64
    assert value == struct.pack(">hqih", 3, 42, 5, 2) + b"md" + struct.pack(">q", 1000)
    value1 = offset_records.encode_offset_value(CommittedOffset(42, 5, "", 1000, 2000))
    # v1 (explicit expiry): offset, metadata, commit_timestamp, expire_timestamp; no leader epoch
    assert value1 == struct.pack(">hqhqq", 1, 42, 0, 1000, 2000)


@pytest.mark.parametrize("committed", [
    CommittedOffset(0, -1, "", 0), CommittedOffset(2**63 - 1, 2**31 - 1, "é" * 100, -1),
    CommittedOffset(-1, -(2**31), "m" * 32767, 2**63 - 1), CommittedOffset(7, -1, "x", 1000, 2000)])
def test_offset_commit_values_are_what_the_generated_codec_writes(committed):
    from kafkaemu.protocol.catalog import catalog
    version = 3 if committed.expire_timestamp_ms is None else 1
    value = offset_records.encode_offset_value(committed)
    assert value == struct.pack(">h", version) + catalog().data("OffsetCommitValue", version).encode({
        "offset": committed.offset, "leader_epoch": committed.leader_epoch, "metadata": committed.metadata,
        "commit_timestamp": committed.commit_timestamp_ms, "expire_timestamp": committed.expire_timestamp_ms or -1})
    assert offset_records.decode_offset_value(value) == committed


def test_an_offset_commit_value_that_cannot_be_written_raises():
    with pytest.raises(ValueError):
        offset_records.encode_offset_value(CommittedOffset(1, -1, "m" * 32768, 0))
    with pytest.raises(struct.error):
        offset_records.encode_offset_value(CommittedOffset(2**63, -1, "", 0))


def test_group_metadata_record_bytes_match_kafkas_layout():
    key = group_records.encode_group_key("grp")
    assert key == struct.pack(">hh", 2, 3) + b"grp"
    member = group_records.StoredMember("m", "inst", "c", "/h", 300, 10, b"S", b"A")
    value = group_records.encode_group_value(group_records.StoredGroup("consumer", 7, "range", "m", 99, (member,)))

    def s(x: str) -> bytes:
        return struct.pack(">h", len(x)) + x.encode()
    expected = (struct.pack(">h", 3) + s("consumer") + struct.pack(">i", 7) + s("range") + s("m")
                + struct.pack(">q", 99) + struct.pack(">i", 1)
                + s("m") + s("inst") + s("c") + s("/h") + struct.pack(">ii", 300, 10)
                + struct.pack(">i", 1) + b"S" + struct.pack(">i", 1) + b"A")
    assert value == expected
    decoded = group_records.decode_group_value(value)
    assert decoded.members[0].group_instance_id == "inst" and decoded.generation == 7


def test_decodes_older_value_versions():
    from kafkaemu.protocol.catalog import catalog
    v0 = struct.pack(">h", 0) + catalog().data("OffsetCommitValue", 0).encode(
        {"offset": 9, "metadata": "x", "commit_timestamp": 5})
    assert offset_records.decode_offset_value(v0) == CommittedOffset(9, -1, "x", 5, None)
    g1 = struct.pack(">h", 1) + catalog().data("GroupMetadataValue", 1).encode({
        "protocol_type": "consumer", "generation": 2, "protocol": "range", "leader": "m",
        "members": [{"member_id": "m", "client_id": "c", "client_host": "/h", "rebalance_timeout": 1,
                     "session_timeout": 2, "subscription": b"", "assignment": b""}]})
    g = group_records.decode_group_value(g1)
    assert g.current_state_timestamp_ms == -1 and g.members[0].group_instance_id is None
