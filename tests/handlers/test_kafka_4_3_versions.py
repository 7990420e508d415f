"""What the versions Kafka 4.1-4.3 added change, handler by handler: topics by id in Produce v13 and
OffsetCommit/OffsetFetch v10 (UNKNOWN_TOPIC_ID for an id the broker does not know), ListOffsets v11's
earliest-pending-upload and the version each timestamp sentinel needs, Metadata v13's top-level
error, DescribeGroups v6's GROUP_ID_NOT_FOUND, DescribeCluster v2's fenced brokers, ListTransactions
v2's id pattern, ConsumerGroupDescribe v1's member type, WriteTxnMarkers v2."""
import pytest

from kafkaemu.protocol.api_keys import ApiKey
from kafkaemu.protocol.errors import ErrorCode as E
from kafkaemu.storage.record_batch import build_batch
from tests.conftest import call, new_broker

UNKNOWN_ID = bytes(range(1, 17))
ZERO_ID = bytes(16)


def produce(broker, version, topic, records, acks=-1):
    key = {"topic_id": topic} if isinstance(topic, bytes) else {"name": topic}
    body = {"transactional_id": None, "acks": acks, "timeout_ms": 1000,
            "topic_data": [dict(key, partition_data=[{"index": 0, "records": records}])]}
    return call(broker, ApiKey.PRODUCE, version, body)


def batch(*values):
    return build_batch([(None, v, [], 1000 + i) for i, v in enumerate(values)])


# ------------------------------------------------------------------ Produce v13
def test_produce_v13_names_topics_by_id(broker):
    topic = broker.topics.create("t", 1, {})
    resp = produce(broker, 13, topic.topic_id, batch(b"a", b"b"))
    (t,) = resp.responses
    assert t.topic_id == topic.topic_id
    assert (t.partition_responses[0].error_code, t.partition_responses[0].base_offset) == (E.NONE, 0)
    assert topic.partitions[0].high_watermark == 2
    # v12 is v11: by name
    assert produce(broker, 12, "t", batch(b"c")).responses[0].partition_responses[0].base_offset == 2


@pytest.mark.parametrize("topic_id", [UNKNOWN_ID, ZERO_ID])
def test_produce_v13_to_an_unknown_id_is_unknown_topic_id_and_creates_nothing(broker, topic_id):
    resp = produce(broker, 13, topic_id, batch(b"a"))
    (t,) = resp.responses
    assert t.topic_id == topic_id
    assert t.partition_responses[0].error_code == E.UNKNOWN_TOPIC_ID
    assert sorted(name for name in broker.store.topics if not name.startswith("__")) == []


@pytest.mark.broker(authorizer=True, super_users="User:admin")
def test_produce_v13_checks_the_id_before_authorization(broker):
    broker.topics.create("t", 1, {})
    assert produce(broker, 13, UNKNOWN_ID, batch(b"a")).responses[0].partition_responses[0].error_code == \
        E.UNKNOWN_TOPIC_ID
    known = broker.store.get("t").topic_id
    assert produce(broker, 13, known, batch(b"a")).responses[0].partition_responses[0].error_code == \
        E.TOPIC_AUTHORIZATION_FAILED


# ------------------------------------------------------------------ ListOffsets v11
def list_offsets(broker, version, *partitions, name="t"):
    body = {"replica_id": -1, "isolation_level": 0, "timeout_ms": 1000, "topics": [{"name": name, "partitions": [
        {"partition_index": p, "current_leader_epoch": -1, "timestamp": ts, "max_num_offsets": 1}
        for p, ts in partitions]}]}
    return call(broker, ApiKey.LIST_OFFSETS, version, body).topics[0].partitions


def test_list_offsets_v11_earliest_pending_upload_without_remote_storage(broker):
    broker.topics.create("t", 1, {}).partitions[0].append(batch(b"a"), 0)
    (p,) = list_offsets(broker, 11, (0, -6))
    assert (p.error_code, p.timestamp, p.offset, p.leader_epoch) == (E.NONE, -1, -1, -1)


@pytest.mark.parametrize(("timestamp", "since"), [(-3, 7), (-4, 8), (-5, 9), (-6, 11)])
def test_a_timestamp_sentinel_needs_its_version(broker, timestamp, since):
    broker.topics.create("t", 1, {})
    assert list_offsets(broker, since - 1, (0, timestamp))[0].error_code == E.UNSUPPORTED_VERSION
    assert list_offsets(broker, since, (0, timestamp))[0].error_code == E.NONE


