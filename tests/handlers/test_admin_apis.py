"""ElectLeaders, AlterPartitionReassignments / ListPartitionReassignments, DescribeLogDirs,
AlterReplicaLogDirs, DescribeQuorum and ListConfigResources through their handlers, encoded and
decoded as a client does: Kafka's answers on one node and on three, its errors for bad input,
and CLUSTER_AUTHORIZATION_FAILED for a principal without the cluster permission."""
from __future__ import annotations

import pytest

from kafkaemu.broker import Broker
from kafkaemu.config import BrokerConfig
from kafkaemu.handlers import REGISTRY
from kafkaemu.protocol import envelope
from kafkaemu.protocol.api_keys import ApiKey
from kafkaemu.protocol.errors import ErrorCode as E
from kafkaemu.storage.record_batch import build_batch
from kafkaemu.wire.connection import Connection
from kafkaemu.wire.framing import FrameDecoder
from tests.conftest import call, new_broker

three_nodes = pytest.mark.broker(0, topics={"t": 3}, nodes=3)


def metadata(broker, topic="t"):
    reply = call(broker, ApiKey.METADATA, 12, {"topics": [{"name": topic, "topic_id": bytes(16)}],
                                                 "allow_auto_topic_creation": False})
    return {p.partition_index: p for p in reply.topics[0].partitions}


def reassign(broker, partitions, version=1, allow_rf_change=True, topic="t"):
    body = {"allow_replication_factor_change": allow_rf_change,
            "topics": [{"name": topic, "partitions": [{"partition_index": i, "replicas": r} for i, r in partitions]}]}
    return call(broker, ApiKey.ALTER_PARTITION_REASSIGNMENTS, version, body)


def errors_of(reply):
    return {p.partition_index: p.error_code for t in reply.responses for p in t.partitions}


@three_nodes
def test_a_reassignment_moves_the_replicas_and_metadata_shows_them(broker):
    reply = reassign(broker, [(0, [2, 1]), (1, [0, 1, 2])])
    assert reply.error_code == E.NONE and errors_of(reply) == {0: E.NONE, 1: E.NONE}
    parts = metadata(broker)
    assert list(parts[0].replica_nodes) == [2, 1] and parts[0].leader_id in (2, 1)
    assert list(parts[0].isr_nodes) == [2, 1]
    assert list(parts[1].replica_nodes) == [0, 1, 2]
    assert call(broker, ApiKey.LIST_PARTITION_REASSIGNMENTS, 0, {"topics": None}).topics == []


@three_nodes
def test_a_reassignment_off_the_leader_moves_leadership_to_the_first_new_replica(broker):
    leader = metadata(broker)[0].leader_id
    epoch = metadata(broker)[0].leader_epoch
    target = [n for n in (0, 1, 2) if n != leader]
    assert errors_of(reassign(broker, [(0, target)])) == {0: E.NONE}
    after = metadata(broker)[0]
    assert after.leader_id == target[0] and after.leader_epoch == epoch + 1


@three_nodes
def test_bad_reassignments_get_kafkas_errors(broker):
    reply = reassign(broker, [(0, []), (1, [0, 7]), (2, [1, 1]), (-1, [0]), (5, [0])])
    assert errors_of(reply) == {0: E.INVALID_REPLICA_ASSIGNMENT, 1: E.INVALID_REPLICA_ASSIGNMENT,
                                2: E.INVALID_REPLICA_ASSIGNMENT, -1: E.UNKNOWN_TOPIC_OR_PARTITION,
                                5: E.UNKNOWN_TOPIC_OR_PARTITION}
    messages = {p.partition_index: p.error_message for p in reply.responses[0].partitions}
    assert "broker 7, but no such broker is registered" in messages[1]
    assert "broker 1 more than once" in messages[2]
    assert errors_of(reassign(broker, [(0, [0, 1])], allow_rf_change=False)) == {0: E.INVALID_REPLICATION_FACTOR}
    assert errors_of(reassign(broker, [(0, None)])) == {0: E.NO_REASSIGNMENT_IN_PROGRESS}
    assert errors_of(reassign(broker, [(0, [0])], topic="nope")) == {0: E.UNKNOWN_TOPIC_OR_PARTITION}
    assert all(list(p.replica_nodes) == [p.leader_id] for p in metadata(broker).values())


