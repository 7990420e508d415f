"""Producer state of one partition, following Kafka 3.9's ProducerStateManager, ProducerStateEntry
and ProducerAppendInfo.

Idempotence: for each producer id, its epoch and the metadata of its last five batches. A batch
whose sequence range matches one of those (same epoch) is a duplicate, answered with its
original offsets and not appended again. Otherwise the first sequence must follow the last one
(wrapping at 2**31-1 to 0); a new epoch must start at sequence 0; an older epoch is
INVALID_PRODUCER_EPOCH. A producer the partition does not know (new, or its batches were all
removed by retention/DeleteRecords) may start at any sequence, as in Kafka since KIP-360 (so
UNKNOWN_PRODUCER_ID is never returned).

Transactions: a transactional batch from a producer with no open transaction on the partition
starts one at its base offset; later transactional batches continue it; a non-transactional
batch while one is open is INVALID_TXN_STATE. A commit/abort marker (control batch) completes
it: an older producer epoch is INVALID_PRODUCER_EPOCH, an older coordinator epoch than the
partition has seen TRANSACTION_COORDINATOR_FENCED; a marker with a newer epoch fences the older
one (its batch cache is cleared, as Kafka's maybeUpdateProducerEpoch). Open transactions are
kept in start order, so the first unstable offset is the first of them. Aborted transactions are
indexed as Kafka's transaction index holds them (producer id, first offset, marker offset, and
the last stable offset right after the abort), for Fetch's ``aborted_transactions``.
"""
from __future__ import annotations

from bisect import bisect_left
from collections import deque
from dataclasses import dataclass, field

from .record_batch import TRANSACTIONAL_BIT, BatchHeader, InvalidBatch

MAX_CACHED_BATCHES = 5


@dataclass(slots=True)
class BatchMetadata:
    """A producer's appended batch: its sequence numbers and offsets (Kafka's BatchMetadata)."""
    first_seq: int
    last_seq: int
    first_offset: int
    last_offset: int
    timestamp: int


@dataclass(slots=True)
class AbortedTxn:
    """One entry of Kafka's transaction index (AbortedTxn)."""
    producer_id: int
    first_offset: int
    last_offset: int           # the abort marker's offset
    last_stable_offset: int    # the partition's LSO once this transaction completed


@dataclass
class ProducerEntry:
    """A producer id's state on one partition: its epoch, its last batches (duplicate detection)
    and its open transaction."""
    epoch: int
    batches: deque = field(default_factory=lambda: deque(maxlen=MAX_CACHED_BATCHES))
    coordinator_epoch: int = -1
    last_timestamp: int = -1
    txn_first_offset: int = -1     # the open transaction's first offset on this partition, -1: none
    last_offset: int = -1          # the last offset this producer wrote (data or marker)

    @property
    def last_seq(self) -> int:
        return self.batches[-1].last_seq if self.batches else -1


def _in_sequence(last_seq: int, next_seq: int) -> bool:
    return next_seq == last_seq + 1 or (next_seq == 0 and last_seq == 0x7FFFFFFF)


