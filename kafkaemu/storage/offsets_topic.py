"""The __consumer_offsets topic in the log store: creation (and repair) at start, the coordinator's
sink, and reading it back (their batches: ``coordinator_log``, imported with the coordinator)."""
from __future__ import annotations

from typing import Iterator

from ..core.placement import partition_for
from ..logging import get_logger
from .log_store import OFFSETS_TOPIC

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
    from .coordinator_log import partition_records
    for plog in topic.partitions:
        for key, _ in partition_records(plog):
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
    from .coordinator_log import append_coordinator_batch

    def append(partition: int, records: list[tuple[bytes, bytes | None]], now_ms: int, *,
               producer_id: int = -1, producer_epoch: int = -1) -> None:
        if not records:
            return
        append_coordinator_batch(ensure_offsets_topic(store, num_partitions), partition, records, now_ms,
                                 producer_id, producer_epoch)
    return append


def read_records(store) -> Iterator[tuple[bytes, bytes | None]]:
    """Every (key, value) of __consumer_offsets, partition by partition in offset order."""
    for entry in read_entries(store):
        if isinstance(entry, tuple):   # not an EndTransactionMarker
            yield entry[0], entry[1]


def read_entries(store) -> Iterator:
    """What the group coordinator replays, partition by partition in offset order: ``(key, value)``,
    ``(key, value, producer_id)`` for the records of a transactional batch, and an
    ``EndTransactionMarker`` for each commit/abort control batch."""
    from .coordinator_log import partition_entries
    topic = store.get(OFFSETS_TOPIC)
    if topic is None:
        return
    for plog in topic.partitions:
        yield from partition_entries(plog)
