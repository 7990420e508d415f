"""The broker: every piece of state handlers may touch. Pure: time arrives as ``now_ms``."""
from __future__ import annotations

import dataclasses
import zlib

import structlog

from .config import BrokerConfig
from .core.coordinator import CoordinatorSettings, GroupCoordinator
from .storage.offsets_topic import log_sink, prepare_offsets_topic, read_records
from .core.timers import Timers
from .faults import Faults
from .protocol.errors import ErrorCode
from .storage.record_batch import InvalidBatch
from .storage.data_dir import DataDir
from .storage.log_store import LogStore, Topic

log = structlog.get_logger("kafkaemu.broker")


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
        # KIP-890 part 1: (transactional id | None, producer id, epoch, topic, partition) -> error
        # code or 0, asked before a transactional batch starts a transaction on a partition; the
        # transaction coordinator installs it (None: accept)
        self.txn_partition_verifier = None
        self.faults = Faults()
        self.timers = Timers()  # broker-level timers (delayed fault replies)
        # __consumer_offsets exists from the start, so no lookup can create it as an ordinary topic;
        # groups are placed by the partition count it has (as Kafka, after a setting change too).
        offsets_partitions = len(prepare_offsets_topic(
            self.store, config.offsets_topic_num_partitions, f"data directory {config.data_dir}").partitions)
        settings = dataclasses.replace(CoordinatorSettings.from_config(config),
                                       offsets_topic_num_partitions=offsets_partitions)
        self.coordinator = GroupCoordinator(settings, log_sink(self.store, offsets_partitions), now_ms)
        if config.data_dir:
            self.coordinator.load(read_records(self.store), now_ms)  # groups and offsets of a previous run

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

    # -- transactions: the data path ------------------------------------------------------
    def write_txn_markers(self, producer_id: int, producer_epoch: int, commit: bool, coordinator_epoch: int,
                          partitions, now_ms: int) -> dict:
        """Write a commit (``commit``) or abort marker for the producer to each (topic, partition)
        of a completed transaction, as Kafka's WriteTxnMarkers; partitions that no longer exist are
        skipped. Returns {(topic, partition): ErrorCode}: NONE when written,
        UNKNOWN_TOPIC_OR_PARTITION when skipped, INVALID_PRODUCER_EPOCH or
        TRANSACTION_COORDINATOR_FENCED when the partition has seen a newer producer or coordinator
        epoch (nothing written there)."""
        results = {}
        for topic_name, index in partitions:
            topic = self.store.get(topic_name)
            if topic is None or not 0 <= index < len(topic.partitions):
                results[(topic_name, index)] = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
                continue
            try:
                topic.partitions[index].append_control_batch(producer_id, producer_epoch, commit, coordinator_epoch,
                                                             now_ms)
                results[(topic_name, index)] = ErrorCode.NONE
            except InvalidBatch as exc:
                log.warning("txn_marker_rejected", topic=topic_name, partition=index, producer_id=producer_id,
                            error=exc.code_name, reason=str(exc))
                results[(topic_name, index)] = ErrorCode[exc.code_name]
        return results

    # -- leadership (several nodes) -------------------------------------------------------
    def partition_leader(self, partition) -> int:
        """The node leading a partition: spread round robin over the nodes, starting at a node
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
