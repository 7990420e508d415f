"""Several emulated nodes: leaders and coordinators spread over them, as in a real cluster."""
import uuid

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from kafkaemu.core.placement import partition_for
from kafkaemu.protocol.api_keys import ApiKey
from kafkaemu.protocol.errors import ErrorCode
from kafkaemu.testing import KafkaEmulator

from kafkaemu.testing.raw_client import request


@pytest.fixture(scope="module")
def cluster():
    with KafkaEmulator(nodes=3) as emulator:
        yield emulator


def node_socket(emulator, node_id):
    import socket
    host, port = emulator.call(lambda b: b.placement.listeners[node_id])
    return socket.create_connection((host, port), timeout=5)


def test_metadata_lists_every_node_and_spreads_leaders(cluster):
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap_server})
    name = f"spread-{uuid.uuid4().hex[:6]}"
    admin.create_topics([NewTopic(name, 6, 1)])[name].result(10)
    md = admin.list_topics(name, timeout=10)
    assert sorted(md.brokers) == [0, 1, 2]
    leaders = [md.topics[name].partitions[p].leader for p in range(6)]
    assert sorted(leaders) == [0, 0, 1, 1, 2, 2]
    with pytest.raises(Exception):
        admin.create_topics([NewTopic(f"{name}-rf4", 1, 4)])[f"{name}-rf4"].result(10)


def test_find_coordinator_names_the_leader_of_the_groups_offsets_partition(cluster):
    group = "placed-group"
    expected = partition_for(group, 50) % 3
    with node_socket(cluster, (expected + 1) % 3) as sock:
        found = request(sock, ApiKey.FIND_COORDINATOR, 4, {"key_type": 0, "coordinator_keys": [group]})
        (coordinator,) = found.coordinators
        assert coordinator.node_id == expected
        assert (coordinator.host, coordinator.port) == cluster.call(lambda b: b.placement.listeners[expected])
        hb = request(sock, ApiKey.HEARTBEAT, 4, {"group_id": group, "generation_id": 1, "member_id": "m"}, 2)
        assert hb.error_code == ErrorCode.NOT_COORDINATOR
    with node_socket(cluster, expected) as sock:
        hb = request(sock, ApiKey.HEARTBEAT, 4, {"group_id": group, "generation_id": 1, "member_id": "m"}, 3)
        assert hb.error_code == ErrorCode.UNKNOWN_MEMBER_ID


def test_a_consumer_group_works_across_nodes_and_survives_a_coordinator_move(cluster):
    topic, group = f"multi-{uuid.uuid4().hex[:6]}", f"multi-group-{uuid.uuid4().hex[:6]}"
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap_server})
    admin.create_topics([NewTopic(topic, 3, 1)])[topic].result(10)
    producer = Producer({"bootstrap.servers": cluster.bootstrap_server})
    for i in range(30):
        producer.produce(topic, value=str(i).encode(), partition=i % 3)
    assert producer.flush(10) == 0
    consumer = Consumer({"bootstrap.servers": cluster.bootstrap_server, "group.id": group,
                         "auto.offset.reset": "earliest", "enable.auto.commit": False})
    consumer.subscribe([topic])
    seen = []
    try:
        while len(seen) < 15:
            msg = consumer.poll(1)
            if msg is not None and not msg.error():
                seen.append(int(msg.value()))
        consumer.commit(asynchronous=False)
        old = partition_for(group, 50) % 3
        cluster.move_leader("__consumer_offsets", partition_for(group, 50), (old + 1) % 3)
        while len(seen) < 30:
            msg = consumer.poll(1)
            if msg is not None and not msg.error():
                seen.append(int(msg.value()))
        consumer.commit(asynchronous=False)  # goes to the new coordinator
        committed = consumer.committed([TopicPartition(topic, p) for p in range(3)], 10)
        assert [tp.offset for tp in committed] == [10, 10, 10]
    finally:
        consumer.close()
    assert sorted(seen) == list(range(30))
