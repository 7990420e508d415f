"""Placement: the one answer to "which node leads this partition, coordinates this group, this
transactional id?" for the nodes one broker emulates, and the leadership the control API moves.

Partitions are spread round robin over the nodes from a node chosen by the topic's name
(``__consumer_offsets`` and ``__transaction_state`` partition p on node p % n). A group is
coordinated by the leader of its ``__consumer_offsets`` partition and a transactional id by the
leader of its ``__transaction_state`` partition, each found by Kafka's hash
(``core/placement.py``) over the partition count the coordinator was built with.

A partition's replicas are its leader alone until its creation (a replication factor above 1, a
manual assignment) or a reassignment (AlterPartitionReassignments) gives it a list; a reassignment completes at once (the partition's one log serves every replica),
its first replica leading when the old leader is not among them.
"""
from __future__ import annotations

import zlib

from ..logging import get_logger
from ..core.placement import partition_for
from ..storage.log_store import OFFSETS_TOPIC, LogStore
from ..storage.transaction_state_topic import TRANSACTION_STATE_TOPIC

log = get_logger("kafkaemu.broker")
NO_LEADER = -1


class Placement:
    def __init__(self, node_ids: list[int], listeners: dict[int, tuple[str, int]], store: LogStore) -> None:
        self.node_ids = node_ids
        # node id -> (advertised host, port); the server fills in the bound ports.
        self.listeners = listeners
        self.stopped_nodes: set[int] = set()   # nodes whose listener the control API stopped
        self.unregistered: set[int] = set()    # brokers UnregisterBroker removed until they restart
        self.store = store
        self.offsets_partitions = 1   # set as the coordinators are built (Broker.new_coordinator)
        self.txn_partitions = 1
        self._moved_leaders: dict[tuple[str, int], int] = {}
        self._replicas: dict[tuple[str, int], list[int]] = {}   # reassigned partitions' replica lists

    # -- partitions ----------------------------------------------------------------------
    def partition_leader(self, partition) -> int:
        """The node leading a partition, or -1 (NO_LEADER) while that node is stopped or
        unregistered and the partition is offline (see ``placed_leader``)."""
        leader = self.placed_leader(partition)
        return NO_LEADER if leader in self.stopped_nodes or leader in self.unregistered else leader

    def placed_leader(self, partition) -> int:
        """The node a partition belongs to: spread round robin over the nodes, starting at a node
        chosen by the topic name (``__consumer_offsets`` partition p on node p % n), unless moved."""
        nodes = self.node_ids
        if len(nodes) == 1:
            return nodes[0]
        moved = self._moved_leaders.get((partition.topic.name, partition.index))
        if moved is not None:
            return moved
        start = 0 if partition.topic.internal else zlib.crc32(partition.topic.name.encode())
        return nodes[(start + partition.index) % len(nodes)]

    def replicas(self, partition) -> list[int]:
        """The partition's replica nodes, the preferred (first) one first."""
        assigned = self._replicas.get((partition.topic.name, partition.index))
        return list(assigned) if assigned else [self.placed_leader(partition)]

    def assign_replicas(self, topic_name: str, index: int, replicas: list[int]) -> None:
        """A new partition's replicas (CreateTopics with a replication factor or an assignment):
        its first replica leads, as Kafka's controller elects a new partition's preferred replica."""
        partition = self.store.get(topic_name).partitions[index]
        self._replicas[(topic_name, index)] = list(replicas)
        if self.placed_leader(partition) != replicas[0]:
            self._moved_leaders[(topic_name, index)] = replicas[0]

    def spread_replicas(self, partition, count: int) -> list[int]:
        """``count`` replicas for a partition: its placed leader, then the nodes after it."""
        nodes = self.node_ids
        start = nodes.index(self.placed_leader(partition))
        return [nodes[(start + i) % len(nodes)] for i in range(min(count, len(nodes)))]

    def reassign(self, topic_name: str, index: int, replicas: list[int]) -> None:
        """Give the partition these replicas (a completed reassignment); the first one leads
        when the current leader is not among them."""
        partition = self.store.get(topic_name).partitions[index]
        leader = self.placed_leader(partition)
        self._replicas[(topic_name, index)] = list(replicas)
        log.info("partition_reassigned", topic=topic_name, partition=index, replicas=list(replicas))
        if leader not in replicas:
            self.move_leader(topic_name, index, replicas[0])

    def move_leader(self, topic_name: str, index: int, node_id: int) -> int:
        """Make ``node_id`` lead the partition (a leader election); returns the new leader epoch.
        Moving a ``__consumer_offsets`` partition moves the coordinator of its groups. A leader
        moved off a reassigned partition's replicas takes the old leader's place among them."""
        if node_id not in self.listeners:
            raise ValueError(f"no node {node_id}")
        partition = self.store.get(topic_name).partitions[index]
        assigned = self._replicas.get((topic_name, index))
        if assigned and node_id not in assigned:
            old = self.placed_leader(partition)
            self._replicas[(topic_name, index)] = [node_id if r == old else r for r in assigned]
        self._moved_leaders[(topic_name, index)] = node_id
        epoch = partition.bump_leader_epoch()
        log.info("leader_moved", topic=topic_name, partition=index, node_id=node_id, leader_epoch=epoch)
        return epoch

    def clear_moved_leaders(self) -> None:
        """Every partition back on the node it was placed on (a control reset)."""
        for topic_name, index in list(self._moved_leaders):
            topic = self.store.get(topic_name)
            if topic is not None and index < len(topic.partitions):
                topic.partitions[index].bump_leader_epoch()
        self._moved_leaders.clear()
        self._replicas.clear()

    def forget_topic(self, name: str) -> None:
        """A deleted topic's moved leaders are forgotten (a new topic of that name starts placed)."""
        self._moved_leaders = {k: v for k, v in self._moved_leaders.items() if k[0] != name}
        self._replicas = {k: v for k, v in self._replicas.items() if k[0] != name}

    # -- coordinators --------------------------------------------------------------------
    def group_partition(self, group_id: str) -> int:
        """The ``__consumer_offsets`` partition holding a group's records."""
        return partition_for(group_id, self.offsets_partitions)

    def txn_partition(self, transactional_id: str) -> int:
        """The ``__transaction_state`` partition holding a transactional id's records."""
        return partition_for(transactional_id, self.txn_partitions)

    def group_coordinator(self, group_id: str) -> int:
        """The node leading the group's __consumer_offsets partition (-1 while it is offline)."""
        topic = self.store.get(OFFSETS_TOPIC)
        index = partition_for(group_id, self.offsets_partitions)   # group_partition, inline: every group request
        if topic is None or index >= len(topic.partitions):
            return self.node_ids[0]
        return self.partition_leader(topic.partitions[index])

    def txn_coordinator(self, transactional_id: str) -> int:
        """The node leading the transactional id's __transaction_state partition (-1 while offline)."""
        topic = self.store.get(TRANSACTION_STATE_TOPIC)
        return self.partition_leader(topic.partitions[self.txn_partition(transactional_id)])

    # -- nodes ---------------------------------------------------------------------------
    def live_nodes(self) -> list[tuple[int, str, int]]:
        """(node id, host, port) of every registered node whose listener runs, by id."""
        return [(n, host, port) for n, (host, port) in sorted(self.listeners.items())
                if n not in self.stopped_nodes and n not in self.unregistered]

    def absent(self, node_id: int) -> bool:
        """Whether a node is out of the cluster's metadata as a live broker: stopped or unregistered."""
        return node_id in self.stopped_nodes or node_id in self.unregistered

    def node_at(self, host: str, port: int) -> int | None:
        """The running node listening at (host, port), None when none does (every node shares the
        host, so a loopback name answers for the advertised one)."""
        for n, (h, p) in self.listeners.items():
            if p == port and n not in self.stopped_nodes and (h == host or _loopback(h) == _loopback(host)):
                return n
        return None

    def unregister(self, node_id: int) -> list[tuple[str, int, int]]:
        """UnregisterBroker (ReplicationControlManager.handleBrokerUnregistered): the broker leaves
        the metadata and every ISR; each partition it led goes to another live replica, or has no
        leader until the broker registers again. Returns the (topic, partition, new leader or -1)."""
        changed = []
        led = [p for t in self.store.topics.values() for p in t.partitions if self.partition_leader(p) == node_id]
        self.unregistered.add(node_id)
        for p in led:
            others = [r for r in self.replicas(p) if r != node_id and not self.absent(r)]
            if others:
                self.move_leader(p.topic.name, p.index, others[0])
            else:
                p.bump_leader_epoch()
            changed.append((p.topic.name, p.index, others[0] if others else NO_LEADER))
        log.info("broker_unregistered", node_id=node_id, partitions=len(changed))
        return changed

    def register(self, node_id: int) -> None:
        """An unregistered broker registers again (it restarted): the partitions left without a
        leader elect it again."""
        if node_id not in self.unregistered:
            return
        self.unregistered.discard(node_id)
        if node_id in self.stopped_nodes:
            return
        for t in self.store.topics.values():
            for p in t.partitions:
                if self.placed_leader(p) == node_id:
                    p.bump_leader_epoch()
        log.info("broker_registered", node_id=node_id)


def _loopback(host: str) -> str:
    return "localhost" if host in ("localhost", "127.0.0.1", "::1", "") else host
