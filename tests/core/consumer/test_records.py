"""KIP-848 consumer groups in __consumer_offsets: Kafka's record format, only changes written,
and replay rebuilding groups a restarted coordinator continues with."""
from __future__ import annotations

from kafkaemu.core.consumer import records as cr
from kafkaemu.core.consumer.requests import ConsumerHeartbeat
from kafkaemu.core.consumer.settings import ConsumerSettings
from kafkaemu.core.consumer.member import MemberState
from kafkaemu.core.coordinator import CoordinatorSettings, GroupCoordinator
from kafkaemu.core.offsets.requests import CommitPartition, OffsetCommit
from kafkaemu.protocol.errors import ErrorCode as E
from kafkaemu.spark.decoding import decode_record

from .harness import Client, ConsumerHarness, settle, tid

T = tid("t")


def restarted(h: ConsumerHarness) -> GroupCoordinator:
    c = GroupCoordinator(CoordinatorSettings(consumer=ConsumerSettings()), now_ms=h.now)
    c.load(list(h.records), h.now)
    return c


def test_key_and_value_bytes_are_kafkas():
    key = cr.encode_key(cr.ConsumerKey(cr.GROUP_METADATA, "g"))
    assert key == b"\x00\x03" + b"\x00\x01g"
    assert cr.encode_value(cr.ConsumerKey(cr.GROUP_METADATA, "g"), (7,)) == b"\x00\x00" + b"\x00\x00\x00\x07" + b"\x00"
    member_key = cr.encode_key(cr.ConsumerKey(cr.CURRENT_MEMBER, "g", "m"))
    assert member_key == b"\x00\x08" + b"\x00\x01g" + b"\x00\x01m"
    value = cr.encode_value(cr.ConsumerKey(cr.CURRENT_MEMBER, "g", "m"), (3, 2, 1, ((T, ((0, 3), (1, 2))),), ()))
    epochs = b"\x01" + b"\x00" + b"\x09" + b"\x03" + b"\x00\x00\x00\x03" + b"\x00\x00\x00\x02"   # tag 0, 9 bytes
    assert value == (b"\x00\x00" + b"\x00\x00\x00\x03" + b"\x00\x00\x00\x02" + b"\x01"
                     + b"\x02" + T + b"\x03" + b"\x00\x00\x00\x00\x00\x00\x00\x01" + epochs + b"\x01" + b"\x00")
    assert cr.decode_key(member_key) == cr.ConsumerKey(cr.CURRENT_MEMBER, "g", "m")


def test_a_join_writes_the_group_member_and_assignment_records():
    h = ConsumerHarness()
    h.heartbeat(member_id="m1")
    versions = sorted(cr.decode_key(k).version for k, v in h.records if k[:2] >= b"\x00\x03")
    assert versions == [3, 4, 5, 6, 7, 8]
    n = len(h.records)
    h.heartbeat(member_id="m1", epoch=1, owned={T: set(range(6))})
    assert len(h.records) == n          # nothing changed, nothing written


def test_replay_restores_groups_and_members_continue():
    h = ConsumerHarness({"t": 6, "u": 2})
    a, b = Client(h, "a", topics=("t", "u")), Client(h, "b", topics=("t",), instance="ib", assignor="range")
    a.beat()
    b.beat()
    a.beat()                                      # a is revoking: UNREVOKED_PARTITIONS
    c = restarted(h)
    before, after = h.group(), c.consumer.groups["g"]
    assert (after.group_epoch, after.assignment_epoch) == (before.group_epoch, before.assignment_epoch)
    assert after.members == before.members and after.target == before.target
    assert after.subscription_metadata == before.subscription_metadata
    assert after.static_members == {"ib": "b"}
    assert after.members["a"].state is MemberState.UNREVOKED_PARTITIONS
    assert c.consumer_group_describe(h.now, ["g"], {})[0]["assignor_name"] == "range"
    # The members carry on against the restarted coordinator with their epochs.
    h.c = c
    settle([a, b])
    assert a.last["error_code"] == 0 and b.last["error_code"] == 0
    assert a.partitions() | b.partitions() == set(range(6))


def test_replay_of_a_departure_and_of_a_deleted_group():
    h = ConsumerHarness()
    a, b = Client(h, "a"), Client(h, "b")
    a.beat()
    b.beat()
    settle([a, b])
    b.leave()
    assert list(restarted(h).consumer.groups["g"].members) == ["a"]
    h.c.commit_offsets(h.now, OffsetCommit("g", [("t", [CommitPartition(0, 5)])], a.epoch, "a"))
    a.leave()
    assert h.c.delete_groups(h.now, ["g"]) == [{"group_id": "g", "error_code": 0}]
    c = restarted(h)
    assert "g" not in c.consumer.groups and "g" not in c.classic.groups
    assert c.offsets.store.group("g") == {}


def test_restarted_coordinator_fences_members_that_stay_away():
    h = ConsumerHarness()
    Client(h, "a").beat()
    c = restarted(h)
    c.tick(h.now + 45000)
    assert c.consumer.groups["g"].members == {}


def test_a_replaced_classic_group_stays_a_consumer_group_after_replay():
    h = ConsumerHarness()
    h.c.commit_offsets(h.now, OffsetCommit("g", [("t", [CommitPartition(0, 42)])]))
    Client(h, "a").beat()
    c = restarted(h)
    assert "g" not in c.classic.groups and "g" in c.consumer.groups
    assert c.offsets.store.group("g")["t"][0].offset == 42
    r = c.consumer_group_heartbeat(h.now, ConsumerHeartbeat("g", "a", 2, owned={T: set(range(6))}), dict(h.topics))
    assert r["error_code"] == E.NONE and r["member_epoch"] == 2


def test_spark_decoding_passes_consumer_records_as_unknown():
    h = ConsumerHarness()
    h.heartbeat(member_id="m1")
    rows = [decode_record(k, v) for k, v in h.records]
    assert rows and all(r.kind == "unknown" for r in rows)


def test_assignment_epochs_are_written_as_kafka_tags_them_and_read_back():
    h = ConsumerHarness()
    a, b = Client(h, "a"), Client(h, "b")
    a.beat()
    settle([b, a])
    before = h.group().members
    assert len({e for m in before.values() for e in m.assignment_epochs.values()}) == 2   # two epochs told apart
    after = restarted(h).consumer.groups["g"].members
    assert {m: after[m].assignment_epochs for m in after} == {m: before[m].assignment_epochs for m in before}
