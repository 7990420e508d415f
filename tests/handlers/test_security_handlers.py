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