@three_nodes
def test_preferred_election_moves_the_leader_back_to_the_first_replica(broker):
    assert errors_of(reassign(broker, [(0, [1, 2])])) == {0: E.NONE}
    broker.placement.move_leader("t", 0, 2)
    body = {"election_type": 0, "topic_partitions": [{"topic": "t", "partitions": [0, 1]}]}
    reply = call(broker, ApiKey.ELECT_LEADERS, 2, body)
    results = {p.partition_id: p for p in reply.replica_election_results[0].partition_result}
    assert results[0].error_code == E.NONE and results[0].error_message is None
    assert results[1].error_code == E.ELECTION_NOT_NEEDED
    assert metadata(broker)[0].leader_id == 1
    # all partitions: those not needing an election are left out
    assert call(broker, ApiKey.ELECT_LEADERS, 2, {"election_type": 0, "topic_partitions": None}) \
        .replica_election_results == []


@three_nodes
def test_elections_of_unknown_partitions_and_stopped_preferred_replicas(broker):
    assert errors_of(reassign(broker, [(0, [1, 2])])) == {0: E.NONE}
    broker.placement.move_leader("t", 0, 2)
    broker.placement.stopped_nodes.add(1)
    body = {"election_type": 0, "topic_partitions": [{"topic": "t", "partitions": [0, -1, 9]},
                                                     {"topic": "nope", "partitions": [0]}]}
    reply = call(broker, ApiKey.ELECT_LEADERS, 1, body)
    codes = {(t.topic, p.partition_id): p.error_code for t in reply.replica_election_results
             for p in t.partition_result}
    assert codes == {("t", 0): E.PREFERRED_LEADER_NOT_AVAILABLE, ("t", -1): E.UNKNOWN_TOPIC_OR_PARTITION,
                     ("t", 9): E.UNKNOWN_TOPIC_OR_PARTITION, ("nope", 0): E.UNKNOWN_TOPIC_OR_PARTITION}
    # unclean: the leader's node stops, the first live replica takes over
    broker.placement.stopped_nodes = {2}
    reply = call(broker, ApiKey.ELECT_LEADERS, 2, {"election_type": 1,
                                                    "topic_partitions": [{"topic": "t", "partitions": [0]}]})
    assert reply.replica_election_results[0].partition_result[0].error_code == E.NONE
    assert metadata(broker)[0].leader_id == 1
    bad = call(broker, ApiKey.ELECT_LEADERS, 2, {"election_type": 5, "topic_partitions": [{"topic": "t",
                                                                                          "partitions": [0]}]})
    assert bad.error_code == E.INVALID_REQUEST


def test_one_node_elects_nothing():
    broker = new_broker(topics={"t": 2})
    reply = call(broker, ApiKey.ELECT_LEADERS, 0, {"topic_partitions": [{"topic": "t", "partitions": [0, 1]}]})
    assert {p.error_code for p in reply.replica_election_results[0].partition_result} == {E.ELECTION_NOT_NEEDED}


def test_log_dirs_report_each_partition_with_its_real_size():
    broker = new_broker(topics={"t": 2, "u": 1})
    batch = build_batch([(b"k", b"v" * 100, [], 0)])
    broker.store.get("t").partitions[1].append(batch, 0)
    reply = call(broker, ApiKey.DESCRIBE_LOG_DIRS, 4, {"topics": None})
    [result] = reply.results
    assert result.error_code == E.NONE and result.log_dir == "/kafkaemu-memory"
    sizes = {(t.name, p.partition_index): p.partition_size for t in result.topics for p in t.partitions}
    assert sizes[("t", 1)] == len(batch) and sizes[("t", 0)] == 0 and ("u", 0) in sizes
    some = call(broker, ApiKey.DESCRIBE_LOG_DIRS, 1, {"topics": [{"topic": "t", "partitions": [1]},
                                                                   {"topic": "nope", "partitions": [0]}]})
    assert [(t.name, [p.partition_index for p in t.partitions]) for t in some.results[0].topics] == [("t", [1])]


