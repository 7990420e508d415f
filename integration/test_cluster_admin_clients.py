"""The cluster administration APIs through confluent-kafka's and kafka-python's admin clients
against a 3-node kafkaemu: replicas that move, elections, log dirs, the metadata quorum and
config resources as a Kafka 4.3 cluster reports them, with Kafka's errors for bad input."""
from __future__ import annotations

import uuid

import pytest
from confluent_kafka import ElectionType, KafkaError, KafkaException, TopicPartition
from confluent_kafka.admin import (AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource, ConfigSource,
                                   NewTopic)

from kafkaemu.testing import KafkaEmulator


def unique(prefix):
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


@pytest.fixture(scope="module")
def three_nodes():
    with KafkaEmulator(nodes=3) as emulator:
        yield emulator


@pytest.fixture
def kp_admin(three_nodes):
    from kafka.admin import KafkaAdminClient
    admin = KafkaAdminClient(bootstrap_servers=three_nodes.bootstrap_server, client_id="kp-cluster-admin")
    yield admin
    admin.close()


@pytest.fixture
def ck_admin(three_nodes):
    return AdminClient({"bootstrap.servers": three_nodes.bootstrap_server})


def create(ck_admin, partitions=1):
    name = unique("cluster-admin")
    ck_admin.create_topics([NewTopic(name, partitions, 1)])[name].result(10)
    return name


def replicas(kp_admin, topic, index=0):
    (described,) = kp_admin.describe_topics([topic])
    p = next(p for p in described["partitions"] if p["partition_index"] == index)
    return list(p["replica_nodes"]), p["leader_id"]


def test_reassigned_replicas_show_in_metadata_and_a_preferred_election_moves_the_leader(three_nodes, kp_admin,
                                                                                         ck_admin):
    from kafka.structs import TopicPartition as KPTopicPartition
    topic = create(ck_admin)
    tp = KPTopicPartition(topic, 0)
    assert kp_admin.alter_partition_reassignments({tp: [2, 0, 1]}) == {tp: None}
    assert replicas(kp_admin, topic)[0] == [2, 0, 1]
    assert kp_admin.list_partition_reassignments() == {}
    three_nodes.move_leader(topic, 0, 0)
    [result] = ck_admin.elect_leaders(ElectionType.PREFERRED, [TopicPartition(topic, 0)]).result(10)
    assert result.error is None
    assert replicas(kp_admin, topic)[1] == 2
    [again] = ck_admin.elect_leaders(ElectionType.PREFERRED, [TopicPartition(topic, 0)]).result(10)
    assert again.error.code() == KafkaError.ELECTION_NOT_NEEDED
    [unknown] = ck_admin.elect_leaders(ElectionType.PREFERRED, [TopicPartition(topic + "-no", 0)]).result(10)
    assert unknown.error.code() == KafkaError.UNKNOWN_TOPIC_OR_PART


def test_bad_reassignments(kp_admin, ck_admin):
    from kafka.structs import TopicPartition as KPTopicPartition
    topic = create(ck_admin, 2)
    bad = {KPTopicPartition(topic, 0): [0, 9], KPTopicPartition(topic, 1): [1, 1],
           KPTopicPartition(topic, 5): [0]}
    result = kp_admin.alter_partition_reassignments(bad)
    codes = {tp.partition: error.errno for tp, error in result.items()}
    assert codes == {0: 39, 1: 39, 5: 3}   # INVALID_REPLICA_ASSIGNMENT, UNKNOWN_TOPIC_OR_PARTITION


def test_log_dirs_quorum_and_config_resources(three_nodes, kp_admin, ck_admin):
    from kafka.structs import TopicPartitionReplica
    topic = create(ck_admin, 3)
    dirs = {r["broker"]: r["log_dirs"] for r in kp_admin.describe_log_dirs()}
    assert sorted(dirs) == [0, 1, 2] and all(len(d) == 1 and d[0]["error_code"] == 0 for d in dirs.values())
    leader = replicas(kp_admin, topic)[1]
    target = dirs[leader][0]["log_dir"]
    tpr = TopicPartitionReplica(topic, 0, leader)
    assert kp_admin.alter_replica_log_dirs({tpr: target})[tpr].__name__ == "NoError"
    quorum = kp_admin.describe_metadata_quorum()
    [p] = quorum["topics"][0]["partitions"]
    assert p["leader_id"] == 0 and [v["replica_id"] for v in p["current_voters"]] == [0]
    listed = kp_admin.list_config_resources()
    assert "broker" in listed and topic in str(listed)


