"""Idempotent-producer state of one partition, following Kafka 3.9's ProducerStateManager.

For each producer id: its epoch and the metadata of its last five batches. A batch whose sequence
range matches one of those (same epoch) is a duplicate, answered with its original offsets and not
appended again. Otherwise the first sequence must follow the last one (wrapping at 2**31-1 to 0);
a new epoch must start at sequence 0; an older epoch is INVALID_PRODUCER_EPOCH. A producer the
partition does not know (new, or its batches were all removed by retention/DeleteRecords) may
start at any sequence, as in Kafka since KIP-360 (so UNKNOWN_PRODUCER_ID is never returned).
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from .record_batch import BatchHeader, InvalidBatch

MAX_CACHED_BATCHES = 5


@dataclass(slots=True)
class BatchMetadata:
    first_seq: int
    last_seq: int
    first_offset: int
    last_offset: int
    timestamp: int


@dataclass
class ProducerEntry:
    epoch: int
    batches: deque = field(default_factory=lambda: deque(maxlen=MAX_CACHED_BATCHES))

    @property
    def last_seq(self) -> int:
        return self.batches[-1].last_seq if self.batches else -1


def _in_sequence(last_seq: int, next_seq: int) -> bool:
    return next_seq == last_seq + 1 or (next_seq == 0 and last_seq == 0x7FFFFFFF)


class ProducerStateTable:
    def __init__(self) -> None:
        self.producers: dict[int, ProducerEntry] = {}

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
        """Raise InvalidBatch with Kafka's error when the batch may not be appended."""
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
            return
        if not _in_sequence(entry.last_seq, h.base_sequence):
            raise InvalidBatch("OUT_OF_ORDER_SEQUENCE_NUMBER",
                               f"out of order sequence {h.base_sequence} for producer {h.producer_id} "
                               f"(last {entry.last_seq})")

    def record(self, h: BatchHeader, first_offset: int, timestamp: int) -> None:
        entry = self.producers.get(h.producer_id)
        if entry is None or entry.epoch != h.producer_epoch:
            entry = self.producers[h.producer_id] = ProducerEntry(h.producer_epoch)
        entry.batches.append(BatchMetadata(h.base_sequence, h.last_sequence, first_offset,
                                           first_offset + h.last_offset_delta, timestamp))

    def remove_before(self, log_start: int) -> None:
        """Forget producers whose every cached batch now lies below the log start (retention, DeleteRecords)."""
        gone = [pid for pid, e in self.producers.items() if not e.batches or e.batches[-1].last_offset < log_start]
        for pid in gone:
            del self.producers[pid]
