"""The ACL APIs and per-API authorization through the sans-IO connection, with requests encoded as
clients send them: Kafka's error per resource, its validation errors, a clean close for a request
Kafka cannot parse."""
from __future__ import annotations

import pytest

from kafkaemu.auth.acl import Acl, AclOperation as Op, AclPermissionType as Perm, PatternType as PT, ResourceType as RT
from kafkaemu.broker import Broker
from kafkaemu.config import BrokerConfig
from kafkaemu.handlers import REGISTRY
from kafkaemu.protocol import envelope
from kafkaemu.protocol.errors import ErrorCode as E
from kafkaemu.storage.record_batch import build_batch
from kafkaemu.wire.connection import Connection, ProtocolViolation
from kafkaemu.wire.framing import FrameDecoder


def connect(principal="User:alice", **settings):
    broker = Broker(BrokerConfig(**settings), 0)
    conn = Connection(broker, REGISTRY, 1, "127.0.0.1", now_ms=0)
    conn.principal = principal
    return broker, conn


def call(conn, api_key, version, body):
    conn.receive(envelope.encode_request(api_key, version, body, 7, "t"), 1)
    (frame,) = FrameDecoder(1 << 30).feed(conn.take_output())
    return envelope.decode_response(api_key, version, frame)[1]


def allow(broker, rt, name, op, principal="User:alice", pattern=PT.LITERAL, perm=Perm.ALLOW):
    broker.authorizer.create([Acl(rt, name, pattern, principal, "*", op, perm)])


def creation(rt=RT.TOPIC, name="t", pt=PT.LITERAL, principal="User:bob", host="*", op=Op.READ, perm=Perm.ALLOW):
    return {"resource_type": rt, "resource_name": name, "resource_pattern_type": pt, "principal": principal,
            "host": host, "operation": op, "permission_type": perm}


ANY_FILTER = {"resource_type_filter": RT.ANY, "resource_name_filter": None, "pattern_type_filter": PT.ANY,
              "principal_filter": None, "host_filter": None, "operation": Op.ANY, "permission_type": Perm.ANY}


def test_acl_apis_without_an_authorizer_are_security_disabled():
    _, conn = connect()
    assert call(conn, 29, 3, ANY_FILTER).error_code == E.SECURITY_DISABLED
    assert [r.error_code for r in call(conn, 30, 3, {"creations": [creation()]}).results] == [E.SECURITY_DISABLED]
    assert [r.error_code for r in call(conn, 31, 3, {"filters": [ANY_FILTER]}).filter_results] == [E.SECURITY_DISABLED]


def test_create_validation_and_cluster_permission():
    broker, conn = connect(authorizer=True, super_users="User:admin", principal="User:admin")
    results = call(conn, 30, 3, {"creations": [
        creation(), creation(rt=RT.CLUSTER, name="x"), creation(name=""), creation(principal=""),
        creation(pt=PT.MATCH), creation(op=Op.ANY), creation(perm=Perm.ANY)]}).results
    assert [r.error_code for r in results] == [E.NONE] + [E.INVALID_REQUEST] * 6
    assert results[1].error_message == "The only valid name for the CLUSTER resource is kafka-cluster"
    described = call(conn, 29, 3, ANY_FILTER)
    assert [(r.resource_name, [a.principal for a in r.acls]) for r in described.resources] == [("t", ["User:bob"])]
    _, other = connect(authorizer=True, principal="User:bob")
    assert call(other, 29, 3, ANY_FILTER).error_code == E.CLUSTER_AUTHORIZATION_FAILED


def test_more_than_ten_thousand_new_acls_are_a_policy_violation():
    broker, conn = connect(authorizer=True, super_users="User:admin", principal="User:admin")
    results = call(conn, 30, 3, {"creations": [creation(name=f"t{i}") for i in range(10_001)]}).results
    assert {r.error_code for r in results} == {E.POLICY_VIOLATION} and len(broker.authorizer) == 0


