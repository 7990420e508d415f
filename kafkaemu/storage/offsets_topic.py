"""The __consumer_offsets topic in the log store: creation (and repair) at start, the coordinator's
sink, and reading it back."""
from __future__ import annotations

from typing import Iterator

from ..logging import get_logger

import struct

from ..core.placement import partition_for
from ..core.runtime import AppendError
from ..protocol.errors import ErrorCode
from . import topic_config
from .log_store import OFFSETS_TOPIC
from .record_batch import build_batch, iter_records, parse_header

log = get_logger("kafkaemu.offsets_topic")

OFFSETS_TOPIC_CONFIGS = {"cleanup.policy": "compact", "compression.type": "producer",
                         "segment.bytes": "104857600"}


class OffsetsTopicError(Exception):
    """The data directory holds a __consumer_offsets the broker cannot use (the message says why)."""


def ensure_offsets_topic(store, num_partitions: int):
    topic = store.get(OFFSETS_TOPIC)
    if topic is None:
        topic = store.create_topic(OFFSETS_TOPIC, num_partitions, dict(OFFSETS_TOPIC_CONFIGS), internal=True)
    return topic


def prepare_offsets_topic(store, num_partitions: int, where: str = "the data directory"):
    """Make __consumer_offsets the internal topic before any request is served; returns it.

    Absent: created with ``num_partitions`` (offsets.topic.num.partitions). Already internal: kept,
    and its own partition count is the one groups are placed by, as in Kafka (changing the setting
    later does not move groups). An ordinary topic of that name (older kafkaemu auto-created it
    when a client looked it up before any group existed, e.g. kafka-python ``partitions_for``) is
    repaired in place: those versions wrote each group's records to partition
    ``partition_for(group, num_partitions)`` already, so growing the topic to ``num_partitions``
    and marking it internal and compacted moves no record. If a group record sits anywhere else,
    or the topic has more partitions than that, it cannot be repaired without guessing:
    OffsetsTopicError, naming ``where``.
    """
    topic = store.get(OFFSETS_TOPIC)
    if topic is None:
        return ensure_offsets_topic(store, num_partitions)
    if topic.internal:
        if len(topic.partitions) != num_partitions:
            log.info("offsets_topic_partitions_kept", partitions=len(topic.partitions),
                     configured=num_partitions)
        return topic
    have = len(topic.partitions)
    if have > num_partitions:
        raise OffsetsTopicError(
            f"{where} holds an ordinary topic {OFFSETS_TOPIC} with {have} partitions, more than "
            f"offsets.topic.num.partitions={num_partitions}; it cannot be made the internal offsets topic. "
            f"Remove the {OFFSETS_TOPIC} entry and directories from it, or use another directory.")
    from ..core.coordinator import record_group_id   # the group coordinator, only for a repair
    for plog in topic.partitions:
        for key, _ in _partition_records(plog):
            group = record_group_id(key)
            if group is not None and partition_for(group, num_partitions) != plog.index:
                raise OffsetsTopicError(
                    f"{where} holds an ordinary topic {OFFSETS_TOPIC} whose records of group {group!r} sit in "
                    f"partition {plog.index}, not where offsets.topic.num.partitions={num_partitions} places "
                    f"them; it cannot be made the internal offsets topic. Start with the "
                    f"offsets.topic.num.partitions it was written with, or remove {OFFSETS_TOPIC} from it.")
    if have < num_partitions:
        store.add_partitions(OFFSETS_TOPIC, num_partitions)
    store.make_internal(OFFSETS_TOPIC, OFFSETS_TOPIC_CONFIGS)
    log.warning("offsets_topic_repaired", partitions_before=have, partitions=num_partitions,
                reason="found as an ordinary topic; made the internal offsets topic")
    return topic


def log_sink(store, num_partitions: int):
    """A coordinator sink appending each call's records as one batch to the group's partition
    (creating the topic on first use when nothing created it before); a transactional offset
    commit's records form a transactional batch of its producer (no sequence, as Kafka's
    coordinator writes them), which opens the producer's transaction on the partition."""
    def append(partition: int, records: list[tuple[bytes, bytes | None]], now_ms: int, *,
               producer_id: int = -1, producer_epoch: int = -1) -> None:
        if not records:
            return
        append_coordinator_batch(ensure_offsets_topic(store, num_partitions), partition, records, now_ms,
                                 producer_id, producer_epoch)
    return append


def append_coordinator_batch(topic, partition: int, records: list[tuple[bytes, bytes | None]], now_ms: int,
                             producer_id: int = -1, producer_epoch: int = -1) -> None:
    """Append a coordinator's records (of one call) as one batch to a partition of its internal
    topic; transactional when written for a producer. A refusal raises AppendError with the
    partition's error, which the coordinator's runtime answers as Kafka does (the write is undone)."""
    if topic is None or not 0 <= partition < len(topic.partitions):
        raise AppendError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"no partition {partition} to write to")
    batch = build_batch([(key, value, (), now_ms) for key, value in records], producer_id=producer_id,
                        producer_epoch=producer_epoch, transactional=producer_id >= 0)
    plog = topic.partitions[partition]
    result = plog.append_batch(batch, now_ms)
    if result.error != "NONE":
        error = ErrorCode.__members__.get(result.error, ErrorCode.UNKNOWN_SERVER_ERROR)
        raise AppendError(error, f"{topic.name}-{partition} refused the coordinator's batch: {result.message or ''}")
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


def read_records(store) -> Iterator[tuple[bytes, bytes | None]]:
    """Every (key, value) of __consumer_offsets, partition by partition in offset order."""
    for entry in read_entries(store):
        if isinstance(entry, tuple):   # not an EndTransactionMarker
            yield entry[0], entry[1]


def read_entries(store) -> Iterator:
    """What the group coordinator replays, partition by partition in offset order: ``(key, value)``,
    ``(key, value, producer_id)`` for the records of a transactional batch, and an
    ``EndTransactionMarker`` for each commit/abort control batch."""
    topic = store.get(OFFSETS_TOPIC)
    if topic is None:
        return
    for plog in topic.partitions:
        yield from _partition_entries(plog)


_CONTROL_KEY = struct.Struct(">hh")   # version 0, type: 0 abort, 1 commit


def _partition_records(plog) -> Iterator[tuple[bytes, bytes | None]]:
    for entry in _partition_entries(plog):
        if isinstance(entry, tuple):   # not an EndTransactionMarker
            yield entry[0], entry[1]


def _partition_entries(plog) -> Iterator:
    """One partition's keyed records and end markers; a batch whose records cannot be read is
    logged and skipped."""
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
