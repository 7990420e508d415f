"""UnregisterBroker, AddRaftVoter and RemoveRaftVoter through their handlers, encoded and decoded
as a client does: what DescribeQuorum, DescribeCluster and Metadata show afterwards, Kafka's
errors and messages for bad input (KafkaRaftClient, AddVoterHandler, RemoveVoterHandler,
ReplicationControlManager), a static quorum (kraft.version 0), and ALTER on the cluster."""
from __future__ import annotations

import pytest

from kafkaemu.core.quorum import directory_id
from kafkaemu.protocol.api_keys import ApiKey
from kafkaemu.protocol.errors import ErrorCode as E
from tests.conftest import call, new_broker
from tests.handlers.test_admin_apis import QUORUM, _connect, _wire, metadata

three_nodes = pytest.mark.broker(0, topics={"t": 3}, nodes=3)


def quorum(broker, **context):
    reply = call(broker, ApiKey.DESCRIBE_QUORUM, 2, QUORUM, **context)
    [partition] = reply.topics[0].partitions
    return partition, reply.nodes


def directory(broker, node_id):
    return directory_id(broker.config.cluster_id, node_id)


def add_voter(broker, node_id, directory_id=None, listeners=None, cluster_id=None, version=1, **context):
    port = broker.placement.listeners[node_id][1] if node_id in broker.placement.listeners else 1
    body = {"cluster_id": cluster_id, "timeout_ms": 30000, "voter_id": node_id,
            "voter_directory_id": directory(broker, node_id) if directory_id is None else directory_id,
            "listeners": [{"name": "CONTROLLER", "host": "localhost", "port": port}] if listeners is None else listeners,
            "ack_when_committed": True}
    reply = call(broker, ApiKey.ADD_RAFT_VOTER, version, body, **context)
    return E(reply.error_code), reply.error_message


def remove_voter(broker, node_id, directory_id=None, cluster_id=None):
    body = {"cluster_id": cluster_id, "voter_id": node_id,
            "voter_directory_id": directory(broker, node_id) if directory_id is None else directory_id}
    reply = call(broker, ApiKey.REMOVE_RAFT_VOTER, 0, body)
    return E(reply.error_code), reply.error_message


def unregister(broker, node_id):
    reply = call(broker, ApiKey.UNREGISTER_BROKER, 0, {"broker_id": node_id})
    return E(reply.error_code), reply.error_message


def cluster(broker, fenced=False):
    reply = call(broker, ApiKey.DESCRIBE_CLUSTER, 2, {"include_cluster_authorized_operations": False,
                                                      "endpoint_type": 1, "include_fenced_brokers": fenced})
    return {b.broker_id: b.is_fenced for b in reply.brokers}


def nodes_listed(broker, node_id=0):
    reply = call(broker, ApiKey.METADATA, 12, {"topics": None, "allow_auto_topic_creation": False}, node_id=node_id)
    return sorted(b.node_id for b in reply.brokers)


@three_nodes
def test_a_voter_added_then_removed_shows_in_describe_quorum(broker):
    assert add_voter(broker, 1) == (E.NONE, None)
    partition, nodes = quorum(broker)
    assert [v.replica_id for v in partition.current_voters] == [0, 1]
    assert partition.current_voters[1].replica_directory_id == directory(broker, 1)
    assert [o.replica_id for o in partition.observers] == [2]
    assert [(n.node_id, [(listener.name, listener.port) for listener in n.listeners]) for n in nodes] == \
        [(0, [("CONTROLLER", broker.placement.listeners[0][1])]), (1, [("CONTROLLER", broker.placement.listeners[1][1])])]
    assert add_voter(broker, 2, version=0) == (E.NONE, None)
    assert remove_voter(broker, 1) == (E.NONE, None)
    partition, nodes = quorum(broker)
    assert [v.replica_id for v in partition.current_voters] == [0, 2]
    assert [o.replica_id for o in partition.observers] == [1] and [n.node_id for n in nodes] == [0, 2]
    assert partition.leader_id == 0 and partition.leader_epoch == 1


@three_nodes
def test_removing_the_leader_elects_another_voter_at_the_next_epoch(broker):
    assert add_voter(broker, 2) == (E.NONE, None)
    assert remove_voter(broker, 0) == (E.NONE, None)
    partition, _ = quorum(broker)
    assert (partition.leader_id, partition.leader_epoch) == (2, 2)
    assert [v.replica_id for v in partition.current_voters] == [2]
    assert [o.replica_id for o in partition.observers] == [0, 1]   # node 0 still fetches, as an observer