@pytest.mark.parametrize("api_key,body", [
    (29, dict(ANY_FILTER, resource_type_filter=99)),
    (29, dict(ANY_FILTER, pattern_type_filter=0)),
    (30, {"creations": [creation(op=42)]}),
    (31, {"filters": [dict(ANY_FILTER, permission_type=0)]}),
])
def test_an_unknown_enum_closes_the_connection_as_kafka_does(api_key, body):
    _, conn = connect(authorizer=True)
    with pytest.raises(ProtocolViolation):
        conn.receive(envelope.encode_request(api_key, 3, body, 7, "t"), 1)


def test_produce_and_fetch_per_topic():
    broker, conn = connect(authorizer=True)
    for name in ("a", "b"):
        broker.topics.create(name, 1, {})
    allow(broker, RT.TOPIC, "a", Op.WRITE)
    allow(broker, RT.TOPIC, "a", Op.READ)
    batch = build_batch([(b"k", b"v", [], 1)])
    produced = call(conn, 0, 11, {"transactional_id": None, "acks": 1, "timeout_ms": 1000, "topic_data": [
        {"name": n, "partition_data": [{"index": 0, "records": batch}]} for n in ("a", "b", "missing")]})
    assert {r.name: r.partition_responses[0].error_code for r in produced.responses} == \
        {"a": E.NONE, "b": E.TOPIC_AUTHORIZATION_FAILED, "missing": E.TOPIC_AUTHORIZATION_FAILED}
    assert broker.store.get("missing") is None   # a denied name is not auto-created
    fetched = call(conn, 1, 12, {"replica_id": -1, "max_wait_ms": 0, "min_bytes": 1, "max_bytes": 1 << 20,
                                 "isolation_level": 0, "session_id": 0, "session_epoch": -1, "topics": [
                                     {"topic": n, "partitions": [{"partition": 0, "current_leader_epoch": -1,
                                                                  "fetch_offset": 0, "log_start_offset": -1,
                                                                  "partition_max_bytes": 1 << 20}]}
                                     for n in ("a", "b")], "forgotten_topics_data": [], "rack_id": ""})
    assert {r.topic: r.partitions[0].error_code for r in fetched.responses} == \
        {"a": E.NONE, "b": E.TOPIC_AUTHORIZATION_FAILED}


def test_metadata_hides_and_denies_topics_and_fills_authorized_operations():
    broker, conn = connect(authorizer=True)
    for name in ("seen", "hidden"):
        broker.topics.create(name, 1, {})
    allow(broker, RT.TOPIC, "seen", Op.READ)
    everything = call(conn, 3, 12, {"topics": None, "allow_auto_topic_creation": False,
                                    "include_topic_authorized_operations": True})
    assert [(t.name, t.topic_authorized_operations) for t in everything.topics] == \
        [("seen", (1 << Op.READ) | (1 << Op.DESCRIBE))]
    named = call(conn, 3, 12, {"topics": [{"name": n, "topic_id": bytes(16)} for n in ("hidden", "new")],
                               "allow_auto_topic_creation": True, "include_topic_authorized_operations": False})
    assert [(t.name, t.error_code) for t in named.topics] == [("hidden", E.TOPIC_AUTHORIZATION_FAILED),
                                                             ("new", E.TOPIC_AUTHORIZATION_FAILED)]
    assert broker.store.get("new") is None


def test_metadata_refuses_a_missing_topic_it_may_describe_but_not_create():
    """KafkaApis' unauthorizedForCreateTopics: auto-creation allowed, DESCRIBE but no CREATE."""
    broker, conn = connect(authorizer=True)
    allow(broker, RT.TOPIC, "auto-", Op.DESCRIBE, pattern=PT.PREFIXED)
    asked = {"topics": [{"name": "auto-x", "topic_id": bytes(16)}], "include_topic_authorized_operations": False}
    created = call(conn, 3, 12, dict(asked, allow_auto_topic_creation=True))
    assert [(t.name, t.error_code) for t in created.topics] == [("auto-x", E.TOPIC_AUTHORIZATION_FAILED)]
    plain = call(conn, 3, 12, dict(asked, allow_auto_topic_creation=False))
    assert [(t.name, t.error_code) for t in plain.topics] == [("auto-x", E.UNKNOWN_TOPIC_OR_PARTITION)]
    allow(broker, RT.TOPIC, "auto-", Op.CREATE, pattern=PT.PREFIXED)
    assert call(conn, 3, 12, dict(asked, allow_auto_topic_creation=True)).topics[0].error_code == E.NONE


