"""The streams group coordinator driven with requests and a manual clock: reconciliation under a
rebalance timeout, epochs, offsets committed by members, the shutdown status and endpoints."""
from __future__ import annotations

from kafkaemu.core.coordinator import GroupCoordinator
from kafkaemu.core.offsets.requests import CommitPartition, OffsetCommit
from kafkaemu.core.runtime import AppendError
from kafkaemu.core.streams.requests import StreamsHeartbeat
from kafkaemu.protocol.catalog import catalog
from kafkaemu.protocol.errors import ErrorCode as E
from tests.core.harness import RecordingLog as Log

TOPICS = {"in": 4, "app-log": 4}
TOPOLOGY = {"epoch": 1, "subtopologies": [{"subtopology_id": "0", "source_topics": ["in"],
                                           "state_changelog_topics": [{"name": "app-log"}]}]}


def request(member, epoch, owned=None, **over):
    """A heartbeat as the handler builds it from a decoded request (``api_version``: the request's, 1 unless given)."""
    api_version = over.pop("api_version", 1)
    codec = catalog().request(88, 0)
    body = {"group_id": "app", "member_id": member, "member_epoch": epoch, "endpoint_information_epoch": 0,
            "rebalance_timeout_ms": 1000 if epoch == 0 else -1, "topology": TOPOLOGY if epoch == 0 else None,
            "process_id": "p-" + member}
    if owned is not None:
        body.update(active_tasks=[{"subtopology_id": "0", "partitions": sorted(owned)}] if owned else [],
                    standby_tasks=[], warmup_tasks=[])
    body.update(over)
    r = codec.decode(codec.encode(body))
    return StreamsHeartbeat(r.group_id, r.member_id, r.member_epoch, r.endpoint_information_epoch, r.instance_id,
                            r.rack_id, r.rebalance_timeout_ms, r.topology, r.active_tasks, r.standby_tasks,
                            r.warmup_tasks, r.process_id, r.user_endpoint, r.client_tags, r.task_offsets,
                            r.task_end_offsets, r.shutdown_application, "client", "/127.0.0.1", api_version)


class Streams:
    def __init__(self) -> None:
        self.now = 0
        self.gc = GroupCoordinator(now_ms=0)

    def hb(self, member, epoch, owned=None, **over):
        reply, created = self.gc.streams_group_heartbeat(self.now, request(member, epoch, owned, **over), TOPICS.get)
        assert created == {}
        return reply

    def active(self, reply):
        return {p for t in reply["active_tasks"] or [] for p in t["partitions"]}


def joined(s, member="m1"):
    """The member's join: its internal topics exist, so it gets every task at once."""
    r = s.hb(member, 0)
    assert r["error_code"] == 0 and r["status"] == []   # Kafka: an empty list, never null
    return r


def test_a_member_that_does_not_revoke_in_its_rebalance_timeout_is_removed():
    s = Streams()
    r1 = joined(s)
    assert s.active(r1) == {0, 1, 2, 3}
    r2 = s.hb("m2", 0)
    r1 = s.hb("m1", r1["member_epoch"], owned={0, 1, 2, 3})
    assert len(s.active(r1)) == 2                   # asked to revoke two
    s.now = 999
    s.hb("m1", r1["member_epoch"], owned={0, 1, 2, 3})
    s.now = 1000
    s.gc.tick(1000)
    assert "m1" not in s.gc.group("app").members
    r2 = s.hb("m2", r2["member_epoch"], owned=set())
    assert s.active(r2) == {0, 1, 2, 3}


def test_epochs_fence_as_kafka():
    s = Streams()
    r = joined(s)
    epoch = r["member_epoch"]
    fenced = s.hb("m1", epoch + 1, owned=set())
    assert (fenced["error_code"], fenced["status"]) == (E.FENCED_MEMBER_EPOCH, [])   # Status is never null
    s.hb("m2", 0)
    r = s.hb("m1", epoch, owned={0, 1, 2, 3})
    r = s.hb("m1", epoch, owned=set(s.active(r)))
    assert r["member_epoch"] > epoch
    # the previous epoch is accepted while the member owns no more than it is assigned
    assert s.hb("m1", epoch, owned=set(s.active(r)) or set())["error_code"] == 0
    assert s.hb("m1", epoch, owned={0, 1, 2, 3})["error_code"] == E.FENCED_MEMBER_EPOCH


def commit(s, member, epoch, version=9):
    req = OffsetCommit("app", [("in", [CommitPartition(0, 5)])], generation_id=epoch, member_id=member,
                       api_version=version)
    return s.gc.commit_offsets(s.now, req)


