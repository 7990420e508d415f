"""The __consumer_offsets topic in the log store: creation, the coordinator's sink, and reading it back."""
from __future__ import annotations

from typing import Iterator

from ..storage.log_store import OFFSETS_TOPIC

OFFSETS_TOPIC_CONFIGS = {"cleanup.policy": "compact", "compression.type": "producer",
                         "segment.bytes": "104857600"}


def ensure_offsets_topic(store, num_partitions: int):
    topic = store.get(OFFSETS_TOPIC)
    if topic is None:
        topic = store.create_topic(OFFSETS_TOPIC, num_partitions, dict(OFFSETS_TOPIC_CONFIGS), internal=True)
    return topic


def log_sink(store, num_partitions: int):
    """A coordinator sink appending each call's records as one batch to the group's partition
    (creating the topic on first use, as Kafka creates it on the first group request)."""
    from ..storage.record_batch import build_batch

    def append(partition: int, records: list[tuple[bytes, bytes | None]], now_ms: int) -> None:
        if not records:
            return
        topic = ensure_offsets_topic(store, num_partitions)
        batch = build_batch([(key, value, (), now_ms) for key, value in records])
        topic.partitions[partition].append_batch(batch, now_ms)
    return append


def read_records(store) -> Iterator[tuple[bytes, bytes | None]]:
    """Every (key, value) of __consumer_offsets, partition by partition in offset order."""
    from ..storage.record_batch import iter_records

    topic = store.get(OFFSETS_TOPIC)
    if topic is None:
        return
    for plog in topic.partitions:
        for batch in plog.batches():
            for record in iter_records(batch):
                if record.key is not None:
                    yield record.key, record.value
