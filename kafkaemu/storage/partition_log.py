"""One partition's log: record batches kept as the bytes the producer sent.

Appends validate as Kafka 3.9's UnifiedLog and LogValidator do (``append_checks``: magic, CRC,
size, offset range, record count, control batches, idempotent sequences, then every record: see
``record_validation``), assign offsets by rewriting each batch's base offset and partition leader
epoch in place, set the max timestamp Kafka recomputes from the records (LogAppendTime topics: the
append time), and wake fetches waiting for data. As in Kafka, a batch is re-encoded only when it
cannot be kept: a compressed batch whose offset deltas are not 0, 1, 2, ... or whose codec is not
the topic's ``compression.type``. Reads return whole stored
batches, so a fetch is a concatenation. Single replica: the high watermark is the log end offset.
The batches are kept by a batch store: in memory (``batch_store``), or in segment files with a
data directory (``segmented_log``, set up by ``data_dir``).

Transactions (``producer_state``): transactional batches open a transaction per producer,
``append_control_batch`` writes the coordinator's commit/abort marker and completes it; the last
stable offset is the first open transaction's first offset (at least the log start), else the
high watermark; aborted transactions are indexed for read_committed fetches.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass, field

from ..logging import get_logger
from . import compaction, compression, topic_config
from .append_checks import validate
from .batch_store import MemoryBatchStore, StorageError
from .producer_state import ProducerStateTable
from .record_batch import (CONTROL_ABORT, CONTROL_COMMIT, NO_TIMESTAMP, InvalidBatch, build_keyed_batch, control_record,
                           end_txn_marker, iter_records, parse_header, rewrite_offsets, set_max_timestamp)
from .record_validation import check_records

log = get_logger("kafkaemu.storage")


@dataclass
class AppendResult:
    """What one partition's append answers: an error name or where the batches went."""
    error: str = "NONE"                 # ErrorCode member name
    base_offset: int = -1
    log_append_time: int = -1
    log_start_offset: int = -1
    message: str | None = None
    record_errors: list = field(default_factory=list)   # [(batch_index, message)]
    appended_bytes: int = 0
    uncompressed_bytes: int = 0         # bytes inflated to validate (counted against a request's budget)
    request_wide: bool = False          # the error is one Kafka meets reading the request (InvalidBatch)