@three_nodes
def test_each_node_has_its_own_log_dir_with_its_replicas(broker):
    seen = {}
    for node in (0, 1, 2):
        reply = call(broker, ApiKey.DESCRIBE_LOG_DIRS, 5, {"topics": None}, node_id=node)
        [result] = reply.results
        assert result.log_dir == f"/kafkaemu-memory/node-{node}"
        for t in result.topics:
            for p in t.partitions:
                seen.setdefault((t.name, p.partition_index), []).append(node)
    assert {k: v for k, v in seen.items() if k[0] == "t"} == {
        ("t", i): [p.leader_id] for i, p in metadata(broker).items()}


@three_nodes
def test_alter_replica_log_dirs(broker):
    leader = metadata(broker)[0].leader_id
    here = "/kafkaemu-memory/node-%d" % leader
    body = {"dirs": [{"path": here, "topics": [{"name": "t", "partitions": [0, 7]}, {"name": "x", "partitions": [0]}]},
                     {"path": "/elsewhere", "topics": [{"name": "t", "partitions": [0]}]}]}
    reply = call(broker, ApiKey.ALTER_REPLICA_LOG_DIRS, 2, body, node_id=leader)
    codes = [(r.topic_name, p.partition_index, p.error_code) for r in reply.results for p in r.partitions]
    assert codes == [("t", 0, E.NONE), ("t", 7, E.UNKNOWN_TOPIC_OR_PARTITION), ("t", 0, E.LOG_DIR_NOT_FOUND),
                     ("x", 0, E.UNKNOWN_TOPIC_OR_PARTITION)]
    other = (leader + 1) % 3
    body = {"dirs": [{"path": f"/kafkaemu-memory/node-{other}", "topics": [{"name": "t", "partitions": [0]}]}]}
    reply = call(broker, ApiKey.ALTER_REPLICA_LOG_DIRS, 1, body, node_id=other)
    assert reply.results[0].partitions[0].error_code == E.NOT_LEADER_OR_FOLLOWER


QUORUM = {"topics": [{"topic_name": "__cluster_metadata", "partitions": [{"partition_index": 0}]}]}


@three_nodes
def test_describe_quorum_is_one_voter_with_the_other_nodes_observing(broker):
    reply = call(broker, ApiKey.DESCRIBE_QUORUM, 2, QUORUM, now_ms=5000)
    [partition] = reply.topics[0].partitions
    assert reply.error_code == E.NONE and partition.leader_id == 0 and partition.leader_epoch >= 1
    assert [v.replica_id for v in partition.current_voters] == [0]
    assert [o.replica_id for o in partition.observers] == [1, 2]
    assert partition.current_voters[0].log_end_offset == partition.high_watermark > 0
    assert partition.current_voters[0].last_caught_up_timestamp == 5000
    assert [n.node_id for n in reply.nodes] == [0] and reply.nodes[0].listeners[0].name == "CONTROLLER"
    v0 = call(broker, ApiKey.DESCRIBE_QUORUM, 0, QUORUM)
    assert v0.topics[0].partitions[0].leader_id == 0


def test_describe_quorum_of_another_partition_is_an_invalid_request(broker):
    for topics in ([], [{"topic_name": "t", "partitions": [{"partition_index": 0}]}],
                   [{"topic_name": "__cluster_metadata", "partitions": [{"partition_index": 1}]}]):
        assert call(broker, ApiKey.DESCRIBE_QUORUM, 2, {"topics": topics}).error_code == E.INVALID_REQUEST


def test_list_config_resources():
    broker = new_broker(topics={"t": 1}, nodes=2)
    reply = call(broker, ApiKey.LIST_CONFIG_RESOURCES, 1, {"resource_types": []})
    got = {(r.resource_type, r.resource_name) for r in reply.config_resources}
    assert {(2, "t"), (4, "0"), (4, "1"), (8, "0"), (8, "1")} <= got
    only = call(broker, ApiKey.LIST_CONFIG_RESOURCES, 1, {"resource_types": [4]})
    assert {(r.resource_type, r.resource_name) for r in only.config_resources} == {(4, "0"), (4, "1")}
    assert call(broker, ApiKey.LIST_CONFIG_RESOURCES, 1, {"resource_types": [3]}).error_code == E.UNSUPPORTED_VERSION
    assert call(broker, ApiKey.LIST_CONFIG_RESOURCES, 0, {}).config_resources == []