def test_an_unknown_negative_timestamp_and_a_duplicate_partition(broker):
    broker.topics.create("t", 2, {})
    assert list_offsets(broker, 11, (0, -7))[0].error_code == E.UNSUPPORTED_VERSION
    codes = [p.error_code for p in list_offsets(broker, 11, (0, -1), (0, -2), (1, -1))]
    assert codes == [E.INVALID_REQUEST, E.INVALID_REQUEST, E.NONE]


# ------------------------------------------------------------------ Metadata v13
def test_metadata_v13_answers_a_top_level_error_code(broker):
    broker.topics.create("t", 1, {})
    resp = call(broker, ApiKey.METADATA, 13, {"topics": None, "allow_auto_topic_creation": False,
                                               "include_topic_authorized_operations": False})
    assert resp.error_code == E.NONE
    assert "t" in {t.name for t in resp.topics}


# ------------------------------------------------------------------ OffsetCommit / OffsetFetch v10
def commit_v10(broker, *topics):
    body = {"group_id": "g", "generation_id_or_member_epoch": -1, "member_id": "", "group_instance_id": None,
            "retention_time_ms": -1, "topics": [{"topic_id": tid, "partitions": [
                {"partition_index": p, "committed_offset": offset, "committed_leader_epoch": -1,
                 "committed_metadata": "m"} for p, offset in parts]} for tid, parts in topics]}
    return call(broker, ApiKey.OFFSET_COMMIT, 10, body)


def fetch_v10(broker, topics):
    body = {"groups": [{"group_id": "g", "member_id": None, "member_epoch": -1, "topics": None if topics is None else [
        {"topic_id": tid, "partition_indexes": parts} for tid, parts in topics]}], "require_stable": False}
    return call(broker, ApiKey.OFFSET_FETCH, 10, body).groups[0]


def test_offset_commit_and_fetch_v10_by_topic_id(broker):
    t = broker.topics.create("t", 2, {}).topic_id
    resp = commit_v10(broker, (t, [(0, 5), (7, 1)]), (UNKNOWN_ID, [(0, 1)]), (ZERO_ID, [(0, 1)]))
    got = {(r.topic_id, p.partition_index): p.error_code for r in resp.topics for p in r.partitions}
    assert got == {(t, 0): E.NONE, (t, 7): E.UNKNOWN_TOPIC_OR_PARTITION, (UNKNOWN_ID, 0): E.UNKNOWN_TOPIC_ID,
                   (ZERO_ID, 0): E.UNKNOWN_TOPIC_ID}
    # committed by name: older versions read the same offset
    old = call(broker, ApiKey.OFFSET_FETCH, 9, {"groups": [{"group_id": "g", "member_id": None, "member_epoch": -1,
                                                            "topics": [{"name": "t", "partition_indexes": [0]}]}],
                                                 "require_stable": False})
    assert old.groups[0].topics[0].partitions[0].committed_offset == 5
    group = fetch_v10(broker, [(t, [0, 1]), (UNKNOWN_ID, [0])])
    assert group.error_code == E.NONE
    got = {(r.topic_id, p.partition_index): (p.committed_offset, p.error_code) for r in group.topics
           for p in r.partitions}
    assert got == {(t, 0): (5, E.NONE), (t, 1): (-1, E.NONE), (UNKNOWN_ID, 0): (-1, E.UNKNOWN_TOPIC_ID)}
    everything = fetch_v10(broker, None)
    assert [(r.topic_id, [p.committed_offset for p in r.partitions]) for r in everything.topics] == [(t, [5])]


# ------------------------------------------------------------------ DescribeGroups v6
def test_describe_groups_v6_answers_group_id_not_found(broker):
    call(broker, ApiKey.CONSUMER_GROUP_HEARTBEAT, 0, {
        "group_id": "kip848", "member_id": "m", "member_epoch": 0, "instance_id": None, "rack_id": None,
        "rebalance_timeout_ms": 30000, "subscribed_topic_names": ["t"], "server_assignor": None,
        "topic_partitions": []})
    resp = call(broker, ApiKey.DESCRIBE_GROUPS, 6, {"groups": ["nope", "kip848"], "include_authorized_operations": False})
    nope, kip848 = resp.groups
    assert (nope.error_code, nope.error_message, nope.group_state) == (E.GROUP_ID_NOT_FOUND, "Group nope not found.",
                                                                       "Dead")
    assert (kip848.error_code, kip848.error_message) == (E.GROUP_ID_NOT_FOUND,
                                                         "Group kip848 is not a classic group.")
    assert call(broker, ApiKey.DESCRIBE_GROUPS, 5, {"groups": ["nope"],
                                                    "include_authorized_operations": False}).groups[0].error_code == 0


