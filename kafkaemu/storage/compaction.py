"""cleanup.policy=compact for one partition log, as Kafka's log cleaner (see ``PartitionLog.compact``):
the latest record per key is kept in every batch but the last, batches keep their offsets, and the
batch store rewrites what changed (in memory, or segment files through a rename)."""
from __future__ import annotations

import struct
from bisect import bisect_left

from ..logging import get_logger
from . import topic_config
from .record_batch import InvalidBatch, build_batch, iter_records, parse_header

log = get_logger("kafkaemu.storage")


def compact(plog, now_ms: int | None, force: bool) -> int:
    """Returns how many records were removed."""
    configs = plog.configs
    store = plog.batch_store
    if not topic_config.is_compacted(configs) or store.batch_count < 2:
        return 0
    dirty = plog.size_bytes - plog._clean_bytes
    ratio = float(topic_config.effective(configs, "min.cleanable.dirty.ratio"))
    # tombstones past delete.retention.ms make a log cleanable too (KIP-534), however little is dirty:
    # the records of abandoned groups in __consumer_offsets then give their memory back
    due = plog.tombstones_due_ms is not None and now_ms is not None and now_ms >= plog.tombstones_due_ms
    if not force and not due and (plog.size_bytes == 0 or dirty / plog.size_bytes < ratio):
        return 0
    retention_ms = topic_config.int_config(configs, "delete.retention.ms")
    horizon = None if now_ms is None else now_ms - retention_ms
    kept_tombstone_ts: list[int] = []
    stable = plog.last_stable_offset      # open transactions are never looked at (Kafka's first uncleanable offset)
    aborted = _aborted_ranges(plog)
    latest: dict[bytes, int] = {}
    undecodable: set[int] = set()   # base offsets of batches kept as they are
    for batch in store.batches():
        h = parse_header(batch)
        if h.last_offset >= stable:
            break
        if h.is_control or _in_aborted(h, aborted):
            continue
        records = _decodable(batch, plog.max_uncompressed_bytes)
        if not records:
            undecodable.add(h.base_offset)
        for rec in records:
            latest[rec.key] = rec.offset
    # a batch holding no key's latest record loses every record: dropped without decoding it again
    # (the commits of one group partition to __consumer_offsets are each a batch of one record)
    latest_offsets = sorted(latest.values())
    removed = 0

    def clean(batch):
        nonlocal removed
        h = parse_header(batch)
        if h.is_control:
            return batch
        if h.base_offset not in undecodable and not _in_aborted(h, aborted):
            at = bisect_left(latest_offsets, h.base_offset)
            if at == len(latest_offsets) or latest_offsets[at] > h.last_offset:
                removed += h.records_count
                return None
        expired = horizon is not None and h.max_timestamp < horizon
        recs = _decodable(batch, plog.max_uncompressed_bytes)
        if not recs:
            return batch
        if _in_aborted(h, aborted):   # records of aborted transactions are discarded, as Kafka's cleaner does
            kept = []
        else:
            kept = [r for r in recs if latest.get(r.key) == r.offset and not (expired and r.value is None)]
        if any(r.value is None for r in kept):
            kept_tombstone_ts.append(h.max_timestamp)
        if len(kept) == len(recs):
            return batch
        removed += len(recs) - len(kept)
        if not kept:
            return None
        return build_batch([(r.key, r.value, r.headers, r.timestamp, r.offset - h.base_offset) for r in kept],
                           base_offset=h.base_offset, codec=h.codec, producer_id=h.producer_id,
                           producer_epoch=h.producer_epoch, base_sequence=h.base_sequence,
                           partition_leader_epoch=h.partition_leader_epoch,
                           log_append_time=h.log_append_time, transactional=h.is_transactional,
                           last_offset_delta=h.last_offset_delta)

    store.rewrite(clean, stable)
    plog.tombstones_due_ms = min(kept_tombstone_ts) + retention_ms if kept_tombstone_ts else None
    if removed:
        log.info("compacted", topic=plog.topic.name, partition=plog.index, removed=removed)
    plog._clean_bytes = plog.size_bytes
    return removed


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
