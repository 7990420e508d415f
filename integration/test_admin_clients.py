"""Topic and cluster administration through three real clients' admin APIs."""
import asyncio
import uuid

import pytest
from confluent_kafka import KafkaException
from confluent_kafka.admin import AdminClient, ConfigResource, NewPartitions, NewTopic


def unique(prefix):
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def test_kafka_python_admin_lifecycle(kafka_emulator):
    from kafka.admin import ConfigResource as KPConfigResource
    from kafka.admin import ConfigResourceType, KafkaAdminClient
    from kafka.admin import NewPartitions as KPNewPartitions
    from kafka.admin import NewTopic as KPNewTopic
    from kafka.errors import TopicAlreadyExistsError

    name = unique("kp")
    admin = KafkaAdminClient(bootstrap_servers=kafka_emulator.bootstrap_server, client_id="kp-admin")
    try:
        result = admin.create_topics([KPNewTopic(name, 3, 1, topic_configs={"retention.ms": "60000"})])
        assert result["topics"][0]["error_code"] == 0
        assert name in admin.list_topics()
        (described,) = admin.describe_topics([name])
        assert [p["partition_index"] for p in described["partitions"]] == [0, 1, 2]
        assert described["partitions"][0]["leader_id"] == 0
        with pytest.raises(TopicAlreadyExistsError):
            admin.create_topics([KPNewTopic(name, 1, 1)], raise_errors=True)
        admin.create_partitions({name: KPNewPartitions(5)})
        assert len(admin.describe_topics([name])[0]["partitions"]) == 5
        configs = admin.describe_configs([KPConfigResource(ConfigResourceType.TOPIC, name)])
        assert configs["topic"][name]["retention.ms"]["value"] == "60000"
        cluster = admin.describe_cluster()
        host, port = kafka_emulator.bootstrap_server.split(":")
        assert cluster["brokers"] == [{"broker_id": 0, "host": host, "port": int(port), "rack": None,
                                       "is_fenced": False}]   # DescribeCluster v2
        admin.delete_topics([name])
        assert name not in admin.list_topics()
    finally:
        admin.close()


def test_kafka_python_infers_a_modern_broker_version(kafka_emulator):
    from kafka.admin import KafkaAdminClient
    admin = KafkaAdminClient(bootstrap_servers=kafka_emulator.bootstrap_server)
    try:
        # kafka-python infers 4.3 from what only a 4.3 broker answers (DescribeLogDirs v5 among them)
        assert admin._client.check_version() == (4, 3)
    finally:
        admin.close()


def test_confluent_admin_lifecycle(kafka_emulator):
    name = unique("ck")
    admin = AdminClient({"bootstrap.servers": kafka_emulator.bootstrap_server})
    admin.create_topics([NewTopic(name, 2, 1, config={"cleanup.policy": "compact"})])[name].result(10)
    md = admin.list_topics(timeout=10)
    assert len(md.topics[name].partitions) == 2
    assert md.cluster_id == "kafkaemu-cluster-0000"
    with pytest.raises(KafkaException) as excinfo:
        admin.create_topics([NewTopic(name, 1, 1)])[name].result(10)
    assert excinfo.value.args[0].name() == "TOPIC_ALREADY_EXISTS"
    too_replicated = unique("ck-rf")
    with pytest.raises(KafkaException) as excinfo:
        admin.create_topics([NewTopic(too_replicated, 1, 3)])[too_replicated].result(10)
    assert excinfo.value.args[0].name() == "INVALID_REPLICATION_FACTOR"
    admin.create_partitions([NewPartitions(name, 4)])[name].result(10)
    assert len(admin.list_topics(name, timeout=10).topics[name].partitions) == 4
    resource = ConfigResource("topic", name)
    config = admin.describe_configs([resource])[resource].result(10)
    assert config["cleanup.policy"].value == "compact"
    assert config["retention.ms"].value == "604800000" and config["retention.ms"].is_default
    cluster = admin.describe_cluster().result(10)
    assert [n.id for n in cluster.nodes] == [0] and cluster.controller.id == 0
    admin.delete_topics([name])[name].result(10)
    assert name not in admin.list_topics(timeout=10).topics
    with pytest.raises(KafkaException) as excinfo:
        admin.delete_topics([name])[name].result(10)
    assert excinfo.value.args[0].name() == "UNKNOWN_TOPIC_OR_PART"