def test_describe_groups_sets_authorized_operations_only_without_error(broker):
    """KafkaApis.handleDescribeGroupsRequest: v6's GROUP_ID_NOT_FOUND leaves them unset (INT32_MIN);
    v5 describes the same unknown group as Dead with no error, so with its operations."""
    v6 = call(broker, ApiKey.DESCRIBE_GROUPS, 6, {"groups": ["nope"], "include_authorized_operations": True})
    assert (v6.groups[0].error_code, v6.groups[0].authorized_operations) == (E.GROUP_ID_NOT_FOUND, -2**31)
    v5 = call(broker, ApiKey.DESCRIBE_GROUPS, 5, {"groups": ["nope"], "include_authorized_operations": True})
    assert v5.groups[0].error_code == 0 and v5.groups[0].authorized_operations != -2**31


# ------------------------------------------------------------------ DescribeCluster v2
def test_describe_cluster_v2_lists_fenced_brokers_when_asked():
    broker = new_broker(nodes=3)
    broker.placement.stopped_nodes.add(1)
    body = {"include_cluster_authorized_operations": False, "endpoint_type": 1, "include_fenced_brokers": True}
    resp = call(broker, ApiKey.DESCRIBE_CLUSTER, 2, body)
    assert [(b.broker_id, b.is_fenced) for b in resp.brokers] == [(0, False), (1, True), (2, False)]
    resp = call(broker, ApiKey.DESCRIBE_CLUSTER, 2, dict(body, include_fenced_brokers=False))
    assert [(b.broker_id, b.is_fenced) for b in resp.brokers] == [(0, False), (2, False)]


# ------------------------------------------------------------------ ListTransactions v2
def test_list_transactions_v2_filters_by_a_whole_id_pattern(broker):
    for tid in ("orders-1", "orders-2", "payments-1"):
        resp = call(broker, ApiKey.INIT_PRODUCER_ID, 5, {"transactional_id": tid, "transaction_timeout_ms": 60000,
                                                         "producer_id": -1, "producer_epoch": -1})
        assert resp.error_code == E.NONE

    def listed(pattern, version=2):
        resp = call(broker, ApiKey.LIST_TRANSACTIONS, version, {"state_filters": [], "producer_id_filters": [],
                                                                "duration_filter": -1,
                                                                "transactional_id_pattern": pattern})
        return resp.error_code, sorted(s.transactional_id for s in resp.transaction_states)

    assert listed("orders-.*") == (E.NONE, ["orders-1", "orders-2"])
    assert listed("orders") == (E.NONE, [])   # the whole id must match
    assert listed(None) == listed("") == (E.NONE, ["orders-1", "orders-2", "payments-1"])
    assert listed("orders-[") == (E.INVALID_REGULAR_EXPRESSION, [])
    assert listed("orders-[", version=1) == (E.NONE, ["orders-1", "orders-2", "payments-1"])   # v1 has no pattern


# ------------------------------------------------------------------ ConsumerGroupDescribe v1
def test_consumer_group_describe_v1_names_the_member_type(broker):
    broker.topics.create("t", 1, {})
    call(broker, ApiKey.CONSUMER_GROUP_HEARTBEAT, 1, {
        "group_id": "g", "member_id": "m", "member_epoch": 0, "instance_id": None, "rack_id": None,
        "rebalance_timeout_ms": 30000, "subscribed_topic_names": ["t"], "subscribed_topic_regex": None,
        "server_assignor": None, "topic_partitions": []})
    resp = call(broker, ApiKey.CONSUMER_GROUP_DESCRIBE, 1, {"group_ids": ["g"], "include_authorized_operations": False})
    assert [m.member_type for m in resp.groups[0].members] == [1]


# ------------------------------------------------------------------ WriteTxnMarkers v2
def test_write_txn_markers_v2_writes_an_abort_marker(broker):
    topic = broker.topics.create("t", 1, {})
    resp = call(broker, ApiKey.WRITE_TXN_MARKERS, 2, {"markers": [{
        "producer_id": 7, "producer_epoch": 0, "transaction_result": False, "coordinator_epoch": 0,
        "transaction_version": 2, "topics": [{"name": "t", "partition_indexes": [0]}]}]})
    assert resp.markers[0].topics[0].partitions[0].error_code == E.NONE
    assert topic.partitions[0].high_watermark == 1   # the control batch