def test_create_topics_without_describe_configs_hides_the_sizes_and_configs():
    broker, conn = connect(authorizer=True)
    allow(broker, RT.TOPIC, "new", Op.CREATE)
    created = call(conn, 19, 7, {"timeout_ms": 1000, "validate_only": False, "topics": [
        {"name": "new", "num_partitions": 2, "replication_factor": 1, "assignments": [], "configs": []}]}).topics[0]
    assert (created.error_code, created.num_partitions, created.replication_factor, created.configs,
            created.topic_config_error_code) == (E.NONE, -1, -1, [], E.TOPIC_AUTHORIZATION_FAILED)
    assert len(broker.store.get("new").partitions) == 2


def test_cluster_denials_answer_what_the_request_asked_for_as_kafkas_error_responses_do():
    _, conn = connect(authorizer=True)
    listed = call(conn, 46, 0, {"timeout_ms": 1000, "topics": [{"name": "t", "partition_indexes": [0, 1]}]})
    assert listed.error_code == E.CLUSTER_AUTHORIZATION_FAILED
    assert [(t.name, [(p.partition_index, p.replicas) for p in t.partitions]) for t in listed.topics] == \
        [("t", [(0, []), (1, [])])]
    scram = call(conn, 50, 0, {"users": [{"name": "a"}, {"name": "b"}]})
    assert [(r.user, r.error_code) for r in scram.results] == [("", E.CLUSTER_AUTHORIZATION_FAILED)] * 2


def test_a_group_denied_to_offset_fetch_is_answered_without_topics_from_v2():
    _, conn = connect(authorizer=True)
    asked = [{"name": "t", "partition_indexes": [0]}]
    multi = call(conn, 9, 9, {"groups": [{"group_id": "g", "member_id": None, "member_epoch": -1, "topics": asked}],
                              "require_stable": False}).groups[0]
    assert (multi.error_code, multi.topics) == (E.GROUP_AUTHORIZATION_FAILED, [])
    single = call(conn, 9, 7, {"group_id": "g", "topics": asked, "require_stable": False})
    assert (single.error_code, single.topics) == (E.GROUP_AUTHORIZATION_FAILED, [])
    first = call(conn, 9, 1, {"group_id": "g", "topics": asked})
    assert [p.error_code for t in first.topics for p in t.partitions] == [E.GROUP_AUTHORIZATION_FAILED]


def test_a_consumer_heartbeat_subscribing_to_a_hidden_topic_is_refused_without_a_message():
    broker, conn = connect(authorizer=True)
    allow(broker, RT.GROUP, "g", Op.READ)
    refused = call(conn, 68, 1, {"group_id": "g", "member_id": "m", "member_epoch": 0, "rebalance_timeout_ms": 1000,
                                 "subscribed_topic_names": ["hidden"], "server_assignor": None,
                                 "topic_partitions": []})
    assert (refused.error_code, refused.error_message) == (E.TOPIC_AUTHORIZATION_FAILED, None)


