"""Group API handlers through the codecs at every version: old versions normalised at the edge,
responses that encode in every version, and the version-specific answers Kafka gives."""
from __future__ import annotations

import pytest

from kafkaemu.protocol.api_keys import ApiKey
from kafkaemu.protocol.errors import ErrorCode as E
from tests.conftest import T0, call, new_broker

# no initial rebalance delay: on this manual clock a new group's first join completes at once
pytestmark = pytest.mark.broker(topics={"t": 2}, group_initial_rebalance_delay_ms=0)


def join_body(member_id="", protocols=(("range", b"meta"),), instance=None):
    return {"group_id": "g", "session_timeout_ms": 10000, "rebalance_timeout_ms": 20000, "member_id": member_id,
            "group_instance_id": instance, "protocol_type": "consumer",
            "protocols": [{"name": n, "metadata": m} for n, m in protocols], "reason": None}


def joined(broker, version=9):
    first = call(broker, ApiKey.JOIN_GROUP, version, join_body())
    if first.error_code == E.MEMBER_ID_REQUIRED:
        first = call(broker, ApiKey.JOIN_GROUP, version, join_body(first.member_id))
    sync = call(broker, ApiKey.SYNC_GROUP, min(version, 5), {
        "group_id": "g", "generation_id": first.generation_id, "member_id": first.member_id, "group_instance_id": None,
        "protocol_type": "consumer", "protocol_name": "range",
        "assignments": [{"member_id": first.member_id, "assignment": b"A"}]})
    assert sync.error_code == 0 and sync.assignment == b"A"
    return first.member_id, first.generation_id


@pytest.mark.parametrize("version", range(0, 10))
def test_join_sync_heartbeat_leave_at_every_join_version(broker, version):
    first = call(broker, ApiKey.JOIN_GROUP, version, join_body())
    if version >= 4:
        assert first.error_code == E.MEMBER_ID_REQUIRED and first.member_id.startswith("client-")
        first = call(broker, ApiKey.JOIN_GROUP, version, join_body(first.member_id))
    assert first.error_code == 0 and first.generation_id == 1 and first.protocol_name == "range"
    assert first.leader == first.member_id and [m.metadata for m in first.members] == [b"meta"]
    group = broker.coordinator.classic.groups["g"]
    assert group.members[first.member_id].rebalance_timeout_ms == (10000 if version == 0 else 20000)
    for hv in range(0, 5):
        hb = call(broker, ApiKey.HEARTBEAT, hv, {"group_id": "g", "generation_id": 1, "member_id": first.member_id,
                                                 "group_instance_id": None})
        assert hb.error_code == 0


@pytest.mark.parametrize("version", range(0, 6))
def test_leave_versions(broker, version):
    mid, _ = joined(broker)
    if version < 3:
        resp = call(broker, ApiKey.LEAVE_GROUP, version, {"group_id": "g", "member_id": "ghost"})
        assert resp.error_code == E.UNKNOWN_MEMBER_ID                    # the member's error, top level
        resp = call(broker, ApiKey.LEAVE_GROUP, version, {"group_id": "g", "member_id": mid})
        assert resp.error_code == 0
    else:
        resp = call(broker, ApiKey.LEAVE_GROUP, version, {"group_id": "g", "members": [
            {"member_id": mid, "group_instance_id": None, "reason": "bye"},
            {"member_id": "ghost", "group_instance_id": None, "reason": None}]})
        assert resp.error_code == 0 and [m.error_code for m in resp.members] == [0, E.UNKNOWN_MEMBER_ID]
    assert broker.coordinator.classic.groups["g"].state.value == "Empty"


@pytest.mark.parametrize("version", range(0, 7))
def test_find_coordinator_versions(broker, version):
    if version >= 4:
        resp = call(broker, ApiKey.FIND_COORDINATOR, version, {"key_type": 0, "coordinator_keys": ["a", "b"]})
        assert [(c.key, c.node_id, c.host, c.port, c.error_code) for c in resp.coordinators] == [
            ("a", 0, "127.0.0.1", 9092, 0), ("b", 0, "127.0.0.1", 9092, 0)]
        bad = call(broker, ApiKey.FIND_COORDINATOR, version, {"key_type": 2, "coordinator_keys": ["a"]})
        assert bad.coordinators[0].error_code == E.INVALID_REQUEST
    else:
        resp = call(broker, ApiKey.FIND_COORDINATOR, version, {"key": "a", "key_type": 0})
        assert (resp.error_code, resp.node_id, resp.host, resp.port) == (0, 0, "127.0.0.1", 9092)
        if version >= 1:
            txn = call(broker, ApiKey.FIND_COORDINATOR, version, {"key": "txn-id", "key_type": 1})
            assert (txn.error_code, txn.node_id) == (0, 0)
    topic = broker.store.get("__consumer_offsets")
    assert topic is not None and topic.internal and len(topic.partitions) == 50


