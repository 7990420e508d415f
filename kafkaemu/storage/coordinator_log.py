"""A coordinator's records in its internal topic (``__consumer_offsets``, ``__transaction_state``,
``__share_group_state``): each call's records appended as one batch, and read back when the
coordinator is built or loaded. The topics themselves are prepared at start by their own modules
(``offsets_topic``, ...); this one, with the record batch format, comes with the first coordinator."""
from __future__ import annotations

import struct
from typing import Iterator

from ..core.runtime import AppendError
from ..logging import get_logger
from ..protocol.errors import ErrorCode
from . import topic_config
from .record_batch import InvalidBatch, iter_records, parse_header

log = get_logger("kafkaemu.coordinator_log")

_CONTROL_KEY = struct.Struct(">hh")   # version 0, type: 0 abort, 1 commit


def append_coordinator_batch(topic, partition: int, records: list[tuple[bytes, bytes | None]], now_ms: int,
                             producer_id: int = -1, producer_epoch: int = -1) -> None:
    """Append a coordinator's records (of one call) as one batch to a partition of its internal
    topic; transactional when written for a producer. A refusal raises AppendError with the
    partition's error, which the coordinator's runtime answers as Kafka does (the write is undone)."""
    if topic is None or not 0 <= partition < len(topic.partitions):
        raise AppendError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"no partition {partition} to write to")
    plog = topic.partitions[partition]
    try:
        plog.append_keyed(records, now_ms, producer_id, producer_epoch)
    except InvalidBatch as exc:
        error = ErrorCode.__members__.get(exc.code_name, ErrorCode.UNKNOWN_SERVER_ERROR)
        raise AppendError(error, f"{topic.name}-{partition} refused the coordinator's batch: {exc}") from None
    for _, value in records:   # a loop, not any(): no generator on every commit
        if value is None:   # compaction drops tombstones after delete.retention.ms
            due = now_ms + topic_config.int_config(plog.configs, "delete.retention.ms")
            plog.tombstones_due_ms = due if plog.tombstones_due_ms is None else min(plog.tombstones_due_ms, due)
            break


def read_keyed_records(topic, skipped_event: str) -> Iterator[tuple[bytes, bytes | None]]:
    """Every keyed (key, value) of a coordinator's internal topic (None: nothing), partition by
    partition in offset order, control batches passed over; a batch that cannot be read is logged
    as ``skipped_event`` and skipped."""
    if topic is None:
        return
    for plog in topic.partitions:
        for batch in plog.batches():
            try:
                if parse_header(batch).is_control:
                    continue
                records = list(iter_records(batch))
            except Exception as exc:
                log.error(skipped_event, topic=topic.name, partition=plog.index, error=str(exc)[:200])
                continue
            for record in records:
                if record.key is not None:
                    yield record.key, record.value


def partition_records(plog) -> Iterator[tuple[bytes, bytes | None]]:
    """One partition's keyed (key, value) records, end markers passed over."""
    for entry in partition_entries(plog):
        if isinstance(entry, tuple):   # not an EndTransactionMarker
            yield entry[0], entry[1]


def partition_entries(plog) -> Iterator:
    """One partition's keyed records and end markers, as the group coordinator replays them:
    ``(key, value)``, ``(key, value, producer_id)`` for the records of a transactional batch, and an
    ``EndTransactionMarker`` for each commit/abort control batch; a batch whose records cannot be
    read is logged and skipped."""
    from ..core.record_format import EndTransactionMarker   # the coordinators' record framing, when read
    for batch in plog.batches():
        try:
            header = parse_header(batch)
            records = list(iter_records(batch))
        except Exception as exc:
            log.error("offsets_batch_skipped", partition=plog.index, error=str(exc)[:200])
            continue
        if header.is_control:
            for record in records:
                if record.key is not None and len(record.key) >= 4:
                    version, kind = _CONTROL_KEY.unpack_from(record.key)
                    if kind in (0, 1):
                        yield EndTransactionMarker(header.producer_id, kind == 1)
            continue
        pid = header.producer_id if header.is_transactional else -1
        for record in records:
            if record.key is not None:
                yield (record.key, record.value) if pid < 0 else (record.key, record.value, pid)