@three_nodes
def test_bad_voter_changes_get_kafkas_errors(broker):
    zero = bytes(16)
    assert add_voter(broker, 1, cluster_id="other") == \
        (E.INCONSISTENT_CLUSTER_ID, f'The given id "other" doesn\'t match the cluster id "{broker.config.cluster_id}"')
    assert add_voter(broker, -1) == (E.INVALID_REQUEST, "Add voter request didn't include a valid voter")
    assert add_voter(broker, 1, directory_id=zero) == (E.INVALID_REQUEST, "Add voter request didn't include a valid voter")
    code, message = add_voter(broker, 1, listeners=[{"name": "PLAINTEXT", "host": "localhost", "port": 9092}])
    assert code == E.INVALID_REQUEST and "for the default listener ListenerName(CONTROLLER)" in message
    code, message = add_voter(broker, 0)
    assert code == E.DUPLICATE_VOTER and message.startswith("The voter id for ReplicaKey(id=0, ")
    # nothing answers at the endpoint; a node that is no replica, or with another directory: not caught up
    assert add_voter(broker, 1, listeners=[{"name": "CONTROLLER", "host": "localhost", "port": 1}])[0] == \
        E.REQUEST_TIMED_OUT
    code, message = add_voter(broker, 7, listeners=[{"name": "CONTROLLER", "host": "localhost",
                                                     "port": broker.placement.listeners[1][1]}])
    assert code == E.REQUEST_TIMED_OUT and message.endswith("since it is lagging behind")
    assert add_voter(broker, 1, directory_id=directory(broker, 2))[0] == E.REQUEST_TIMED_OUT
    assert remove_voter(broker, 1, cluster_id="other")[0] == E.INCONSISTENT_CLUSTER_ID
    assert remove_voter(broker, 0, directory_id=zero) == \
        (E.INVALID_REQUEST, "Remove voter request didn't include a valid voter")
    code, message = remove_voter(broker, 0)      # the last voter
    assert code == E.VOTER_NOT_FOUND and message.startswith("Cannot remove voter ReplicaKey(id=0, ")
    assert remove_voter(broker, 1)[0] == E.VOTER_NOT_FOUND
    assert add_voter(broker, 1) == (E.NONE, None)
    assert remove_voter(broker, 1, directory_id=directory(broker, 2))[0] == E.VOTER_NOT_FOUND
    partition, _ = quorum(broker)
    assert [v.replica_id for v in partition.current_voters] == [0, 1]


def test_a_stopped_node_cannot_be_added():
    broker = new_broker(topics={"t": 1}, nodes=2)
    broker.placement.stopped_nodes.add(1)
    assert add_voter(broker, 1)[0] == E.REQUEST_TIMED_OUT


def test_a_static_quorum_cannot_change_and_reports_no_directory_ids():
    broker = new_broker(topics={"t": 1}, nodes=2, finalized_features=["kraft.version=0"])
    assert add_voter(broker, 1) == \
        (E.UNSUPPORTED_VERSION, "Cluster doesn't support adding voter because the kraft.version feature is 0")
    assert remove_voter(broker, 0) == \
        (E.UNSUPPORTED_VERSION, "Cluster doesn't support removing voter because the kraft.version feature is 0")
    partition, _ = quorum(broker)
    assert partition.current_voters[0].replica_directory_id == bytes(16)
    assert partition.observers[0].replica_directory_id == directory(broker, 1)
    # kraft.version upgraded to 1 (KIP-853): the quorum becomes dynamic
    body = {"timeout_ms": 1000, "validate_only": False,
            "feature_updates": [{"feature": "kraft.version", "max_version_level": 1, "upgrade_type": 1}]}
    assert call(broker, ApiKey.UPDATE_FEATURES, 2, body).error_code == E.NONE
    assert quorum(broker)[0].current_voters[0].replica_directory_id == directory(broker, 0)
    assert add_voter(broker, 1) == (E.NONE, None)


