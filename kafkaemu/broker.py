"""The broker: every piece of state handlers may touch. Pure: time arrives as ``now_ms``."""
from __future__ import annotations

import dataclasses
import zlib

import structlog

from .config import BrokerConfig
from .control.intercept import RequestInterceptor
from .core.coordinator import CoordinatorSettings, GroupCoordinator
from .storage.offsets_topic import log_sink, prepare_offsets_topic, read_records
from .core.timers import Timers
from .faults import Faults
from .storage.data_dir import DataDir
from .storage.log_store import OFFSETS_TOPIC, LogStore, Topic

log = structlog.get_logger("kafkaemu.broker")
NO_LEADER = -1


class Broker:
    def __init__(self, config: BrokerConfig, now_ms: int) -> None:
        self.config = config
        self.node_id = config.node_id
        self.cluster_id = config.cluster_id
        self.store = LogStore(config.log_retention_check_interval_ms, config.log_cleaner_backoff_ms,
                              config.max_uncompressed_batch_bytes)
        if config.data_dir:
            DataDir(config.data_dir).attach(self.store)  # loads what a previous run stored
        self.store.tick(now_ms)  # starts the retention schedule
        self.now_ms = now_ms
        # node id -> (advertised host, port); the server fills in the bound ports.
        self.node_ids = list(range(config.node_id, config.node_id + max(1, config.nodes)))
        self.listeners: dict[int, tuple[str, int]] = {
            n: (config.advertised, config.port + i if config.port else 0) for i, n in enumerate(self.node_ids)}
        self._moved_leaders: dict[tuple[str, int], int] = {}
        self.stopped_nodes: set[int] = set()   # nodes whose listener the control API stopped
        self.faults = Faults()
        self.timers = Timers()  # broker-level timers (delayed fault replies)
        self.interceptor = RequestInterceptor(self)  # faults, request log, API version caps
        # __consumer_offsets exists from the start, so no lookup can create it as an ordinary topic;
        # groups are placed by the partition count it has (as Kafka, after a setting change too).
        prepare_offsets_topic(self.store, config.offsets_topic_num_partitions, f"data directory {config.data_dir}")
        self.coordinator = self.new_coordinator(now_ms, load=bool(config.data_dir))

    def new_coordinator(self, now_ms: int, load: bool = True) -> GroupCoordinator:
        """A group coordinator writing to __consumer_offsets; ``load``: with the groups and offsets
        its records hold (a previous run's, or a restored snapshot's)."""
        offsets_partitions = len(self.store.get(OFFSETS_TOPIC).partitions)
        settings = dataclasses.replace(CoordinatorSettings.from_config(self.config),
                                       offsets_topic_num_partitions=offsets_partitions)
        coordinator = GroupCoordinator(settings, log_sink(self.store, offsets_partitions), now_ms)
        if load:
            coordinator.load(read_records(self.store), now_ms)
        return coordinator

    # -- topics --------------------------------------------------------------------------
    def create_topic(self, name: str, num_partitions: int, configs: dict[str, str]) -> Topic:
        topic = self.store.create_topic(name, num_partitions, configs)
        log.info("topic_created", topic=name, partitions=num_partitions)
        return topic

    def delete_topic(self, name: str) -> Topic:
        topic = self.store.delete_topic(name)
        self._moved_leaders = {k: v for k, v in self._moved_leaders.items() if k[0] != name}
        self.coordinator.on_topic_deleted(self.now_ms, name)
        log.info("topic_deleted", topic=name)
        return topic

    # -- leadership (several nodes) -------------------------------------------------------
    def partition_leader(self, partition) -> int:
        """The node leading a partition, or -1 (NO_LEADER) while that node is stopped and the
        partition is offline (see ``placed_leader``)."""
        leader = self.placed_leader(partition)
        return NO_LEADER if leader in self.stopped_nodes else leader

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

    def move_leader(self, topic_name: str, index: int, node_id: int) -> int:
        """Make ``node_id`` lead the partition (a leader election); returns the new leader epoch.
        Moving a ``__consumer_offsets`` partition moves the coordinator of its groups."""
        if node_id not in self.listeners:
            raise ValueError(f"no node {node_id}")
        partition = self.store.get(topic_name).partitions[index]
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

    # -- time ----------------------------------------------------------------------------
    def tick(self, now_ms: int) -> None:
        """Fire every timer due at ``now_ms`` (session expiry, long-poll timeouts, ...)."""
        self.now_ms = now_ms
        self.store.tick(now_ms)
        self.coordinator.tick(now_ms)
        self.timers.poll(now_ms)

    def next_deadline_ms(self) -> int | None:
        """The earliest time ``tick`` has work to do, or None."""
        deadlines = [d for d in (self.store.next_deadline_ms(), self.coordinator.next_deadline_ms(),
                                 self.timers.next_deadline()) if d is not None]
        return min(deadlines, default=None)