def _connect(principal):
    broker = Broker(BrokerConfig(authorizer=True), 0)
    broker.topics.create("t", 1, {})
    conn = Connection(broker, REGISTRY, 1, "127.0.0.1", now_ms=0)
    conn.principal = principal
    return conn


def _wire(conn, api_key, version, body):
    conn.receive(envelope.encode_request(api_key, version, body, 7, "t"), 1)
    (frame,) = FrameDecoder(1 << 30).feed(conn.take_output())
    return envelope.decode_response(api_key, version, frame)[1]


def test_each_api_needs_its_cluster_permission():
    conn = _connect("User:bob")
    denied = E.CLUSTER_AUTHORIZATION_FAILED
    elect = _wire(conn, ApiKey.ELECT_LEADERS, 2, {"election_type": 0,
                                                  "topic_partitions": [{"topic": "t", "partitions": [0]}]})
    assert elect.error_code == denied and elect.replica_election_results[0].partition_result[0].error_code == denied
    alter = _wire(conn, ApiKey.ALTER_PARTITION_REASSIGNMENTS, 0,
                  {"topics": [{"name": "t", "partitions": [{"partition_index": 0, "replicas": [0]}]}]})
    assert alter.error_code == denied and alter.responses[0].partitions[0].error_code == denied
    assert _wire(conn, ApiKey.LIST_PARTITION_REASSIGNMENTS, 0, {"topics": None}).error_code == denied
    logdirs = _wire(conn, ApiKey.DESCRIBE_LOG_DIRS, 4, {"topics": None})
    assert logdirs.error_code == denied and logdirs.results == []
    moved = _wire(conn, ApiKey.ALTER_REPLICA_LOG_DIRS, 2, {"dirs": [{"path": "/kafkaemu-memory", "topics": [
        {"name": "t", "partitions": [0]}]}]})
    assert moved.results[0].partitions[0].error_code == denied
    assert _wire(conn, ApiKey.DESCRIBE_QUORUM, 2, QUORUM).error_code == denied
    assert _wire(conn, ApiKey.LIST_CONFIG_RESOURCES, 1, {"resource_types": []}).error_code == denied



@three_nodes
def test_created_topics_get_their_replication_factor_and_assignments(broker):
    body = {"topics": [{"name": "rf3", "num_partitions": 2, "replication_factor": 3, "assignments": [], "configs": []},
                       {"name": "manual", "num_partitions": -1, "replication_factor": -1, "configs": [],
                        "assignments": [{"partition_index": 0, "broker_ids": [2, 1]}]}],
            "timeout_ms": 1000, "validate_only": False}
    reply = call(broker, ApiKey.CREATE_TOPICS, 7, body)
    assert [t.error_code for t in reply.topics] == [E.NONE, E.NONE]
    for p in metadata(broker, "rf3").values():
        assert len(p.replica_nodes) == 3 and p.replica_nodes[0] == p.leader_id and p.leader_epoch == 0
    manual = metadata(broker, "manual")[0]
    assert list(manual.replica_nodes) == [2, 1] and manual.leader_id == 2 and manual.leader_epoch == 0
    # a preferred election is not needed: every partition's first replica leads
    none_needed = call(broker, ApiKey.ELECT_LEADERS, 2, {"election_type": 0, "topic_partitions": None})
    assert none_needed.replica_election_results == []
    sizes = [call(broker, ApiKey.DESCRIBE_LOG_DIRS, 4, {"topics": [{"topic": "rf3", "partitions": [0]}]},
                  node_id=n).results[0].topics for n in (0, 1, 2)]
    assert all(len(t) == 1 for t in sizes)   # every node holds a replica of rf3-0