def test_members_commit_at_their_epoch_with_offset_commit_v9():
    s = Streams()
    epoch = joined(s)["member_epoch"]
    code = lambda reply: reply["topics"][0]["partitions"][0]["error_code"]   # noqa: E731
    assert code(commit(s, "m1", epoch - 1)) == E.STALE_MEMBER_EPOCH
    assert code(commit(s, "m1", epoch, version=8)) == E.UNSUPPORTED_VERSION
    assert code(commit(s, "nobody", epoch)) == E.UNKNOWN_MEMBER_ID
    assert code(commit(s, "m1", epoch)) == 0
    fetched = s.gc.fetch_offsets(s.now, "app", None, "m1", epoch + 3)
    assert fetched["error_code"] == E.STALE_MEMBER_EPOCH
    assert s.gc.fetch_offsets(s.now, "app", None)["topics"][0]["partitions"][0]["committed_offset"] == 5


def test_a_shutdown_request_reaches_every_member():
    s = Streams()
    r1 = joined(s)
    r2 = s.hb("m2", 0, shutdown_application=True)
    assert [x["status_code"] for x in r2["status"]] == [4]   # the asking member's own answer too
    r1 = s.hb("m1", r1["member_epoch"], owned=s.active(r1))
    assert [x["status_code"] for x in r1["status"]] == [4]
    assert "m2" in r1["status"][0]["status_detail"]


def test_endpoints_of_every_member_come_with_a_new_endpoint_epoch():
    s = Streams()
    r = s.hb("m1", 0, user_endpoint={"host": "h1", "port": 1})
    r = s.hb("m1", r["member_epoch"], owned=set(), endpoint_information_epoch=r["endpoint_information_epoch"])
    assert r["endpoint_information_epoch"] >= 1
    (e,) = r["partitions_by_user_endpoint"]
    assert e["user_endpoint"] == {"host": "h1", "port": 1}
    assert e["active_partitions"] == [{"topic": "in", "partitions": [0, 1, 2, 3]}]
    again = s.hb("m1", r["member_epoch"], owned={0, 1, 2, 3},
                 endpoint_information_epoch=r["endpoint_information_epoch"])
    assert again["partitions_by_user_endpoint"] is None


def test_a_group_of_another_type_is_not_found_and_delete_needs_it_empty():
    s = Streams()
    joined(s)
    assert s.gc.delete_groups(s.now, ["app"]) == [{"group_id": "app", "error_code": E.NON_EMPTY_GROUP}]
    s.hb("m1", -1)
    assert s.gc.list_groups(s.now, types_filter=["streams"])[0]["group_state"] == "Empty"
    assert s.gc.delete_groups(s.now, ["app"]) == [{"group_id": "app", "error_code": 0}]
    assert s.gc.list_groups(s.now, types_filter=["streams"]) == []


def test_the_last_member_leaving_settles_the_empty_target_at_the_new_epoch():
    """Kafka 4.4's streamsGroupFenceMember writes the target assignment metadata at the bumped epoch
    when the member is the last one (4.3 left it at the previous epoch)."""
    s = Streams()
    epoch = joined(s)["member_epoch"]
    s.hb("m1", -1)
    group = s.gc.group("app")
    assert group.group_epoch == epoch + 1
    assert group.assignment_epoch == group.group_epoch


def test_the_group_is_written_and_comes_back_from_its_records():
    s = Streams()
    log = s.gc.ctx.sink = Log()
    r1 = joined(s)
    r2 = s.hb("m2", 0, user_endpoint={"host": "h", "port": 9}, client_tags=[{"key": "az", "value": "a"}])
    r1 = s.hb("m1", r1["member_epoch"], owned={0, 1, 2, 3})     # m1 is asked to revoke two tasks
    before = s.gc.group("app")
    loaded = GroupCoordinator(now_ms=5, sink=log)
    loaded.load(list(log.records), 5)
    group = loaded.group("app")
    assert (group.group_epoch, group.assignment_epoch, group.topology) == \
        (before.group_epoch, before.assignment_epoch, before.topology)
    assert group.members == before.members and group.target == before.target
    assert group.state.value == "Reconciling"
    s.gc = loaded
    assert s.hb("m1", r1["member_epoch"], owned=s.active(r1))["error_code"] == 0
    r2 = s.hb("m2", r2["member_epoch"], owned=set())
    assert len(s.active(r2)) == 2
    s.hb("m1", -1)
    s.hb("m2", -1)
    assert s.gc.delete_groups(s.now, ["app"])[0]["error_code"] == 0
    again = GroupCoordinator()
    again.load(log.records, 0)
    assert again.group("app") is None