def test_broker_and_topic_configs_as_kafka_reports_them(ck_admin):
    topic = create(ck_admin)
    node = ConfigResource("broker", "1")
    configs = ck_admin.describe_configs([node])[node].result(10)
    advertised = configs["advertised.listeners"]
    assert advertised.source == ConfigSource.STATIC_BROKER_CONFIG.value and advertised.is_read_only
    assert advertised.value.startswith("PLAINTEXT://") and advertised.value.endswith(str(int(
        configs["listeners"].value.rsplit(":", 1)[1])))
    assert configs["min.insync.replicas"].source == ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG.value
    assert configs["num.partitions"].is_read_only and not configs["log.retention.ms"].is_read_only

    # librdkafka names no cluster-default resource (""): a node's own dynamic config (the Java test
    # covers the cluster default and the topic defaults it changes)
    change = ConfigResource("broker", "1", incremental_configs=[
        ConfigEntry("log.retention.ms", "3600000", incremental_operation=AlterConfigOpType.SET)])
    ck_admin.incremental_alter_configs([change])[change].result(10)
    try:
        retention = ck_admin.describe_configs([node])[node].result(10)["log.retention.ms"]
        assert retention.value == "3600000" and retention.source == ConfigSource.DYNAMIC_BROKER_CONFIG.value
        t = ConfigResource("topic", topic)
        assert ck_admin.describe_configs([t])[t].result(10)["min.insync.replicas"].source == \
            ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG.value
        bad = ConfigResource("broker", "1", incremental_configs=[
            ConfigEntry("num.partitions", "4", incremental_operation=AlterConfigOpType.SET)])
        with pytest.raises(KafkaException) as raised:
            ck_admin.incremental_alter_configs([bad])[bad].result(10)
        assert raised.value.args[0].code() == KafkaError.INVALID_REQUEST
    finally:
        reset = ConfigResource("broker", "1", incremental_configs=[
            ConfigEntry("log.retention.ms", None, incremental_operation=AlterConfigOpType.DELETE)])
        ck_admin.incremental_alter_configs([reset])[reset].result(10)


def test_voters_and_unregistered_brokers_as_the_python_clients_see_them():
    """No Python client sends AddRaftVoter, RemoveRaftVoter or UnregisterBroker (the Java Admin
    does: test_cluster_admin_java.py); sent over a raw connection, their effects are what
    kafka-python's describe_metadata_quorum and confluent-kafka's describe_cluster and
    list_topics report, and a broker's restart registers it again."""
    from kafka.admin import KafkaAdminClient

    from kafkaemu.core.quorum import directory_id
    from kafkaemu.protocol.api_keys import ApiKey
    from kafkaemu.protocol.errors import ErrorCode
    from kafkaemu.testing import raw_client

    with KafkaEmulator(nodes=3) as emulator:
        ck = AdminClient({"bootstrap.servers": emulator.bootstrap_server})
        kp = KafkaAdminClient(bootstrap_servers=emulator.bootstrap_server, client_id="kp-quorum")
        try:
            cluster_id = ck.describe_cluster().result(10).cluster_id
            port1 = emulator.nodes()[1]["port"]
            with raw_client.connect(emulator) as sock:
                added = raw_client.request(sock, ApiKey.ADD_RAFT_VOTER, 1, {
                    "cluster_id": cluster_id, "timeout_ms": 30000, "voter_id": 1,
                    "voter_directory_id": directory_id(cluster_id, 1),
                    "listeners": [{"name": "CONTROLLER", "host": "localhost", "port": port1}]})
                assert (added.error_code, added.error_message) == (0, None)
                [p] = kp.describe_metadata_quorum()["topics"][0]["partitions"]
                assert [v["replica_id"] for v in p["current_voters"]] == [0, 1]
                assert [o["replica_id"] for o in p["observers"]] == [2]
                removed = raw_client.request(sock, ApiKey.REMOVE_RAFT_VOTER, 0, {
                    "cluster_id": None, "voter_id": 0, "voter_directory_id": directory_id(cluster_id, 0)},
                    correlation_id=2)
                assert removed.error_code == 0
                [p] = kp.describe_metadata_quorum()["topics"][0]["partitions"]
                assert (p["leader_id"], [v["replica_id"] for v in p["current_voters"]]) == (1, [1])
                gone = raw_client.request(sock, ApiKey.UNREGISTER_BROKER, 0, {"broker_id": 2}, correlation_id=3)
                assert gone.error_code == 0
                again = raw_client.request(sock, ApiKey.UNREGISTER_BROKER, 0, {"broker_id": 2}, correlation_id=4)
                assert again.error_code == ErrorCode.BROKER_ID_NOT_REGISTERED
            assert sorted(n.id for n in ck.describe_cluster().result(10).nodes) == [0, 1]
            assert sorted(ck.list_topics(timeout=10).brokers) == [0, 1]
            emulator.stop_node(2)
            emulator.start_node(2)
            assert sorted(n.id for n in ck.describe_cluster().result(10).nodes) == [0, 1, 2]
        finally:
            kp.close()
