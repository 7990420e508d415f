"""The transaction coordinator's reach into the data path, and its test hooks.

``TransactionDataPath``: markers written into the transaction's partitions (for the coordinator's
commit/abort and for WriteTxnMarkers), and what a transactional write does before it starts a
transaction on a partition: KIP-890 part 1's check that the partition is in the transaction, or
part 2's adding it (a transactions V2 producer sends no AddPartitionsToTxn). ``TransactionHooks``:
what tests do to a transaction that a client cannot (hold its markers, abort or time it out, fence
its producer).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable

from ..logging import get_logger
from ..protocol.errors import ErrorCode
from ..storage.log_store import OFFSETS_TOPIC
from ..storage.record_batch import InvalidBatch
from ..storage.transaction_state_topic import TRANSACTION_STATE_TOPIC

if TYPE_CHECKING:
    from ..core.transactions.context import WriteMarkers
    from .context import BrokerServices

log = get_logger("kafkaemu.broker")

# (transactional id | None, producer id, epoch, topic, partition) -> error code or 0
PartitionVerifier = Callable[[str | None, int, int, str, int], int]


class TransactionDataPath:
    def __init__(self, services: "BrokerServices", clock: Callable[[], int]) -> None:
        self.services = services
        self.clock = clock
        # KIP-890 part 1: asked before a transactional batch starts a transaction on a partition;
        # installed when transaction.partition.verification.enable is on (None: accept)
        self.partition_verifier: PartitionVerifier | None = None

    def write_txn_markers(self, producer_id: int, producer_epoch: int, commit: bool, coordinator_epoch: int,
                          partitions, now_ms: int, transaction_version: int = 0) -> dict:
        """Write a commit (``commit``) or abort marker for the producer to each (topic, partition)
        of a completed transaction, as Kafka's WriteTxnMarkers; partitions that no longer exist are
        skipped. Returns {(topic, partition): ErrorCode}: NONE when written,
        UNKNOWN_TOPIC_OR_PARTITION when skipped, INVALID_PRODUCER_EPOCH or
        TRANSACTION_COORDINATOR_FENCED when the partition has seen a newer producer or coordinator
        epoch (nothing written there)."""
        store = self.services.store
        results = {}
        for topic_name, index in partitions:
            topic = store.get(topic_name)
            if topic is None or not 0 <= index < len(topic.partitions):
                results[(topic_name, index)] = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
                continue
            try:
                topic.partitions[index].append_control_batch(producer_id, producer_epoch, commit, coordinator_epoch,
                                                             now_ms, transaction_version)
                results[(topic_name, index)] = ErrorCode.NONE
            except InvalidBatch as exc:
                log.warning("txn_marker_rejected", topic=topic_name, partition=index, producer_id=producer_id,
                            error=exc.code_name, reason=str(exc))
                results[(topic_name, index)] = ErrorCode[exc.code_name]
        return results

    def write_markers(self, req: WriteMarkers) -> None:
        """The coordinator's marker effect: control batches to the transaction's partitions (with the
        leader epoch of its __transaction_state partition as coordinator epoch); markers in
        __consumer_offsets also complete the producer's pending offset commits."""
        topic = self.services.store.get(TRANSACTION_STATE_TOPIC)
        coordinator_epoch = topic.partitions[req.txn_partition].leader_epoch
        results = self.write_txn_markers(req.producer_id, req.producer_epoch, req.commit, coordinator_epoch,
                                         list(req.partitions), req.now_ms, req.transaction_version)
        if any(t == OFFSETS_TOPIC and code == ErrorCode.NONE for (t, _), code in results.items()):
            self.services.groups.complete_transaction(req.now_ms, req.producer_id, req.commit)

    def verify_partition(self, transactional_id, producer_id: int, producer_epoch: int, topic: str,
                         partition: int) -> int:
        """KIP-890 part 1 (the ``partition_verifier``): whether a transactional write to the partition
        belongs to the producer's transaction, as the coordinator answers AddPartitionsToTxn
        verify_only, with AddPartitionsToTxnManager's translation: PRODUCER_FENCED becomes
        INVALID_PRODUCER_EPOCH; TRANSACTION_ABORTABLE (not in the transaction) stays, for callers to
        turn into INVALID_TXN_STATE for clients that predate it."""
        from ..core.transactions.requests import AddPartitions   # with the coordinator, on first use
        from ..core.transactions.verification import verification_error
        return int(verification_error(self.services.txns.verify_partitions(
            self.clock(), AddPartitions(transactional_id or "", producer_id, producer_epoch,
                                        [(topic, partition)]))[(topic, partition)]))


    def partition_check(self, adds: bool) -> PartitionVerifier | None:
        """What a transactional write asks before it starts a transaction on a partition: a V2
        producer's write (Produce v12+, TxnOffsetCommit v5+) adds the partition, whatever
        transaction.partition.verification.enable says (ReplicaManager); a V1 producer's is
        verified when verification is on; None: nothing to ask."""
        return self.add_partition if adds else self.partition_verifier

    def add_partition(self, transactional_id, producer_id: int, producer_epoch: int, topic: str,
                      partition: int) -> int:
        """KIP-890 part 2: add the partition to the producer's transaction (starting one if none is
        open), as AddPartitionsToTxnManager asks the coordinator; PRODUCER_FENCED reads as
        INVALID_PRODUCER_EPOCH."""
        from ..core.transactions.requests import AddPartitions
        from ..core.transactions.verification import verification_error
        return int(verification_error(self.services.txns.add_partitions(
            self.clock(), AddPartitions(transactional_id or "", producer_id, producer_epoch, [(topic, partition)],
                                        transaction_version=2))))


class TransactionHooks:
    """Test controls over transactions; times default to the broker's clock."""

    def __init__(self, services: "BrokerServices", clock: Callable[[], int]) -> None:
        self.services = services
        self.clock = clock

    def _now(self, now_ms: int | None) -> int:
        return self.clock() if now_ms is None else now_ms

    def state(self, transactional_id: str) -> dict | None:
        """A transactional id's state, producer id and epoch, partitions, hold (None when unknown)."""
        return self.services.txns.state(transactional_id)

    def hold(self, transactional_id: str) -> None:
        """Withhold the transactional id's markers (and keep its transaction from timing out) until
        ``release``: EndTxn is answered, the transaction stays in PrepareCommit or PrepareAbort and
        the last stable offset of its partitions stays pinned."""
        self.services.txns.hold(transactional_id)

    def release(self, transactional_id: str, now_ms: int | None = None) -> bool:
        """Write the markers withheld by ``hold``; True when a transaction completed."""
        return self.services.txns.release(self._now(now_ms), transactional_id)

    def abort(self, transactional_id: str, now_ms: int | None = None) -> str:
        """Abort the open transaction as the coordinator does on its own (fencing the producer's
        epoch); returns the error name (NONE, INVALID_TXN_STATE when none is open)."""
        return self.services.txns.abort(self._now(now_ms), transactional_id).name

    def time_out(self, transactional_id: str, now_ms: int | None = None) -> str:
        """Make the open transaction time out now, whatever the clock; returns the error name."""
        return self.services.txns.time_out(self._now(now_ms), transactional_id).name

    def fence(self, transactional_id: str, now_ms: int | None = None) -> dict:
        """Bump the epoch as a new producer instance would: the current one gets PRODUCER_FENCED."""
        return self.services.txns.fence(self._now(now_ms), transactional_id)