def test_a_heartbeat_whose_records_cannot_be_written_changes_nothing():
    s = Streams()
    log = s.gc.ctx.sink = Log()
    r1 = joined(s)
    log.fail = AppendError(E.NOT_ENOUGH_REPLICAS)
    failed = s.hb("m2", 0)
    assert failed["error_code"] == E.COORDINATOR_NOT_AVAILABLE
    group = s.gc.group("app")
    assert list(group.members) == ["m1"] and group.group_epoch == r1["member_epoch"]
    log.fail = None
    assert s.hb("m2", 0)["error_code"] == 0


def test_a_refused_heartbeat_leaves_the_group_as_it_was():
    s = Streams()
    log = s.gc.ctx.sink = Log()
    r1 = joined(s)
    group = s.gc.group("app")
    before = (group.group_epoch, dict(group.members), dict(group.target), group.topology)
    written = len(log.records)
    other = {"epoch": 1, "subtopologies": [{"subtopology_id": "0", "source_topics": ["in", "app-log"]}]}
    refused = s.hb("m2", 0, topology=other)
    assert refused["error_message"] == "Topology updates are not supported yet."
    assert (group.group_epoch, group.members, group.target, group.topology) == before
    assert len(log.records) == written and r1["error_code"] == 0
    assert s.hb("m3", 0, topology=other, group_id="fresh")["error_code"] == 0
    assert s.hb("m3", 0, topology=TOPOLOGY, group_id="new", active_tasks=[{"subtopology_id": "0", "partitions": [0]}],
                standby_tasks=[], warmup_tasks=[])["error_code"] == E.INVALID_REQUEST
    assert s.gc.group("new") is None


def test_a_snapshot_restore_removes_every_member_as_one_write():
    s = Streams()
    log = s.gc.ctx.sink = Log()
    joined(s)
    s.hb("m2", 0)
    written = len(log.records)
    s.gc.remove_streams_members(s.now, "app")
    group = s.gc.group("app")
    assert group.members == {} and group.state.value == "Empty"
    assert len(log.records) > written
    again = GroupCoordinator()
    again.load(log.records, 0)
    assert again.group("app").members == {}


def test_offsets_of_a_topic_the_group_reads_are_not_deleted_while_it_has_members():
    s = Streams()
    epoch = joined(s)["member_epoch"]
    commit(s, "m1", epoch)
    deleted = s.gc.delete_offsets(s.now, "app", [("in", [0])])
    assert deleted["topics"][0]["partitions"][0]["error_code"] == E.GROUP_SUBSCRIBED_TO_TOPIC
    s.hb("m1", -1)
    deleted = s.gc.delete_offsets(s.now, "app", [("in", [0])])
    assert deleted["error_code"] == 0 and deleted["topics"][0]["partitions"][0]["error_code"] == 0


def txn_commit(s, member, epoch, partition):
    from kafkaemu.core.offsets.requests import TxnOffsetCommit
    req = TxnOffsetCommit("tx", "app", 7, 0, [("in", [CommitPartition(partition, 5)])], generation_id=epoch,
                          member_id=member)
    return s.gc.commit_transactional_offsets(s.now, req)["topics"][0]["partitions"][0]["error_code"]