class ProducerStateTable:
    def __init__(self) -> None:
        self.producers: dict[int, ProducerEntry] = {}
        self.ongoing: dict[int, int] = {}      # producer id -> first offset, in start (= offset) order
        self.aborted: list[AbortedTxn] = []    # in marker order
        self._aborted_lasts: list[int] = []    # their marker offsets, for bisecting

    # -- data batches ----------------------------------------------------------------------
    def find_duplicate(self, h: BatchHeader) -> BatchMetadata | None:
        entry = self.producers.get(h.producer_id)
        if entry is None or entry.epoch != h.producer_epoch:
            return None
        first, last = h.base_sequence, h.last_sequence
        for meta in entry.batches:
            if meta.first_seq == first and meta.last_seq == last:
                return meta
        return None

    def check(self, h: BatchHeader) -> None:
        """Raise InvalidBatch with Kafka's error when a client's batch may not be appended."""
        if h.base_sequence < 0:
            raise InvalidBatch("INVALID_RECORD", f"invalid sequence number {h.base_sequence} for producer {h.producer_id}")
        entry = self.producers.get(h.producer_id)
        if entry is None:
            return
        if h.producer_epoch < entry.epoch:
            raise InvalidBatch("INVALID_PRODUCER_EPOCH",
                               f"epoch {h.producer_epoch} of producer {h.producer_id} is older than {entry.epoch}")
        if h.producer_epoch != entry.epoch:
            if h.base_sequence != 0:
                raise InvalidBatch("OUT_OF_ORDER_SEQUENCE_NUMBER",
                                   f"new epoch {h.producer_epoch} of producer {h.producer_id} must start at sequence 0, "
                                   f"got {h.base_sequence}")
        elif not _in_sequence(entry.last_seq, h.base_sequence):
            raise InvalidBatch("OUT_OF_ORDER_SEQUENCE_NUMBER",
                               f"out of order sequence {h.base_sequence} for producer {h.producer_id} "
                               f"(last {entry.last_seq})")
        if entry.txn_first_offset >= 0 and not h.attributes & TRANSACTIONAL_BIT:
            raise InvalidBatch("INVALID_TXN_STATE", f"Expected transactional write from producer {h.producer_id}")

    def check_epoch(self, h: BatchHeader) -> None:
        """The epoch check alone (Kafka's for appends the coordinator makes: no sequence check)."""
        entry = self.producers.get(h.producer_id)
        if entry is not None and h.producer_epoch < entry.epoch:
            raise InvalidBatch("INVALID_PRODUCER_EPOCH",
                               f"epoch {h.producer_epoch} of producer {h.producer_id} is older than {entry.epoch}")

    def record(self, h: BatchHeader, first_offset: int, timestamp: int) -> None:
        """A data batch was appended at ``first_offset``."""
        pid = h.producer_id
        entry = self.producers.get(pid)
        if entry is None:
            entry = self.producers[pid] = ProducerEntry(h.producer_epoch)
        elif entry.epoch != h.producer_epoch:
            entry.epoch = h.producer_epoch
            entry.batches.clear()
        last = first_offset + h.last_offset_delta
        entry.batches.append(BatchMetadata(h.base_sequence, h.last_sequence, first_offset, last, timestamp))
        entry.last_timestamp = timestamp
        entry.last_offset = last
        if h.attributes & TRANSACTIONAL_BIT and entry.txn_first_offset < 0:
            entry.txn_first_offset = first_offset
            self.ongoing[pid] = first_offset

    def has_ongoing(self, producer_id: int, producer_epoch: int | None = None) -> bool:
        """Whether the producer has a transaction open here (of that epoch, when given: Kafka's
        hasOngoingTransaction)."""
        if producer_id not in self.ongoing:
            return False
        return producer_epoch is None or self.producers[producer_id].epoch == producer_epoch

    # -- markers ---------------------------------------------------------------------------
    def check_marker(self, producer_id: int, producer_epoch: int, coordinator_epoch: int,
                     transaction_version: int = 0) -> None:
        """Kafka's appendEndTxnMarker checks, for a marker the coordinator writes. A transactions V2
        marker carries the epoch the EndTxn bumped, so it must be newer than the partition's
        (the same epoch with no transaction open is a retry of a marker already written)."""
        entry = self.producers.get(producer_id)
        if entry is None:
            return
        v2 = transaction_version >= 2
        if producer_epoch < entry.epoch or (v2 and producer_epoch == entry.epoch and producer_id in self.ongoing):
            raise InvalidBatch("INVALID_PRODUCER_EPOCH", f"epoch {producer_epoch} of producer {producer_id} is "
                               f"{'<=' if v2 else '<'} the last seen epoch {entry.epoch} (TV{transaction_version})")
        if entry.coordinator_epoch > coordinator_epoch:
            raise InvalidBatch("TRANSACTION_COORDINATOR_FENCED",
                               f"Invalid coordinator epoch for producerId {producer_id}: {coordinator_epoch} "
                               f"(zombie), {entry.coordinator_epoch} (current)")

    def complete(self, producer_id: int, producer_epoch: int, commit: bool, coordinator_epoch: int,
                 marker_offset: int, timestamp: int) -> AbortedTxn | None:
        """A marker was appended at ``marker_offset``: complete the producer's open transaction
        (if any); returns the aborted-index entry an abort of a non-empty transaction adds."""
        entry = self.producers.get(producer_id)
        if entry is None:
            entry = self.producers[producer_id] = ProducerEntry(producer_epoch)
        elif entry.epoch != producer_epoch:
            entry.epoch = producer_epoch
            entry.batches.clear()
        added = None
        first = entry.txn_first_offset
        if first >= 0:
            del self.ongoing[producer_id]
            if not commit:
                lso = next(iter(self.ongoing.values()), marker_offset + 1)
                added = AbortedTxn(producer_id, first, marker_offset, lso)
                self.aborted.append(added)
                self._aborted_lasts.append(marker_offset)
        entry.txn_first_offset = -1
        entry.coordinator_epoch = coordinator_epoch
        entry.last_timestamp = timestamp
        entry.last_offset = marker_offset
        return added

    # -- transactions ----------------------------------------------------------------------
    def first_unstable_offset(self) -> int | None:
        """The first offset of the earliest open transaction, or None."""
        for first in self.ongoing.values():
            return first
        return None

    def collect_aborted(self, fetch_offset: int, upper_bound: int) -> list[AbortedTxn]:
        """Aborted transactions overlapping [fetch_offset, upper_bound), as Kafka's
        TransactionIndex.collectAbortedTxns."""
        out = []
        aborted = self.aborted
        for i in range(bisect_left(self._aborted_lasts, fetch_offset), len(aborted)):
            txn = aborted[i]
            if txn.first_offset < upper_bound:
                out.append(txn)
            if txn.last_stable_offset >= upper_bound:
                break
        return out

    # -- removal from the front ------------------------------------------------------------
    def remove_before(self, log_start: int) -> None:
        """Forget producers whose every write now lies below the log start (retention,
        DeleteRecords), unless their transaction is still open; drop aborted-index entries
        wholly below it."""
        gone = [pid for pid, e in self.producers.items() if e.last_offset < log_start and e.txn_first_offset < 0]
        for pid in gone:
            del self.producers[pid]
        drop = bisect_left(self._aborted_lasts, log_start)
        if drop:
            del self.aborted[:drop], self._aborted_lasts[:drop]
