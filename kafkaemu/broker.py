"""The broker: every piece of state handlers may touch. Pure: time arrives as ``now_ms``."""
from __future__ import annotations

import dataclasses
import zlib

import structlog

from .config import BrokerConfig
from .control.intercept import RequestInterceptor
from .core.coordinator import CoordinatorSettings, GroupCoordinator
from .core.settings import TransactionSettings
from .core.transactions.context import WriteMarkers
from .core.transactions.coordinator import TransactionCoordinator
from .storage import transaction_state_topic
from .storage.offsets_topic import log_sink, prepare_offsets_topic, read_entries
from .core.timers import Timers
from .faults import Faults
from .handlers.registry import DEFERRED, NO_RESPONSE, RequestContext
from .protocol.errors import ErrorCode
from .storage.record_batch import InvalidBatch
from .storage.data_dir import DataDir
from .storage.log_store import OFFSETS_TOPIC, LogStore, Topic
from .core.transactions.requests import AddPartitions
from .core.transactions.verification import verification_error

log = structlog.get_logger("kafkaemu.broker")
NO_LEADER = -1


class Broker:
    def __init__(self, config: BrokerConfig, now_ms: int) -> None:
        self.config = config
        self.node_id = config.node_id
        self.cluster_id = config.cluster_id
        self.store = LogStore(config.log_retention_check_interval_ms, config.log_cleaner_backoff_ms,
                              config.max_uncompressed_batch_bytes, config.topic_defaults)
        if config.data_dir:
            DataDir(config.data_dir, config.data_dir_tail_cache_bytes).attach(self.store)  # loads what a previous run stored
        self.store.tick(now_ms)  # starts the retention schedule
        self.now_ms = now_ms
        # node id -> (advertised host, port); the server fills in the bound ports.
        self.node_ids = list(range(config.node_id, config.node_id + max(1, config.nodes)))
        self.listeners: dict[int, tuple[str, int]] = {
            n: (config.advertised, config.port + i if config.port else 0) for i, n in enumerate(self.node_ids)}
        self._moved_leaders: dict[tuple[str, int], int] = {}
        self.stopped_nodes: set[int] = set()   # nodes whose listener the control API stopped
        # KIP-890 part 1: (transactional id | None, producer id, epoch, topic, partition) -> error
        # code or 0, asked before a transactional batch starts a transaction on a partition; the
        # transaction coordinator installs it (None: accept)
        self.txn_partition_verifier = None
        self.faults = Faults()
        self.timers = Timers()  # broker-level timers (delayed fault replies)
        self.interceptor = RequestInterceptor(self)  # faults, request log, API version caps
        # __consumer_offsets exists from the start, so no lookup can create it as an ordinary topic;
        # groups are placed by the partition count it has (as Kafka, after a setting change too).
        prepare_offsets_topic(self.store, config.offsets_topic_num_partitions, f"data directory {config.data_dir}")
        self.coordinator = self.new_coordinator(now_ms, load=bool(config.data_dir))
        self._start_transaction_coordinator(config, now_ms)

    def new_coordinator(self, now_ms: int, load: bool = True) -> GroupCoordinator:
        """A group coordinator writing to __consumer_offsets; ``load``: with the groups and offsets
        its records hold (a previous run's, or a restored snapshot's)."""
        offsets_partitions = len(self.store.get(OFFSETS_TOPIC).partitions)
        settings = dataclasses.replace(CoordinatorSettings.from_config(self.config),
                                       offsets_topic_num_partitions=offsets_partitions)
        coordinator = GroupCoordinator(settings, log_sink(self.store, offsets_partitions), now_ms)
        if load:
            coordinator.load(read_entries(self.store), now_ms)
        return coordinator

    # -- requests --------------------------------------------------------------------------
    def observe_time(self, now_ms: int) -> None:
        """A connection received bytes at ``now_ms``: the broker's clock never goes back."""
        if now_ms > self.now_ms:
            self.now_ms = now_ms

    def handle_request(self, conn, api, header, body, respond, now_ms: int):
        """Handle one decoded request from ``conn``: fault rules, the request log and version caps
        first (``interceptor``, which may wrap ``respond``), then the API's handler. The answer goes
        to ``respond`` (now or later); returns NO_RESPONSE when there is none to send (acks=0), else
        DEFERRED. A black-holed request is never answered."""
        if now_ms > self.now_ms:
            self.now_ms = now_ms
        interceptor = self.interceptor
        if not interceptor.idle:
            respond = interceptor.intercept(conn, api.api_key, header.request_api_version, header.correlation_id,
                                            header.client_id, body, respond, now_ms)
            if respond is None:
                return DEFERRED
        ctx = RequestContext(self, api.api_key, header.request_api_version, header.correlation_id, header.client_id,
                             conn.client_host, conn.connection_id, now_ms, conn.node_id, respond)
        result = api.func(ctx, body)
        if result is NO_RESPONSE or result is DEFERRED:
            return result
        respond(result)
        return DEFERRED

    def use_real_time_for_fetch_waits(self, call_later) -> None:
        """Under a manual clock, clients still time their long polls in real time: ``call_later(s, fn)``
        (the IO layer's timer) ends each parked Fetch after its max_wait_ms of real time, or it
        would hold back its connection until the test advanced the clock."""
        fetches = self.store.fetches
        fetches.on_park = lambda waiter, ms: call_later(ms / 1000, fetches.complete, waiter)

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
    def close(self) -> None:
        """A clean shutdown of the data directory (if any); the broker serves no more requests."""
        if self.store.persistence is not None:
            self.store.persistence.close()
            self.store.persistence = None

    def tick(self, now_ms: int) -> None:
        """Fire every timer due at ``now_ms`` (session expiry, long-poll timeouts, ...)."""
        self.now_ms = now_ms
        # one subsystem's failure is logged and does not stop the others' timers
        for subsystem, tick in (("storage", self.store.tick), ("groups", self.coordinator.tick),
                                ("transactions", self.txn_coordinator.tick), ("broker", self.timers.poll)):
            try:
                tick(now_ms)
            except Exception:
                log.exception("tick_failed", subsystem=subsystem)

    def next_deadline_ms(self) -> int | None:
        """The earliest time ``tick`` has work to do, or None."""
        deadlines = [d for d in (self.store.next_deadline_ms(), self.coordinator.next_deadline_ms(),
                                 self.txn_coordinator.next_deadline_ms(), self.timers.next_deadline())
                     if d is not None]
        return min(deadlines, default=None)

    # -- transactions: the coordinator -------------------------------------------------------
    def _start_transaction_coordinator(self, config: BrokerConfig, now_ms: int) -> None:
        """__transaction_state exists from the start as an internal topic, as __consumer_offsets;
        transactional ids are placed by its partition count. With a data directory its records are
        replayed (completing transactions caught mid-commit) and producer ids continue above every
        id the logs know."""
        transaction_state_topic.prepare_transaction_state_topic(self.store, config.transaction_state_log_num_partitions)
        self.txn_coordinator = self.new_transaction_coordinator(now_ms, load=bool(config.data_dir))
        if self.txn_coordinator.settings.partition_verification_enable:
            self.txn_partition_verifier = self._verify_txn_partition

    def new_transaction_coordinator(self, now_ms: int, load: bool = True) -> TransactionCoordinator:
        """A transaction coordinator writing to __transaction_state; ``load``: with the transactions
        its records hold (a previous run's, or a restored snapshot's)."""
        txn_topic = self.store.get(transaction_state_topic.TRANSACTION_STATE_TOPIC)
        settings = dataclasses.replace(TransactionSettings.from_config(self.config),
                                       state_log_num_partitions=len(txn_topic.partitions))
        coordinator = TransactionCoordinator(settings, transaction_state_topic.log_sink(self.store),
                                             self._write_markers, self.store.producer_ids.new_id, now_ms)
        if load:
            ids = self.store.producer_ids
            for topic in self.store.topics.values():
                for plog in topic.partitions:
                    ids.ensure_above(max(plog.producers.producers, default=-1))
            coordinator.load(transaction_state_topic.read_records(self.store), now_ms)
            ids.ensure_above(coordinator.max_producer_id())
        return coordinator

    def txn_coordinator_node(self, transactional_id: str) -> int:
        """The node leading the transactional id's __transaction_state partition."""
        topic = self.store.get(transaction_state_topic.TRANSACTION_STATE_TOPIC)
        return self.partition_leader(topic.partitions[self.txn_coordinator.partition_for(transactional_id)])

    def _write_markers(self, req: WriteMarkers) -> None:
        """The coordinator's marker effect: control batches to the transaction's partitions (with the
        leader epoch of its __transaction_state partition as coordinator epoch); markers in
        __consumer_offsets also complete the producer's pending offset commits."""
        topic = self.store.get(transaction_state_topic.TRANSACTION_STATE_TOPIC)
        coordinator_epoch = topic.partitions[req.txn_partition].leader_epoch
        results = self.write_txn_markers(req.producer_id, req.producer_epoch, req.commit, coordinator_epoch,
                                         list(req.partitions), req.now_ms)
        if any(t == OFFSETS_TOPIC and code == ErrorCode.NONE for (t, _), code in results.items()):
            self.coordinator.complete_transaction(req.now_ms, req.producer_id, req.commit)

    def _verify_txn_partition(self, transactional_id, producer_id: int, producer_epoch: int, topic: str,
                              partition: int) -> int:
        """KIP-890 part 1 (Broker.txn_partition_verifier): whether a transactional write to the partition
        belongs to the producer's transaction, as the coordinator answers AddPartitionsToTxn
        verify_only, with AddPartitionsToTxnManager's translation: PRODUCER_FENCED becomes
        INVALID_PRODUCER_EPOCH; TRANSACTION_ABORTABLE (not in the transaction) stays, for callers to
        turn into INVALID_TXN_STATE for clients that predate it."""
        return int(verification_error(self.txn_coordinator.verify_partitions(
            self.now_ms, AddPartitions(transactional_id or "", producer_id, producer_epoch,
                                       [(topic, partition)]))[(topic, partition)]))

    # -- transactions: test hooks ------------------------------------------------------------
    def transaction_state(self, transactional_id: str) -> dict | None:
        """A transactional id's state, producer id and epoch, partitions, hold (None when unknown)."""
        return self.txn_coordinator.state(transactional_id)

    def hold_transaction(self, transactional_id: str) -> None:
        """Withhold the transactional id's markers (and keep its transaction from timing out) until
        ``release_transaction``: EndTxn is answered, the transaction stays in PrepareCommit or
        PrepareAbort and the last stable offset of its partitions stays pinned."""
        self.txn_coordinator.hold(transactional_id)

    def release_transaction(self, transactional_id: str, now_ms: int | None = None) -> bool:
        """Write the markers withheld by ``hold_transaction``; True when a transaction completed."""
        return self.txn_coordinator.release(self.now_ms if now_ms is None else now_ms, transactional_id)

    def abort_transaction(self, transactional_id: str, now_ms: int | None = None) -> str:
        """Abort the open transaction as the coordinator does on its own (fencing the producer's
        epoch); returns the error name (NONE, INVALID_TXN_STATE when none is open)."""
        return self.txn_coordinator.abort(self.now_ms if now_ms is None else now_ms, transactional_id).name

    def time_out_transaction(self, transactional_id: str, now_ms: int | None = None) -> str:
        """Make the open transaction time out now, whatever the clock; returns the error name."""
        return self.txn_coordinator.time_out(self.now_ms if now_ms is None else now_ms, transactional_id).name

    def fence_producer(self, transactional_id: str, now_ms: int | None = None) -> dict:
        """Bump the epoch as a new producer instance would: the current one gets PRODUCER_FENCED."""
        return self.txn_coordinator.fence(self.now_ms if now_ms is None else now_ms, transactional_id)