def test_a_commit_at_an_older_epoch_is_checked_task_by_task_against_assignment_epochs():
    """StreamsGroup.validateOffsetCommit with createAssignmentEpochValidator (Kafka 4.2+, KAFKA-19779)."""
    s = Streams()
    s.gc.ctx.sink = Log()
    first = joined(s)["member_epoch"]
    r2 = s.hb("m2", 0)
    second = r2["member_epoch"]
    r1 = s.hb("m1", first, owned={0, 1, 2, 3})           # asked to revoke two tasks, still at its first epoch
    kept = s.active(r1)
    r1 = s.hb("m1", first, owned=kept)                   # revoked: moves to the second epoch, keeping two
    assert r1["member_epoch"] == second and len(kept) == 2
    revoked = ({0, 1, 2, 3} - kept).pop()
    one_kept = min(kept)

    def at(member, epoch, partition, topic="in"):
        req = OffsetCommit("app", [(topic, [CommitPartition(partition, 5)])], generation_id=epoch,
                           member_id=member, api_version=9)
        return s.gc.commit_offsets(s.now, req)["topics"][0]["partitions"][0]["error_code"]

    assert at("m1", first, one_kept) == 0                # held since the first epoch
    assert at("m1", first, revoked) == E.STALE_MEMBER_EPOCH  # no longer held
    assert at("m1", second + 1, one_kept) == E.STALE_MEMBER_EPOCH  # newer than the member's
    assert at("m1", first, one_kept, topic="app-log") == E.STALE_MEMBER_EPOCH  # not a source topic
    assert at("m1", second, revoked) == 0                # the member's own epoch commits anything
    r2 = s.hb("m2", second, owned=set())
    assert s.active(r2) == {revoked, ({0, 1, 2, 3} - kept - {revoked}).pop()}
    assert at("m2", first, revoked) == E.STALE_MEMBER_EPOCH  # given at the second epoch
    assert txn_commit(s, "m1", first, one_kept) == 0
    assert txn_commit(s, "m1", first, revoked) == E.ILLEGAL_GENERATION
    member = s.gc.group("app").members["m1"]
    assert {p: e for _, p, e in member.active_epochs} == {p: first for p in kept}
    # The validator throws for the whole request (OffsetMetadataManager.commitOffset): a partition
    # it refuses fails every other one, and nothing is written; too large metadata is per partition.
    written = len(s.gc.ctx.sink.records)
    from kafkaemu.core.offsets.requests import TxnOffsetCommit
    parts = [CommitPartition(one_kept, 9), CommitPartition(revoked, 9, committed_metadata="x" * 5000)]
    mixed = OffsetCommit("app", [("in", parts), ("in", [CommitPartition(revoked, 9)])], generation_id=first,
                         member_id="m1", api_version=9)
    assert [[p["error_code"] for p in t["partitions"]] for t in s.gc.commit_offsets(s.now, mixed)["topics"]] == \
        [[E.STALE_MEMBER_EPOCH] * 2, [E.STALE_MEMBER_EPOCH]]
    assert len(s.gc.ctx.sink.records) == written
    alone = OffsetCommit("app", [("in", parts)], generation_id=first, member_id="m1", api_version=9)
    assert [p["error_code"] for p in s.gc.commit_offsets(s.now, alone)["topics"][0]["partitions"]] == \
        [0, E.OFFSET_METADATA_TOO_LARGE]
    txn = TxnOffsetCommit("tx", "app", 7, 0, [("in", [CommitPartition(one_kept, 9), CommitPartition(revoked, 9)])],
                          generation_id=first, member_id="m1")
    assert [p["error_code"] for p in s.gc.commit_transactional_offsets(s.now, txn)["topics"][0]["partitions"]] == \
        [E.ILLEGAL_GENERATION] * 2


def test_assignment_epochs_are_written_as_kafka_tags_them_and_read_back():
    from kafkaemu.core.streams import records
    s = Streams()
    log = s.gc.ctx.sink = Log()
    first = joined(s)["member_epoch"]
    s.hb("m2", 0)
    s.hb("m1", first, owned={0, 1, 2, 3})                # two tasks pending revocation, at the first epoch
    key = records.Key(records.CURRENT_MEMBER, "app", "m1")
    value = [v for k, v in log.records if k == records.encode_key(key)][-1]
    decoded = records.decode_value(key, value)
    assert [(t.partitions, t.assignment_epochs) for t in decoded.active_tasks] == [([0, 1], [first, first])]
    assert [(t.partitions, t.assignment_epochs) for t in decoded.active_tasks_pending_revocation] == \
        [([2, 3], [first, first])]
    # TaskIds: subtopology "0", partitions [0, 1], then one tagged field, tag 0: AssignmentEpochs [first, first]
    epochs = bytes([0, 9, 3]) + first.to_bytes(4, "big") * 2
    assert b"\x02" + b"0" + b"\x03" + (0).to_bytes(4, "big") + (1).to_bytes(4, "big") + b"\x01" + epochs in value
    loaded = GroupCoordinator(now_ms=5, sink=log)
    loaded.load(list(log.records), 5)
    assert loaded.group("app").members["m1"].active_epochs == s.gc.group("app").members["m1"].active_epochs


