"""cleanup.policy=compact for one partition log, as Kafka's log cleaner (see ``PartitionLog.compact``):
the latest record per key is kept in every batch but the last, batches keep their offsets, and the
batch store rewrites what changed (in memory, or segment files through a rename).

A cleaning is a ``CompactionJob`` the broker's ticks run a budget of batches at a time, so that no
loop turn decodes or rewrites a whole log: it reads the batches below the bounds taken when it
starts (the last stable offset, the log end), first for each key's latest offset, then for what
each batch becomes; then it applies those changes in offset order, each to its batch only if the
batch is still there as it was read. Each change stands alone: appends meanwhile lie above the
bounds; a log start moved meanwhile (DeleteRecords, retention) only takes batches away, with every
older record of their keys; a log replaced or closed (a snapshot restore, its topic deleted)
abandons the job."""
from __future__ import annotations

import struct
from dataclasses import dataclass

from ..logging import get_logger
from . import topic_config
from .batch_store import batch_identity
from .record_batch import InvalidBatch, build_batch, iter_records, parse_header

log = get_logger("kafkaemu.storage")

BATCHES_PER_STEP = 1000      # what one loop turn of the cleaner may read, whichever runs out first
BYTES_PER_STEP = 4 << 20


@dataclass
class Budget:
    """What is left of one loop turn's cleaning: batches and bytes read (a batch is read whole,
    so the bytes may run over by one batch)."""
    batches: int = BATCHES_PER_STEP
    bytes: int = BYTES_PER_STEP

    @classmethod
    def unbounded(cls) -> "Budget":
        return cls(1 << 62, 1 << 62)

    @property
    def spent(self) -> bool:
        return self.batches <= 0 or self.bytes <= 0

    def spend(self, batch) -> None:
        self.batches -= 1
        self.bytes -= len(batch)


def compact(plog, now_ms: int | None, force: bool) -> int:
    """One whole cleaning now; returns how many records were removed."""
    job = CompactionJob.start(plog, now_ms, force)
    if job is None:
        return 0
    job.run(Budget.unbounded())
    return job.removed