def test_aiokafka_admin_lifecycle(kafka_emulator):
    from aiokafka.admin import AIOKafkaAdminClient
    from aiokafka.admin import NewTopic as AIONewTopic

    async def scenario():
        name = unique("aio")
        admin = AIOKafkaAdminClient(bootstrap_servers=kafka_emulator.bootstrap_server)
        await admin.start()
        try:
            await admin.create_topics([AIONewTopic(name, 3, 1)])
            assert name in await admin.list_topics()
            described = await admin.describe_topics([name])
            assert len(described[0]["partitions"]) == 3
            cluster = await admin.describe_cluster()
            assert cluster["cluster_id"] == "kafkaemu-cluster-0000"
            await admin.delete_topics([name])
            assert name not in await admin.list_topics()
        finally:
            await admin.close()

    asyncio.run(scenario())


def test_confluent_alters_topic_configs_incrementally_and_wholesale(kafka_emulator):
    from confluent_kafka.admin import AlterConfigOpType, ConfigEntry

    name = unique("ck-cfg")
    admin = AdminClient({"bootstrap.servers": kafka_emulator.bootstrap_server})
    admin.create_topics([NewTopic(name, 1, 1, config={"retention.ms": "1000"})])[name].result(10)
    resource = ConfigResource("topic", name, incremental_configs=[
        ConfigEntry("cleanup.policy", "compact", incremental_operation=AlterConfigOpType.APPEND),
        ConfigEntry("retention.ms", None, incremental_operation=AlterConfigOpType.DELETE),
        ConfigEntry("max.message.bytes", "2000000", incremental_operation=AlterConfigOpType.SET)])
    admin.incremental_alter_configs([resource])[resource].result(10)
    described = admin.describe_configs([ConfigResource("topic", name)])
    config = list(described.values())[0].result(10)
    assert config["cleanup.policy"].value == "delete,compact"
    assert config["retention.ms"].value == "604800000" and config["retention.ms"].is_default
    assert config["max.message.bytes"].value == "2000000"

    bad = ConfigResource("topic", name, incremental_configs=[
        ConfigEntry("no.such.config", "1", incremental_operation=AlterConfigOpType.SET)])
    with pytest.raises(KafkaException) as excinfo:
        admin.incremental_alter_configs([bad])[bad].result(10)
    assert excinfo.value.args[0].name() == "INVALID_CONFIG"

    wholesale = ConfigResource("topic", name, set_config={"retention.bytes": "1048576"})
    with pytest.warns(DeprecationWarning):
        future = admin.alter_configs([wholesale])[wholesale]
    future.result(10)
    config = list(admin.describe_configs([ConfigResource("topic", name)]).values())[0].result(10)
    assert config["retention.bytes"].value == "1048576"
    assert config["cleanup.policy"].value == "delete"  # AlterConfigs replaced the whole set


def test_a_recreated_topic_does_not_inherit_committed_offsets(kafka_emulator):
    from confluent_kafka import Consumer, TopicPartition

    name, group = unique("ck-recreated"), unique("ck-recreated-group")
    admin = AdminClient({"bootstrap.servers": kafka_emulator.bootstrap_server})
    admin.create_topics([NewTopic(name, 1, 1)])[name].result(10)
    consumer = Consumer({"bootstrap.servers": kafka_emulator.bootstrap_server, "group.id": group})
    try:
        consumer.commit(offsets=[TopicPartition(name, 0, 500)], asynchronous=False)
        assert consumer.committed([TopicPartition(name, 0)], 10)[0].offset == 500
        admin.delete_topics([name])[name].result(10)
        admin.create_topics([NewTopic(name, 1, 1)])[name].result(10)
        assert consumer.committed([TopicPartition(name, 0)], 10)[0].offset < 0  # as Kafka: no offset
    finally:
        consumer.close()
