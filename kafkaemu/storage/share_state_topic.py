"""The __share_group_state topic in the log store: the share partitions' sink and reading it back
(the twin of transaction_state_topic.py). Kafka's share coordinator creates the topic when share
groups are first used; kafkaemu creates it at the first share-partition write, internal, compacted,
with ``partitions`` partitions (Kafka's share.coordinator.state.topic.num.partitions, 50)."""
from __future__ import annotations

from typing import Iterator

from ..logging import get_logger

log = get_logger("kafkaemu.share_state_topic")

SHARE_STATE_TOPIC = "__share_group_state"
SHARE_STATE_TOPIC_CONFIGS = {"cleanup.policy": "compact", "compression.type": "uncompressed",
                             "segment.bytes": "104857600", "min.insync.replicas": "1"}
SHARE_STATE_PARTITIONS = 50


def state_topic(store):
    """The topic, made internal (created when absent); its partition count places the records."""
    topic = store.get(SHARE_STATE_TOPIC)
    if topic is None:
        return store.create_topic(SHARE_STATE_TOPIC, SHARE_STATE_PARTITIONS, dict(SHARE_STATE_TOPIC_CONFIGS),
                                  internal=True)
    if not topic.internal:
        store.make_internal(SHARE_STATE_TOPIC, SHARE_STATE_TOPIC_CONFIGS)
        log.warning("share_state_topic_repaired", reason="found as an ordinary topic; made internal")
    return topic


def partition_count(store) -> int:
    topic = store.get(SHARE_STATE_TOPIC)
    return len(topic.partitions) if topic is not None else SHARE_STATE_PARTITIONS


def log_sink(store):
    """A share-partition state sink appending each call's records as one batch to a partition."""
    from .coordinator_log import append_coordinator_batch

    def append(partition: int, records: list[tuple[bytes, bytes | None]], now_ms: int) -> None:
        if records:
            append_coordinator_batch(state_topic(store), partition, records, now_ms)
    return append


def read_records(store) -> Iterator[tuple[bytes, bytes | None]]:
    """Every keyed (key, value) of __share_group_state, partition by partition in offset order; a
    batch that cannot be read is logged and skipped."""
    from .coordinator_log import read_keyed_records
    return read_keyed_records(store.get(SHARE_STATE_TOPIC), "share_state_batch_skipped")