def test_a_record_without_assignment_epochs_gives_its_tasks_the_member_epoch():
    from kafkaemu.core.streams import records
    s = Streams()
    log = s.gc.ctx.sink = Log()
    joined(s)
    key = records.Key(records.CURRENT_MEMBER, "app", "m1")
    older = catalog().data("StreamsGroupCurrentMemberAssignmentValue", 0).encode({
        "member_epoch": 4, "previous_member_epoch": 3, "state": 1, "standby_tasks": [], "warmup_tasks": [],
        "active_tasks": [{"subtopology_id": "0", "partitions": [0, 1, 2, 3]}], "active_tasks_pending_revocation": [],
        "standby_tasks_pending_revocation": [], "warmup_tasks_pending_revocation": []})
    loaded = GroupCoordinator(now_ms=5, sink=log)
    loaded.load(list(log.records) + [(records.encode_key(key), b"\x00\x00" + older)], 5)
    assert loaded.group("app").members["m1"].active_epochs == tuple(("0", p, 4) for p in range(4))


def test_group_streams_max_size_from_the_broker_setting_refuses_one_member_more():
    from kafkaemu.config import BrokerConfig
    from kafkaemu.core.coordinator import CoordinatorSettings
    s = Streams()
    s.gc = GroupCoordinator(CoordinatorSettings(streams=BrokerConfig(extra={"group.streams.max.size": 1}).streams))
    joined(s)
    full = s.hb("m2", 0)
    assert (full["error_code"], full["error_message"]) == \
        (E.GROUP_MAX_SIZE_REACHED, "The streams group has reached its maximum capacity of 1 members.")


def test_the_group_metadata_record_carries_assignment_configs_as_kafkas_tagged_field_1():
    """StreamsGroupMetadataValue: Epoch, MetadataHash, then tagged ValidatedTopologyEpoch (0) and
    AssignmentConfigs (1, KAFKA-19765)."""
    from kafkaemu.core.streams import records
    value = records.encode_value(records.Key(records.GROUP_METADATA, "app"), (3, 7, 1, (("num.standby.replicas", "0"),)))
    config = b"\x02" + b"\x15num.standby.replicas" + b"\x020" + b"\x00"
    assert value == b"\x00\x00" + (3).to_bytes(4, "big") + (7).to_bytes(8, "big") + b"\x02" + \
        b"\x00\x04" + (1).to_bytes(4, "big") + b"\x01" + bytes([len(config)]) + config + b""
    decoded = records.decode_value(records.Key(records.GROUP_METADATA, "app"), value)
    assert [(c.key, c.value) for c in decoded.assignment_configs] == [("num.standby.replicas", "0")]


def test_rack_aware_assignment_tags_join_the_assignment_configs_and_a_member_without_them_is_told():
    """Kafka 4.4: streams.rack.aware.assignment.tags is an assignment config (its change rebalances),
    and from v1 a member lacking one of the tags gets the status MISSING_CLIENT_TAGS (6)."""
    from kafkaemu.core.streams import records
    s = Streams()
    s.gc.ctx.sink = log = Log()
    r = joined(s)
    epoch = r["member_epoch"]
    s.gc.group_configs.set("app", "streams.rack.aware.assignment.tags", "az,rack")
    r = s.hb("m1", epoch, owned=s.active(r))
    assert r["member_epoch"] == epoch + 1
    assert r["status"] == [{"status_code": 6, "status_detail":
                            "Missing required client tags for rack-aware standby assignment: [az, rack]. "
                            "Configure them via 'client.tag.<tagKey>' in your Streams config."}]
    key = records.Key(records.GROUP_METADATA, "app")
    value = records.decode_value(key, [v for k, v in log.records if k == records.encode_key(key)][-1])
    assert [(c.key, c.value) for c in value.assignment_configs] == [("num.standby.replicas", "0"),
                                                                    ("rack.aware.assignment.tags", "az,rack")]
    r = s.hb("m2", 0, client_tags=[{"key": "rack", "value": "r1"}])
    assert [x["status_detail"].split(":")[1].split(".")[0] for x in r["status"]] == [" [az]"]
    v0 = s.gc.streams_group_heartbeat(s.now, request("m2", r["member_epoch"], set(), api_version=0), TOPICS.get)[0]
    assert v0["status"] == []   # v0 members are not told


def test_a_member_leaving_may_ask_for_the_shutdown_and_the_first_to_ask_is_named():
    """streamsGroupLeave sets the shutdown request too; setShutdownRequestMemberId keeps the first."""
    s = Streams()
    r1 = joined(s)
    s.hb("m2", 0)
    s.hb("m3", 0)
    assert s.hb("m2", -1, shutdown_application=True)["error_code"] == 0
    s.hb("m3", -1, shutdown_application=True)
    r1 = s.hb("m1", r1["member_epoch"], owned=s.active(r1))
    assert [x["status_code"] for x in r1["status"]] == [4] and "member m2 " in r1["status"][0]["status_detail"]