@pytest.mark.parametrize("version", range(2, 10))
def test_offset_commit_and_fetch_versions(broker, version):
    mid, gen = joined(broker)
    body = {"group_id": "g", "generation_id_or_member_epoch": gen, "member_id": mid, "group_instance_id": None,
            "retention_time_ms": -1, "topics": [{"name": "t", "partitions": [
                {"partition_index": 0, "committed_offset": 11, "committed_leader_epoch": 2, "committed_metadata": "m"},
                {"partition_index": 9, "committed_offset": 1, "committed_leader_epoch": -1,
                 "committed_metadata": None}]}]}
    resp = call(broker, ApiKey.OFFSET_COMMIT, version, body)
    codes = [p.error_code for p in resp.topics[0].partitions]
    assert codes == [E.UNKNOWN_TOPIC_OR_PARTITION, 0]   # KafkaApis answers unknown partitions first
    for fv in range(1, 10):
        if fv >= 8:
            f = call(broker, ApiKey.OFFSET_FETCH, fv, {
                "groups": [{"group_id": "g", "member_id": None, "member_epoch": -1, "topics": None},
                           {"group_id": "other", "member_id": None, "member_epoch": -1,
                            "topics": [{"name": "t", "partition_indexes": [0]}]}],
                "require_stable": False})
            g, other = f.groups
            assert [(p.partition_index, p.committed_offset, p.metadata) for p in g.topics[0].partitions] == [(0, 11, "m")]
            assert other.topics[0].partitions[0].committed_offset == -1
        else:
            topics = None if fv >= 2 else [{"name": "t", "partition_indexes": [0, 1]}]
            f = call(broker, ApiKey.OFFSET_FETCH, fv, {"group_id": "g", "topics": topics, "require_stable": False})
            got = {p.partition_index: p.committed_offset for t in f.topics for p in t.partitions}
            assert got == ({0: 11} if topics is None else {0: 11, 1: -1})
            if fv >= 5:
                assert f.topics[0].partitions[0].committed_leader_epoch == (2 if version >= 6 else -1)


@pytest.mark.parametrize("version", range(0, 6))
def test_describe_groups_versions(broker, version):
    mid, _ = joined(broker)
    resp = call(broker, ApiKey.DESCRIBE_GROUPS, version,
                {"groups": ["g", "nope"], "include_authorized_operations": False})
    g, nope = resp.groups
    assert (g.group_state, g.protocol_type, g.protocol_data) == ("Stable", "consumer", "range")
    assert [(m.member_id, m.client_id, m.client_host, m.member_metadata, m.member_assignment) for m in g.members] == [
        (mid, "client", "/127.0.0.1", b"meta", b"A")]
    assert nope.group_state == "Dead" and nope.error_code == 0
    if version >= 3:
        assert g.authorized_operations == -2147483648
        asked = call(broker, ApiKey.DESCRIBE_GROUPS, version, {"groups": ["g"], "include_authorized_operations": True})
        assert asked.groups[0].authorized_operations == 3400


@pytest.mark.parametrize("version", range(0, 6))
def test_list_groups_versions(broker, version):
    joined(broker)
    resp = call(broker, ApiKey.LIST_GROUPS, version,
                {"states_filter": ["Empty"] if version >= 4 else [], "types_filter": []})
    names = [g.group_id for g in resp.groups]
    assert names == ([] if version >= 4 else ["g"])
    if version >= 5:
        resp = call(broker, ApiKey.LIST_GROUPS, version, {"states_filter": [], "types_filter": ["classic"]})
        assert [(g.group_id, g.group_state, g.group_type) for g in resp.groups] == [("g", "Stable", "classic")]


@pytest.mark.parametrize("version", range(0, 3))
def test_delete_groups_and_offset_delete(broker, version):
    mid, gen = joined(broker)
    resp = call(broker, ApiKey.DELETE_GROUPS, version, {"groups_names": ["g", "nope"]})
    assert [(r.group_id, r.error_code) for r in resp.results] == [("g", E.NON_EMPTY_GROUP), ("nope", E.GROUP_ID_NOT_FOUND)]
    call(broker, ApiKey.LEAVE_GROUP, 3,
         {"group_id": "g", "members": [{"member_id": mid, "group_instance_id": None, "reason": None}]})
    call(broker, ApiKey.OFFSET_COMMIT, 8, {"group_id": "g", "generation_id_or_member_epoch": -1, "member_id": "",
                                           "group_instance_id": None, "topics": [{"name": "t", "partitions": [
                                 {"partition_index": 1, "committed_offset": 5, "committed_leader_epoch": -1,
                                  "committed_metadata": ""}]}]})
    od = call(broker, ApiKey.OFFSET_DELETE, 0, {"group_id": "g", "topics": [{"name": "t", "partitions": [
        {"partition_index": 1}]}, {"name": "missing", "partitions": [{"partition_index": 0}]}]})
    assert od.error_code == 0
    assert [(t.name, [p.error_code for p in t.partitions]) for t in od.topics] == [
        ("t", [0]), ("missing", [E.UNKNOWN_TOPIC_OR_PARTITION])]
    resp = call(broker, ApiKey.DELETE_GROUPS, version, {"groups_names": ["g"]})
    assert resp.results[0].error_code == 0 and "g" not in broker.coordinator.classic.groups