class CompactionJob:
    """One cleaning of one partition log, resumable: ``run`` goes on where the last call stopped."""

    def __init__(self, plog, now_ms: int | None) -> None:
        self.plog = plog
        self.store = plog.batch_store
        self.generation = self.store.generation
        self.retention_ms = topic_config.int_config(plog.configs, "delete.retention.ms")
        self.horizon = None if now_ms is None else now_ms - self.retention_ms
        self.stable = plog.last_stable_offset   # open transactions are never looked at (Kafka's first uncleanable offset)
        self.end = self.store.end_offset()      # the last batch is not cleaned (Kafka's active segment)
        self.aborted = _aborted_ranges(plog)
        self.limit = plog.max_uncompressed_bytes
        self.latest: dict[bytes, tuple[int, int]] = {}   # key -> (offset, base offset of its batch)
        self.holders: dict[int, int] = {}      # base offset -> how many keys' latest records the batch holds
        self.undecodable: set[int] = set()     # base offsets of batches kept as they are
        self.changes: list = []   # (base offset, (identity, replacement or None)), in offset order
        self.kept_tombstone_ts: list[int] = []
        self.removed = 0
        self.phase = "scan"                    # then "clean", "apply", and None (applied or abandoned)
        self.cursor: int | None = None         # the next offset to read in this phase (None: the first batch)

    @classmethod
    def start(cls, plog, now_ms: int | None, force: bool) -> "CompactionJob | None":
        """A job when the log is to be cleaned now, else None."""
        configs = plog.configs
        store = plog.batch_store
        if not topic_config.is_compacted(configs) or store.batch_count < 2:
            return None
        dirty = plog.size_bytes - plog._clean_bytes
        ratio = float(topic_config.effective(configs, "min.cleanable.dirty.ratio"))
        # tombstones past delete.retention.ms make a log cleanable too (KIP-534), however little is dirty:
        # the records of abandoned groups in __consumer_offsets then give their memory back
        due = plog.tombstones_due_ms is not None and now_ms is not None and now_ms >= plog.tombstones_due_ms
        if not force and not due and (plog.size_bytes == 0 or dirty / plog.size_bytes < ratio):
            return None
        return cls(plog, now_ms)

    @property
    def stale(self) -> bool:
        """Whether the log was replaced or closed since the job started."""
        return self.plog.batch_store is not self.store or self.store.generation != self.generation

    def run(self, budget: Budget) -> bool:
        """Read, then apply, while ``budget`` lasts; True when the job is over."""
        while self.phase is not None:
            if self.stale:
                log.info("compaction_abandoned", topic=self.plog.topic.name, partition=self.plog.index)
                self.phase = None
                break
            if budget.spent:
                return False
            if self.phase == "apply":
                self._apply(budget)
                continue
            scanning = self.phase == "scan"
            bound = self.stable if scanning else min(self.stable, self.end - 1)
            step = self._scan if scanning else self._clean
            done = False
            for batch in self.store.batches(self.cursor, budget.batches):
                h = parse_header(batch)
                if h.last_offset >= bound:
                    done = True
                    break
                budget.spend(batch)
                self.cursor = h.last_offset + 1
                step(batch, h)
                if budget.spent:
                    break
            if done or not budget.spent:   # the bound, or the log's end, was reached
                if scanning:
                    self.phase, self.cursor = "clean", None
                else:
                    self.phase = "apply"
        return True

    def _scan(self, batch, h) -> None:
        if h.is_control or _in_aborted(h, self.aborted):
            return
        records = _decodable(batch, self.limit)
        if not records:
            self.undecodable.add(h.base_offset)
        latest, holders, base = self.latest, self.holders, h.base_offset
        for rec in records:
            before = latest.get(rec.key)
            if before is not None:
                left = holders[before[1]] - 1
                if left:
                    holders[before[1]] = left
                else:
                    del holders[before[1]]
            latest[rec.key] = (rec.offset, base)
            holders[base] = holders.get(base, 0) + 1

    def _clean(self, batch, h) -> None:
        new = self._cleaned(batch, h)
        if new is not batch:
            self.changes.append((h.base_offset, (batch_identity(batch), new)))

    def _cleaned(self, batch, h):
        """The batch, its replacement (same offsets) or None (dropped)."""
        if h.is_control:
            return batch
        aborted = _in_aborted(h, self.aborted)
        # a batch holding no key's latest record loses every record: dropped without decoding it
        # (the commits of one group partition to __consumer_offsets are each a batch of one record)
        if h.base_offset not in self.undecodable and not aborted and h.base_offset not in self.holders:
            self.removed += h.records_count
            return None
        expired = self.horizon is not None and h.max_timestamp < self.horizon
        recs = _decodable(batch, self.limit)
        if not recs:
            return batch
        if aborted:   # records of aborted transactions are discarded, as Kafka's cleaner does
            kept = []
        else:
            latest = self.latest
            kept = [r for r in recs if latest.get(r.key, (None,))[0] == r.offset and not (expired and r.value is None)]
        if any(r.value is None for r in kept):
            self.kept_tombstone_ts.append(h.max_timestamp)
        if len(kept) == len(recs):
            return batch
        self.removed += len(recs) - len(kept)
        if not kept:
            return None
        return build_batch([(r.key, r.value, r.headers, r.timestamp, r.offset - h.base_offset) for r in kept],
                           base_offset=h.base_offset, codec=h.codec, producer_id=h.producer_id,
                           producer_epoch=h.producer_epoch, base_sequence=h.base_sequence,
                           partition_leader_epoch=h.partition_leader_epoch,
                           log_append_time=h.log_append_time, transactional=h.is_transactional,
                           last_offset_delta=h.last_offset_delta)

    def _apply(self, budget: Budget) -> None:
        """Apply the next of the changes (all in one step would be a list operation per batch of
        the log): each batch's change stands alone, and going in offset order a key's older
        records go before its tombstone."""
        if self.changes:
            del self.changes[:self.store.apply_cleaning(self.changes, 0, budget)]   # let go of them as they go
            if self.changes:
                return
        plog = self.plog
        self.phase = None
        due = min(self.kept_tombstone_ts) + self.retention_ms if self.kept_tombstone_ts else None
        end = self.store.end_offset()
        appended = end > self.end
        if appended and plog.tombstones_due_ms is not None:   # tombstones may have come since it started
            due = plog.tombstones_due_ms if due is None else min(due, plog.tombstones_due_ms)
        plog.tombstones_due_ms = due
        if self.removed:
            log.info("compacted", topic=plog.topic.name, partition=plog.index, removed=self.removed)
        plog._clean_bytes = plog.size_bytes - (self.store.bytes_between(self.end, end) if appended else 0)


def _aborted_ranges(plog) -> dict[int, list[tuple[int, int]]]:
    """Producer id -> [(first offset, abort marker offset)] of its aborted transactions."""
    out: dict[int, list[tuple[int, int]]] = {}
    for txn in plog.producers.aborted:
        out.setdefault(txn.producer_id, []).append((txn.first_offset, txn.last_offset))
    return out


def _in_aborted(h, aborted: dict) -> bool:
    """Whether a transactional data batch belongs to one of its producer's aborted transactions."""
    if not h.is_transactional or h.producer_id not in aborted:
        return False
    return any(first <= h.base_offset <= last for first, last in aborted[h.producer_id])


def _decodable(batch, limit: int) -> list:
    """The batch's records, or none when they do not decode whole."""
    try:
        return list(iter_records(batch, limit))
    except (InvalidBatch, struct.error, IndexError, ValueError) as exc:
        log.warning("undecodable_batch", base_offset=parse_header(batch).base_offset, reason=str(exc))
        return []
