"""Placement, the one owner of "which node": partitions spread over the nodes, groups and
transactional ids coordinated by the leader of their internal-topic partition (Kafka's hash),
leaders moved and nodes stopped by the control API, a deleted topic's moves forgotten."""
import pytest

from kafkaemu.broker import NO_LEADER, Broker
from kafkaemu.core.placement import partition_for
from tests.conftest import new_broker


def cluster(**settings) -> Broker:
    return new_broker(nodes=3, **settings)


def test_one_node_leads_everything():
    b = new_broker()
    topic = b.topics.create("t", 4, {})
    assert {b.placement.partition_leader(p) for p in topic.partitions} == {0}
    assert b.placement.group_coordinator("g") == b.placement.txn_coordinator("tx") == 0


def test_internal_partitions_are_on_node_p_mod_n_and_coordinators_follow_kafkas_hash():
    b = cluster()
    offsets = b.store.get("__consumer_offsets")
    assert [b.placement.partition_leader(p) for p in offsets.partitions[:6]] == [0, 1, 2, 0, 1, 2]
    for key in ("g", "orders-consumers", "", "tx-1"):
        assert b.placement.group_partition(key) == partition_for(key, 50) == b.coordinator.partition_for(key)
        assert b.placement.group_coordinator(key) == partition_for(key, 50) % 3
        assert b.placement.txn_partition(key) == b.txn_coordinator.partition_for(key)
        assert b.placement.txn_coordinator(key) == partition_for(key, 50) % 3


def test_the_partition_counts_are_those_the_coordinators_were_built_with():
    b = cluster(offsets_topic_num_partitions=7, transaction_state_log_num_partitions=5)
    assert (b.placement.offsets_partitions, b.placement.txn_partitions) == (7, 5)
    assert b.placement.group_partition("g") == partition_for("g", 7)
    assert b.placement.txn_partition("g") == partition_for("g", 5)


def test_a_moved_leader_moves_the_coordinator_and_bumps_the_epoch():
    b = cluster()
    index = b.placement.group_partition("g")
    old = b.placement.group_coordinator("g")
    new = (old + 1) % 3
    partition = b.store.get("__consumer_offsets").partitions[index]
    epoch = partition.leader_epoch
    assert b.placement.move_leader("__consumer_offsets", index, new) == epoch + 1
    assert b.placement.group_coordinator("g") == new
    b.placement.clear_moved_leaders()
    assert b.placement.group_coordinator("g") == old and partition.leader_epoch == epoch + 2


def test_a_stopped_nodes_partitions_have_no_leader():
    b = cluster()
    topic = b.topics.create("t", 3, {})
    leaders = [b.placement.partition_leader(p) for p in topic.partitions]
    b.placement.stopped_nodes.add(leaders[0])
    assert b.placement.partition_leader(topic.partitions[0]) == NO_LEADER
    assert b.placement.placed_leader(topic.partitions[0]) == leaders[0]
    assert [n for n, _, _ in b.placement.live_nodes()] == sorted({0, 1, 2} - {leaders[0]})


def test_a_deleted_topic_forgets_its_moved_leaders():
    b = cluster()
    topic = b.topics.create("t", 1, {})
    placed = b.placement.partition_leader(topic.partitions[0])
    b.placement.move_leader("t", 0, (placed + 1) % 3)
    b.topics.delete("t")
    again = b.topics.create("t", 1, {})
    assert b.placement.partition_leader(again.partitions[0]) == placed


def test_moving_to_an_unknown_node_is_refused():
    b = cluster()
    with pytest.raises(ValueError, match="no node 7"):
        b.placement.move_leader("__consumer_offsets", 0, 7)
