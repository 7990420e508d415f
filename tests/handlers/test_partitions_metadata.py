"""How partitions are described in Metadata and DescribeTopicPartitions: the whole-topic fast path
(one node, every partition led by it) answers exactly what describing each partition answers, and
a stopped node or several nodes still take the per-partition path."""
import pytest

from kafkaemu.broker import Broker
from kafkaemu.handlers.topic_views import partition_metadata, partitions_metadata
from kafkaemu.protocol.api_keys import ApiKey
from kafkaemu.protocol.errors import ErrorCode
from tests.conftest import new_broker, wire_call



def _broker(nodes: int) -> Broker:
    b = new_broker(nodes=nodes)
    b.topics.create("orders", 5, {})
    return b


@pytest.mark.parametrize("nodes, stopped", [(1, False), (1, True), (3, False), (3, True)])
def test_a_whole_topic_is_described_as_each_of_its_partitions(nodes, stopped):
    b = _broker(nodes)
    if nodes > 1:
        b.placement.move_leader("orders", 2, b.placement.node_ids[-1])
    if stopped:
        b.placement.stopped_nodes.add(b.placement.node_ids[0])
    partitions = b.store.get("orders").partitions
    assert partitions_metadata(b.placement, partitions) == [partition_metadata(b.placement, p) for p in partitions]


def test_a_stopped_single_node_leaves_every_partition_offline():
    b = _broker(1)
    b.placement.stopped_nodes.add(b.placement.node_ids[0])
    described = partitions_metadata(b.placement, b.store.get("orders").partitions)
    assert {d["error_code"] for d in described} == {ErrorCode.LEADER_NOT_AVAILABLE}


def test_full_metadata_describes_every_partition_with_its_leader_epoch():
    b = _broker(1)
    b.store.get("orders").partitions[3].bump_leader_epoch()
    resp = wire_call(b, ApiKey.METADATA, 12, {"topics": None, "allow_auto_topic_creation": False,
                            "include_topic_authorized_operations": False})
    (orders,) = [t for t in resp.topics if t.name == "orders"]
    assert [(p.partition_index, p.leader_id, p.leader_epoch, p.replica_nodes, p.isr_nodes, p.offline_replicas)
            for p in orders.partitions] == [(i, 0, 1 if i == 3 else 0, [0], [0], []) for i in range(5)]


def test_describe_topic_partitions_gives_empty_elr_lists_on_every_partition():
    b = _broker(1)
    resp = wire_call(b, ApiKey.DESCRIBE_TOPIC_PARTITIONS, 0,
                     {"topics": [{"name": "orders"}], "response_partition_limit": 2000, "cursor": None})
    (orders,) = resp.topics
    assert [(p.partition_index, p.eligible_leader_replicas, p.last_known_elr, p.replica_nodes)
            for p in orders.partitions] == [(i, [], [], [0]) for i in range(5)]