def test_join_v1_client_gets_member_id_at_once_and_offsets_topic_receives_records(broker):
    r = call(broker, ApiKey.JOIN_GROUP, 1, join_body(), client_id="sarama")
    assert r.error_code == 0 and r.member_id.startswith("sarama-")
    topic = broker.store.get("__consumer_offsets")
    from kafkaemu.core.placement import partition_for
    assert topic.partitions[partition_for("g", 50)].high_watermark >= 1


def test_several_nodes_spread_coordinators_and_refuse_groups_they_do_not_coordinate():
    broker = new_broker(nodes=3)
    resp = call(broker, ApiKey.FIND_COORDINATOR, 4,
                {"key_type": 0, "coordinator_keys": [f"group-{i}" for i in range(12)]})
    owners = {c.key: c.node_id for c in resp.coordinators}
    assert set(owners.values()) == {0, 1, 2}
    from kafkaemu.core.placement import partition_for
    topic = broker.store.get("__consumer_offsets")
    for key, node in owners.items():
        assert node == broker.placement.partition_leader(topic.partitions[partition_for(key, 50)])
    key, owner = "group-0", owners["group-0"]
    other = (owner + 1) % 3
    body = dict(join_body(), group_id=key)
    refused = call(broker, ApiKey.JOIN_GROUP, 9, body, node_id=other)
    assert refused.error_code == E.NOT_COORDINATOR
    first = call(broker, ApiKey.JOIN_GROUP, 9, body, node_id=owner)
    assert first.error_code == E.MEMBER_ID_REQUIRED
    hb = call(broker, ApiKey.HEARTBEAT, 4, {"group_id": key, "generation_id": 1, "member_id": "x",
                                            "group_instance_id": None}, node_id=other)
    assert hb.error_code == E.NOT_COORDINATOR
    listed_owner = call(broker, ApiKey.LIST_GROUPS, 4, {"states_filter": [], "types_filter": []}, node_id=owner)
    listed_other = call(broker, ApiKey.LIST_GROUPS, 4, {"states_filter": [], "types_filter": []}, node_id=other)
    assert key in [g.group_id for g in listed_owner.groups] and key not in [g.group_id for g in listed_other.groups]


@pytest.mark.broker(T0, topics={"t": 1})
def test_offset_commit_is_stamped_with_the_broker_time_and_v2_retention_sets_expiry(broker):
    part = {"partition_index": 0, "committed_offset": 3, "committed_leader_epoch": -1, "committed_metadata": ""}
    call(broker, ApiKey.OFFSET_COMMIT, 2, {"group_id": "s2", "generation_id_or_member_epoch": -1, "member_id": "",
                                           "retention_time_ms": 5000, "topics": [{"name": "t", "partitions": [part]}]})
    stored = broker.coordinator.offsets.store.get("s2", "t", 0)
    assert stored.commit_timestamp_ms == T0 and stored.expire_timestamp_ms == T0 + 5000


def test_the_empty_group_id_is_invalid_before_any_not_coordinator():
    """Kafka's GroupCoordinatorService refuses "" before routing to a coordinator."""
    broker = new_broker(nodes=3)
    other = next(n for n in broker.placement.node_ids if n != broker.placement.group_coordinator(""))
    for node in (broker.placement.group_coordinator(""), other):
        j = call(broker, ApiKey.JOIN_GROUP, 5, dict(join_body(), group_id=""), node_id=node)
        h = call(broker, ApiKey.HEARTBEAT, 4, {"group_id": "", "generation_id": 1, "member_id": "m",
                                               "group_instance_id": None}, node_id=node)
        s = call(broker, ApiKey.SYNC_GROUP, 5, {"group_id": "", "generation_id": 1, "member_id": "m",
                                                "group_instance_id": None, "protocol_type": None, "protocol_name": None,
                                                "assignments": []}, node_id=node)
        lv = call(broker, ApiKey.LEAVE_GROUP, 3,
                  {"group_id": "", "members": [{"member_id": "m", "group_instance_id": None}]}, node_id=node)
        od = call(broker, ApiKey.OFFSET_DELETE, 0, {"group_id": "", "topics": []}, node_id=node)
        assert {j.error_code, h.error_code, s.error_code, lv.error_code, od.error_code} == {E.INVALID_GROUP_ID}
