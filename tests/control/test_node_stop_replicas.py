"""A node stop moves the leadership of a reassigned partition to another running replica of it,
and Metadata shows the stopped replica offline."""
from kafkaemu.protocol.api_keys import ApiKey
from tests.conftest import call

from .harness import Env


def test_a_node_stop_moves_leadership_to_another_replica():
    env = Env(nodes=3)
    env.broker.topics.create("t", 1, {})
    env.broker.placement.reassign("t", 0, [1, 2])
    env.broker.placement.move_leader("t", 0, 1)
    env.op("node_stop", node=1)
    reply = call(env.broker, ApiKey.METADATA, 12, {"topics": [{"name": "t", "topic_id": bytes(16)}],
                                                     "allow_auto_topic_creation": False})
    [p] = reply.topics[0].partitions
    assert p.leader_id == 2 and list(p.replica_nodes) == [1, 2]
    assert list(p.offline_replicas) == [1] and list(p.isr_nodes) == [2]
    env.op("node_start", node=1)
    assert env.broker.placement.partition_leader(env.broker.store.get("t").partitions[0]) == 1


def test_a_restart_registers_an_unregistered_broker_and_reset_restores_the_quorum():
    from kafkaemu.core.quorum import directory_id
    env = Env(nodes=3)
    env.broker.topics.create("t", 3, {})
    assert call(env.broker, ApiKey.UNREGISTER_BROKER, 0, {"broker_id": 2}).error_code == 0
    voter = {"cluster_id": None, "timeout_ms": 1, "voter_id": 1,
             "voter_directory_id": directory_id(env.broker.config.cluster_id, 1),
             "listeners": [{"name": "CONTROLLER", "host": "localhost", "port": env.broker.placement.listeners[1][1]}]}
    assert call(env.broker, ApiKey.ADD_RAFT_VOTER, 1, voter).error_code == 0
    assert [(n["registered"], n["voter"]) for n in env.op("nodes")["nodes"]] == \
        [(True, True), (True, True), (False, False)]
    env.op("node_stop", node=2)
    env.op("node_start", node=2)
    assert [n["registered"] for n in env.op("nodes")["nodes"]] == [True, True, True]
    assert call(env.broker, ApiKey.UNREGISTER_BROKER, 0, {"broker_id": 2}).error_code == 0
    env.op("reset")
    assert [(n["registered"], n["voter"]) for n in env.op("nodes")["nodes"]] == \
        [(True, True), (True, False), (True, False)]