class PartitionLog:
    def __init__(self, topic, index: int) -> None:
        self.topic = topic
        self.index = index
        self.log_start_offset = 0
        self.high_watermark = 0
        self.leader_epoch = 0
        self.batch_store = MemoryBatchStore()   # segment files instead, with a data directory
        self.epochs: list[tuple[int, int]] = [(0, 0)]   # (leader epoch, start offset)
        self.producers = ProducerStateTable()
        self.waiters: set = set()          # long-polling fetches; each has on_append(partition, nbytes, stable)
        self.duplicate_batches = 0         # idempotent retries answered from the producer state
        self._clean_bytes = 0              # log size right after the last compaction
        self.tombstones_due_ms: int | None = None   # when the oldest tombstone kept passes delete.retention.ms
        self.persistence = None            # the store's DataDir, when there is one
        self.max_uncompressed_bytes = compression.DEFAULT_LIMIT   # the most one batch may inflate to

    # -- properties ------------------------------------------------------------------------
    @property
    def log_end_offset(self) -> int:
        return self.high_watermark

    @property
    def last_stable_offset(self) -> int:
        """Kafka's UnifiedLog.lastStableOffset: the first offset of the earliest open transaction
        (at least the log start), else the high watermark."""
        first = self.producers.first_unstable_offset()
        if first is None:
            return self.high_watermark
        return min(max(first, self.log_start_offset), self.high_watermark)

    @property
    def configs(self):
        """The topic's configs over the broker's topic defaults (a plain dict, read only: merged
        in C on each call, where a ChainMap's every lookup is Python code on the produce path)."""
        configs = getattr(self.topic, "configs", None) or {}
        defaults = getattr(self.topic, "defaults", None)
        return {**defaults, **configs} if defaults else configs

    @property
    def batch_count(self) -> int:
        return self.batch_store.batch_count

    @property
    def size_bytes(self) -> int:
        return self.batch_store.size_bytes

    # -- append ----------------------------------------------------------------------------
    def append(self, records, now_ms: int, *, produce_version: int = 11,
               max_message_bytes: int | None = None, max_uncompressed_bytes: int | None = None) -> AppendResult:
        """Validate and append a produce request's records for this partition. No batch may inflate
        to more than ``max_uncompressed_bytes`` (default: the store's bound)."""
        configs = self.configs
        if max_message_bytes is None:
            max_message_bytes = topic_config.int_config(configs, "max.message.bytes")
        limit = self.max_uncompressed_bytes if max_uncompressed_bytes is None \
            else min(max_uncompressed_bytes, self.max_uncompressed_bytes)
        inflated = [0]
        try:
            try:
                batches = validate(self, records, produce_version, max_message_bytes, configs, now_ms, limit, inflated)
            except (struct.error, IndexError, ValueError, OverflowError) as exc:  # malformed beyond the checks
                raise InvalidBatch("CORRUPT_MESSAGE", f"malformed records: {exc}") from exc
        except InvalidBatch as exc:
            log.info("produce_rejected", topic=self.topic.name, partition=self.index, error=exc.code_name,
                     reason=str(exc))
            res = AppendResult(exc.code_name, log_start_offset=self.log_start_offset, message=str(exc),
                               uncompressed_bytes=inflated[0], request_wide=exc.request_wide)
            if getattr(exc, "record_errors", None):
                res.record_errors = exc.record_errors
            return res
        res = self._append_validated(batches, now_ms, topic_config.log_append_time(configs))
        res.uncompressed_bytes = inflated[0]
        return res

    def append_batch(self, batch: bytes, now_ms: int) -> AppendResult:
        """Append a broker-built, trusted v2 batch (e.g. ``__consumer_offsets`` records; a
        transactional one, such as a TxnOffsetCommit's, joins its producer's transaction). Its
        producer epoch is checked, not its sequence, as Kafka's coordinator appends."""
        h = parse_header(batch)
        return self._append_validated([(bytearray(batch), h, h.max_timestamp)], now_ms, False, client=False)

    def append_keyed(self, records, now_ms: int, producer_id: int = -1, producer_epoch: int = -1) -> int:
        """Append a coordinator's ``(key, value)`` records as one batch at ``now_ms`` (transactional
        when written for a producer: it joins the producer's transaction, its epoch checked, not a
        sequence, as Kafka's coordinator appends). The batch is built at the log end, with this
        log's offsets and leader epoch, and kept as built: what ``append_batch`` would store for
        ``build_batch``'s batch of the records. Returns its base offset; raises InvalidBatch
        (``code_name``: the partition's error) when refused, appending nothing."""
        base = self.high_watermark
        batch = build_keyed_batch(records, now_ms, base_offset=base, partition_leader_epoch=self.leader_epoch,
                                  producer_id=producer_id, producer_epoch=producer_epoch,
                                  transactional=producer_id >= 0)
        h = None
        if producer_id >= 0:
            h = parse_header(batch)
            try:
                self.producers.check_epoch(h)
            except InvalidBatch as exc:
                log.info("produce_rejected", topic=self.topic.name, partition=self.index, error=exc.code_name,
                         reason=str(exc))
                raise
        self.last_append_ms = now_ms
        try:
            self._store(batch, base, base + len(records) - 1, now_ms, now_ms)
        except StorageError as exc:   # nothing of this batch stays; the log takes writes again when it can
            log.warning("storage_error", topic=self.topic.name, partition=self.index, offset=base, reason=str(exc))
            raise
        if h is not None:
            self.producers.record(h, base, now_ms)
        if self.waiters:
            size = len(batch)
            stable = size if not self.producers.ongoing else self._bytes_between(base, self.last_stable_offset)
            for waiter in list(self.waiters):
                waiter.on_append(self, size, stable)
        return base

    def _append_validated(self, batches: list, now_ms: int, log_append_time: bool, client: bool = True) -> AppendResult:
        """Append validated batches. ``client``: a producer's (duplicates answered from the
        producer state, sequences checked); otherwise the broker's own (Kafka's COORDINATOR
        origin: the producer epoch is checked, not sequences)."""
        producers = self.producers
        for batch, h, _ in batches:
            if h.producer_id >= 0:
                if client:
                    dup = producers.find_duplicate(h)
                    if dup is not None:
                        self.duplicate_batches += 1
                        log.info("duplicate_batch", topic=self.topic.name, partition=self.index,
                                 producer_id=h.producer_id, sequence=h.base_sequence, offset=dup.first_offset)
                        return AppendResult(base_offset=dup.first_offset, log_append_time=dup.timestamp,
                                            log_start_offset=self.log_start_offset)
                try:
                    if client:
                        producers.check(h)
                    else:
                        producers.check_epoch(h)
                except InvalidBatch as exc:
                    log.info("produce_rejected", topic=self.topic.name, partition=self.index,
                             error=exc.code_name, reason=str(exc))
                    return AppendResult(exc.code_name, log_start_offset=self.log_start_offset, message=str(exc))
        first = self.high_watermark
        total = 0
        for batch, h, max_ts in batches:
            base = self.high_watermark
            rewrite_offsets(batch, base, self.leader_epoch)
            if log_append_time:
                max_ts = now_ms
            set_max_timestamp(batch, log_append_time, max_ts)
            try:
                self._store(batch, base, base + h.last_offset_delta, max_ts, now_ms)
            except StorageError as exc:   # nothing of this batch stays; the log takes writes again when it can
                log.warning("storage_error", topic=self.topic.name, partition=self.index, offset=base, reason=str(exc))
                return AppendResult(exc.code_name, log_start_offset=self.log_start_offset, message=str(exc))
            total += len(batch)
            if h.producer_id >= 0:
                producers.record(h, base, max_ts)
        if self.waiters:
            # read_committed fetches count only what lies below the last stable offset
            stable = total if not producers.ongoing else self._bytes_between(first, self.last_stable_offset)
            for waiter in list(self.waiters):
                waiter.on_append(self, total, stable)
        return AppendResult(base_offset=first, log_append_time=now_ms if log_append_time else -1,
                            log_start_offset=self.log_start_offset, appended_bytes=total)

    def _store(self, batch, base: int, last: int, max_ts: int, now_ms: int) -> None:
        """Index a batch (offsets already assigned) at the log end."""
        # the validated copy is kept as is (a bytearray only this log holds); the append time can roll a segment
        self.batch_store.append(batch, base, last, max_ts, now_ms)
        self.high_watermark = last + 1

    def _bytes_between(self, start: int, end: int) -> int:
        """Stored bytes of the batches whose offsets lie in [start, end)."""
        return self.batch_store.bytes_between(start, end)

    # -- transactions ----------------------------------------------------------------------
    def append_control_batch(self, producer_id: int, producer_epoch: int, commit: bool, coordinator_epoch: int,
                             now_ms: int, transaction_version: int = 0) -> int:
        """Write a transaction marker (Kafka's WriteTxnMarkers append): a control batch completing
        the producer's open transaction here (if any), which advances the last stable offset.
        Returns the marker's offset. Raises InvalidBatch (``code_name``) without appending when
        the producer epoch is older than the partition's (INVALID_PRODUCER_EPOCH; under transactions
        V2 not newer, see ProducerState.check_marker) or the coordinator epoch older than one seen
        (TRANSACTION_COORDINATOR_FENCED)."""
        producers = self.producers
        producers.check_marker(producer_id, producer_epoch, coordinator_epoch, transaction_version)
        lso_before = self.last_stable_offset
        batch = bytearray(end_txn_marker(producer_id, producer_epoch, commit, coordinator_epoch, now_ms))
        offset = self.high_watermark
        rewrite_offsets(batch, offset, self.leader_epoch)
        self._store(batch, offset, offset, now_ms, now_ms)
        aborted = producers.complete(producer_id, producer_epoch, commit, coordinator_epoch, offset, now_ms)
        log.debug("txn_marker", topic=self.topic.name, partition=self.index, producer_id=producer_id,
                  commit=commit, offset=offset, aborted_from=aborted.first_offset if aborted else None)
        if aborted is not None and self.persistence is not None:
            self.persistence.aborted(self, aborted)
        if self.waiters:
            stable = self._bytes_between(lso_before, self.last_stable_offset)
            for waiter in list(self.waiters):
                waiter.on_append(self, len(batch), stable)
        return offset

    def open_transactions(self) -> dict[int, int]:
        """Producer id -> first offset of each transaction open on this partition, oldest first."""
        return dict(self.producers.ongoing)

    def aborted_transactions(self, fetch_offset: int, upper_bound: int) -> list:
        """AbortedTxn entries (producer_id, first_offset, ...) overlapping [fetch_offset, upper_bound)."""
        return self.producers.collect_aborted(fetch_offset, upper_bound)

    def active_producers(self) -> list[dict]:
        """DescribeProducers' ProducerState of every producer this partition knows."""
        return [{"producer_id": pid, "producer_epoch": e.epoch, "last_sequence": e.last_seq,
                 "last_timestamp": e.last_timestamp, "coordinator_epoch": e.coordinator_epoch,
                 "current_txn_start_offset": e.txn_first_offset}
                for pid, e in self.producers.producers.items()]

    # -- read ------------------------------------------------------------------------------
    def read(self, offset: int, max_bytes: int, min_one: bool = True, max_offset: int | None = None) -> list[bytes]:
        """Whole batches from the one holding ``offset``, up to ``max_bytes`` (the first batch is
        returned even when larger if ``min_one``). ``offset`` must lie in [log start, HW].
        ``max_offset``: only batches wholly below it (read_committed reads to the last stable offset)."""
        return self.batch_store.read(offset, max_bytes, min_one, max_offset)

    def batches(self):
        """The batches from the one holding the log start on (a list in memory; read lazily from
        the segment files with a data directory)."""
        found = self.batch_store.batches(self.log_start_offset)
        return list(found) if isinstance(self.batch_store, MemoryBatchStore) else found

    def offset_in_range(self, offset: int) -> bool:
        return self.log_start_offset <= offset <= self.high_watermark

    # -- offsets by time -------------------------------------------------------------------
    def epoch_for_offset(self, offset: int) -> int:
        epoch = self.epochs[0][0]
        for e, start in self.epochs:
            if start <= offset:
                epoch = e
        return epoch

    def offset_for_timestamp(self, target_ms: int) -> tuple[int, int, int] | None:
        """(timestamp, offset, leader epoch) of the first record at or after ``target_ms`` whose
        offset is at least the log start; None when there is none."""
        for batch in self.batch_store.timestamp_candidates(target_ms):
            if parse_header(batch).last_offset < self.log_start_offset:
                continue
            for rec in _records(batch, self.max_uncompressed_bytes):
                if rec.timestamp >= target_ms and rec.offset >= self.log_start_offset:
                    return rec.timestamp, rec.offset, parse_header(batch).partition_leader_epoch
        return None

    def max_timestamp_offset(self) -> tuple[int, int, int] | None:
        """(timestamp, offset, epoch) of the first record with the largest timestamp (ListOffsets -3)."""
        found = self.batch_store.max_timestamp_batch()
        if found is None:
            return None
        best, batch = found
        h = parse_header(batch)
        for rec in _records(batch, self.max_uncompressed_bytes):
            if rec.timestamp == best:
                return rec.timestamp, rec.offset, h.partition_leader_epoch
        return best, h.last_offset, h.partition_leader_epoch

    # -- leader epochs ---------------------------------------------------------------------
    def end_offset_for_epoch(self, requested: int) -> tuple[int, int]:
        """(epoch, end offset) as Kafka's LeaderEpochFileCache.endOffsetFor answers OffsetForLeaderEpoch."""
        if requested < 0:
            return -1, -1
        latest = self.epochs[-1][0]
        if requested == latest:
            return requested, self.high_watermark
        higher = next(((e, s) for e, s in self.epochs if e > requested), None)
        if higher is None:
            return -1, -1
        floor = None
        for e, s in self.epochs:
            if e <= requested:
                floor = (e, s)
        return (floor[0] if floor else requested), higher[1]

    def bump_leader_epoch(self) -> int:
        """A new leader epoch starting at the log end (leader change in multi-node emulation)."""
        self.leader_epoch += 1
        self.epochs.append((self.leader_epoch, self.high_watermark))
        if self.persistence is not None:
            self.persistence.rewritten(self)
        return self.leader_epoch

    # -- removal from the front ------------------------------------------------------------
    def delete_records(self, offset: int) -> tuple[str, int]:
        """DeleteRecords: move the log start to ``offset`` (-1: the high watermark)."""
        if offset == -1:
            offset = self.high_watermark
        if offset < 0 or offset > self.high_watermark:
            return "OFFSET_OUT_OF_RANGE", -1
        if offset > self.log_start_offset:
            self._advance_log_start(offset)
        return "NONE", self.log_start_offset

    def apply_retention(self, now_ms: int) -> int:
        """Drop what is past retention.ms / retention.bytes: whole batches in memory, whole
        segments with a data directory (Kafka's unit); returns how many were dropped."""
        configs = self.configs
        store = self.batch_store
        if not topic_config.is_deleting(configs) or not store.size_bytes:
            return 0
        before = store.pieces
        new_start = store.retention_start(now_ms, topic_config.int_config(configs, "retention.ms"),
                                          topic_config.int_config(configs, "retention.bytes"), self.high_watermark)
        if new_start is None:
            return 0
        self._advance_log_start(max(new_start, self.log_start_offset))
        dropped = before - store.pieces
        log.info("retention", topic=self.topic.name, partition=self.index, dropped=dropped,
                 log_start=self.log_start_offset)
        return dropped

    def _advance_log_start(self, offset: int) -> None:
        self.log_start_offset = offset
        # keep the batch holding the new log start: fetches return it and clients skip below
        dropped = self.batch_store.drop_before(offset)
        self._clean_bytes = max(0, self._clean_bytes - dropped)
        self.producers.remove_before(offset)
        # the epoch cache forgets entries wholly below the log start (Kafka's truncateFromStart)
        while len(self.epochs) > 1 and self.epochs[1][1] <= offset:
            self.epochs.pop(0)
        e, s = self.epochs[0]
        self.epochs[0] = (e, max(s, offset))
        if self.persistence is not None:
            self.persistence.rewritten(self)

    # -- compaction ------------------------------------------------------------------------
    def compact(self, now_ms: int | None = None, force: bool = False) -> int:
        """cleanup.policy=compact, as Kafka's log cleaner: when at least min.cleanable.dirty.ratio
        of the log was appended since the last cleaning (or ``force``), keep only the latest record
        per key in every batch but the last (Kafka never cleans the active segment), rewriting
        batches with their original offsets. Tombstones (null values) that are the latest for
        their key are dropped once their batch is older than delete.retention.ms at ``now_ms``.
        Transactions: nothing from the last stable offset on is read or cleaned; records of
        aborted transactions neither count as a key's latest nor are kept; markers are kept.
        Returns how many records were removed."""
        return compaction.compact(self, now_ms, force)

    def restore(self, batches: list, log_start: int, high_watermark: int = 0) -> int:
        """Rebuild this (empty, in-memory) log from stored batches: producer state, leader
        epochs. A batch stored before kafkaemu recomputed max timestamps (header -1, CreateTime)
        gets the max of its records; returns how many were so repaired."""
        repaired = 0
        for batch in batches:
            fixed = self.repair_max_timestamp(batch)
            if fixed is not None:
                batch = fixed
                repaired += 1
            h = parse_header(batch)
            self.batch_store.append(batch, h.base_offset, h.last_offset, h.max_timestamp)
            self.replay(batch, h)
        self.finish_load(log_start, high_watermark, self._end_after(batches))
        return repaired

    def _end_after(self, batches) -> int:
        return parse_header(batches[-1]).last_offset + 1 if batches else 0

    def replay(self, batch, h) -> None:
        """A stored batch's producer state and leader epoch, as Kafka rebuilds them on load."""
        if h.producer_id >= 0:
            aborted = self._replay_producer_state(batch, h)
            if aborted is not None and self.persistence is not None:
                self.persistence.aborted(self, aborted)
        if h.partition_leader_epoch > self.leader_epoch:
            self.leader_epoch = h.partition_leader_epoch
            self.epochs.append((h.partition_leader_epoch, h.base_offset))

    def finish_load(self, log_start: int, high_watermark: int, end: int) -> None:
        self.high_watermark = max(end, high_watermark, log_start)
        self.log_start_offset = log_start
        self.producers.remove_before(log_start)   # as the live log forgot them when the log start moved
        self._clean_bytes = self.size_bytes

    def _replay_producer_state(self, batch, h):
        """Producer and transaction state from a stored batch (markers complete transactions;
        nothing is rejected); the aborted-index entry a marker adds, if any."""
        if not h.is_control:
            self.producers.record(h, h.base_offset, h.max_timestamp)
            return None
        try:
            marker = control_record(batch)
        except (InvalidBatch, struct.error, IndexError, ValueError) as exc:
            log.warning("undecodable_control_batch", topic=self.topic.name, partition=self.index,
                        offset=h.base_offset, reason=str(exc))
            return None
        if marker is not None and marker[0] in (CONTROL_ABORT, CONTROL_COMMIT):
            return self.producers.complete(h.producer_id, h.producer_epoch, marker[0] == CONTROL_COMMIT, marker[1],
                                           h.base_offset, h.max_timestamp)
        return None

    def repair_max_timestamp(self, batch):
        """A batch stored before kafkaemu recomputed max timestamps (header -1, CreateTime) with
        the max of its records (None: nothing to repair)."""
        h = parse_header(batch)
        if h.max_timestamp != NO_TIMESTAMP or h.log_append_time or h.is_control:
            return None
        return self._repair_max_timestamp(batch, h)

    def _repair_max_timestamp(self, batch, h):
        try:
            max_ts = check_records(batch, h, limit=self.max_uncompressed_bytes).max_timestamp
        except InvalidBatch:
            return None
        if max_ts == h.max_timestamp:
            return None
        fixed = bytearray(batch)
        set_max_timestamp(fixed, False, max_ts)
        return fixed


def _records(batch, limit: int):
    """The batch's records, lazily, ending early (logged) at records that do not decode: append
    checks the records' framing, not every field, and a data directory may hold older batches."""
    try:
        yield from iter_records(batch, limit)
    except (InvalidBatch, struct.error, IndexError, ValueError) as exc:
        log.warning("undecodable_batch", base_offset=parse_header(batch).base_offset, reason=str(exc))