def test_denials_carry_kafkas_own_messages_where_kafka_sends_them():
    broker, conn = connect(authorizer=True)
    broker.topics.create("t", 1, {})
    described = call(conn, 32, 4, {"include_synonyms": False, "include_documentation": False, "resources": [
        {"resource_type": 2, "resource_name": "t", "configuration_keys": None},
        {"resource_type": 4, "resource_name": "0", "configuration_keys": None}]})
    assert [(r.error_code, r.error_message) for r in described.results] == [
        (E.TOPIC_AUTHORIZATION_FAILED, "Topic authorization failed."),
        (E.CLUSTER_AUTHORIZATION_FAILED, "Cluster authorization failed.")]
    altered = call(conn, 44, 1, {"validate_only": True, "resources": [
        {"resource_type": 2, "resource_name": "t", "configs": []},
        {"resource_type": 4, "resource_name": "", "configs": []}]})
    assert [(r.error_code, r.error_message) for r in altered.responses] == [
        (E.TOPIC_AUTHORIZATION_FAILED, "Topic authorization failed."), (E.CLUSTER_AUTHORIZATION_FAILED, None)]
    producers = call(conn, 61, 0, {"topics": [{"name": "t", "partition_indexes": [0]}]})
    assert producers.topics[0].partitions[0].error_message == "Topic authorization failed."
    grown = call(conn, 37, 3, {"timeout_ms": 1000, "validate_only": True, "topics": [
        {"name": "t", "count": 2, "assignments": None}]})
    assert [(r.error_code, r.error_message) for r in grown.results] == [(E.TOPIC_AUTHORIZATION_FAILED, None)]
    joined = call(conn, 11, 9, {"group_id": "g", "session_timeout_ms": 10000, "rebalance_timeout_ms": 10000,
                                "member_id": "", "group_instance_id": None, "protocol_type": "consumer",
                                "protocols": [{"name": "range", "metadata": b""}], "reason": None})
    assert (joined.error_code, joined.protocol_name) == (E.GROUP_AUTHORIZATION_FAILED, None)


def test_groups_and_transactions():
    broker, conn = connect(authorizer=True)
    joined = call(conn, 11, 9, {"group_id": "g", "session_timeout_ms": 10000, "rebalance_timeout_ms": 10000,
                                "member_id": "", "group_instance_id": None, "protocol_type": "consumer",
                                "protocols": [{"name": "range", "metadata": b""}], "reason": None})
    assert joined.error_code == E.GROUP_AUTHORIZATION_FAILED
    init = {"transactional_id": "tx", "transaction_timeout_ms": 60000, "producer_id": -1, "producer_epoch": -1,
            "enable2_pc": False, "keep_prepared_txn": False}
    assert call(conn, 22, 5, init).error_code == E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    idempotent = dict(init, transactional_id=None)
    assert call(conn, 22, 5, idempotent).error_code == E.CLUSTER_AUTHORIZATION_FAILED
    allow(broker, RT.TOPIC, "any", Op.WRITE)   # WRITE on some topic is enough for an idempotent producer
    assert call(conn, 22, 5, idempotent).error_code == E.NONE
    allow(broker, RT.TRANSACTIONAL_ID, "tx", Op.WRITE)
    assert call(conn, 22, 5, init).error_code == E.NONE
    denials = broker.authorizer.denials
    assert {"principal": "User:alice", "operation": "READ", "resource_type": "GROUP", "resource_name": "g"}.items() \
        <= denials[0].items()


@pytest.mark.parametrize("version", [12, 15])
def test_a_follower_fetch_needs_cluster_action_instead_of_topic_read(version):
    broker, conn = connect(authorizer=True)
    broker.topics.create("a", 1, {})
    allow(broker, RT.TOPIC, "a", Op.READ)
    body = {"max_wait_ms": 0, "min_bytes": 1, "max_bytes": 1 << 20, "isolation_level": 0, "session_id": 0,
            "session_epoch": -1, "forgotten_topics_data": [], "rack_id": "",
            "topics": [{"topic": "a", "topic_id": broker.store.get("a").topic_id, "partitions": [
                {"partition": 0, "current_leader_epoch": -1, "fetch_offset": 0, "log_start_offset": -1,
                 "partition_max_bytes": 1 << 20}]}]}
    if version < 15:
        body["replica_id"] = 1
    else:
        body["replica_state"] = {"replica_id": 1, "replica_epoch": -1}

    def error():
        return call(conn, 1, version, body).responses[0].partitions[0].error_code

    assert error() == E.TOPIC_AUTHORIZATION_FAILED   # READ on the topic is not enough for a follower
    allow(broker, RT.CLUSTER, "kafka-cluster", Op.CLUSTER_ACTION)
    assert error() == E.NONE