@three_nodes
def test_an_unregistered_running_broker_leaves_the_metadata_and_its_partitions_go_offline(broker):
    led = [i for i, p in metadata(broker).items() if p.leader_id == 1]
    assert led
    assert unregister(broker, 1) == (E.NONE, None)
    assert nodes_listed(broker) == [0, 2] and nodes_listed(broker, node_id=1) == [0, 2]
    assert cluster(broker) == {0: False, 2: False} and cluster(broker, fenced=True) == {0: False, 2: False}
    for i in led:
        p = metadata(broker)[i]
        assert (p.error_code, p.leader_id, list(p.offline_replicas)) == (E.LEADER_NOT_AVAILABLE, -1, [1])
    assert unregister(broker, 1) == (E.BROKER_ID_NOT_REGISTERED, "Broker ID 1 is not currently registered")
    assert [o.replica_id for o in quorum(broker)[0].observers] == [1, 2]   # it still runs and fetches
    # a restart registers it again: its partitions are led by it again, at a new epoch
    epochs = {i: metadata(broker)[i].leader_epoch for i in led}
    broker.placement.register(1)   # what the control API's node start does
    assert nodes_listed(broker) == [0, 1, 2]
    assert all(metadata(broker)[i].leader_id == 1 and metadata(broker)[i].leader_epoch > epochs[i] for i in led)


@three_nodes
def test_an_unregistered_broker_hands_its_partitions_to_another_replica(broker):
    body = {"topics": [{"name": "rf2", "num_partitions": -1, "replication_factor": -1, "configs": [],
                        "assignments": [{"partition_index": 0, "broker_ids": [2, 0]}]}],
            "timeout_ms": 1000, "validate_only": False}
    assert call(broker, ApiKey.CREATE_TOPICS, 7, body).topics[0].error_code == E.NONE
    assert unregister(broker, 2) == (E.NONE, None)
    p = metadata(broker, "rf2")[0]
    assert (p.error_code, p.leader_id, list(p.replica_nodes), list(p.isr_nodes), list(p.offline_replicas)) == \
        (E.NONE, 0, [2, 0], [0], [2])


@three_nodes
def test_a_stopped_broker_unregistered_is_no_longer_listed_fenced(broker):
    broker.placement.stopped_nodes.add(2)
    assert cluster(broker, fenced=True) == {0: False, 1: False, 2: True}
    assert unregister(broker, 2) == (E.NONE, None)
    assert cluster(broker, fenced=True) == {0: False, 1: False}


def test_unknown_brokers_are_not_registered():
    broker = new_broker(topics={"t": 1})
    assert unregister(broker, 1) == (E.BROKER_ID_NOT_REGISTERED, "Broker ID 1 is not currently registered")
    assert unregister(broker, -1) == (E.BROKER_ID_NOT_REGISTERED, "Broker ID -1 is not currently registered")
    assert nodes_listed(broker) == [0]


def test_each_needs_alter_on_the_cluster():
    conn = _connect("User:bob")
    denied = E.CLUSTER_AUTHORIZATION_FAILED
    assert _wire(conn, ApiKey.UNREGISTER_BROKER, 0, {"broker_id": 0}).error_code == denied
    added = _wire(conn, ApiKey.ADD_RAFT_VOTER, 1, {"cluster_id": None, "timeout_ms": 1, "voter_id": 1,
                                                   "voter_directory_id": b"\x01" * 16, "listeners": []})
    assert (added.error_code, added.error_message) == (denied, "Cluster authorization failed.")
    removed = _wire(conn, ApiKey.REMOVE_RAFT_VOTER, 0, {"cluster_id": None, "voter_id": 0,
                                                        "voter_directory_id": b"\x01" * 16})
    assert removed.error_code == denied
    assert conn.broker.placement.unregistered == set()


@three_nodes
def test_metadata_names_a_live_broker_as_controller(broker):
    """A KRaft broker's Metadata and DescribeCluster name an alive broker as the controller."""
    def controllers():
        meta = call(broker, ApiKey.METADATA, 12, {"topics": None, "allow_auto_topic_creation": False})
        described = call(broker, ApiKey.DESCRIBE_CLUSTER, 2, {"include_cluster_authorized_operations": False,
                                                              "endpoint_type": 1, "include_fenced_brokers": False})
        return meta.controller_id, described.controller_id
    assert controllers() == (0, 0)
    assert unregister(broker, 0) == (E.NONE, None)
    assert controllers() == (1, 1)


def test_a_single_node_unregistered_leaves_no_broker():
    broker = new_broker(topics={"t": 1})
    assert unregister(broker, 0) == (E.NONE, None)
    reply = call(broker, ApiKey.METADATA, 12, {"topics": [{"name": "t", "topic_id": bytes(16)}],
                                               "allow_auto_topic_creation": False})
    assert (reply.brokers, reply.controller_id) == ([], -1)
    assert reply.topics[0].partitions[0].error_code == E.LEADER_NOT_AVAILABLE
