"""The __transaction_state topic in the log store: creation at start, the transaction
coordinator's sink, and reading it back (the twin of offsets_topic.py)."""
from __future__ import annotations

from typing import Iterator

from ..logging import get_logger

log = get_logger("kafkaemu.transaction_state_topic")

TRANSACTION_STATE_TOPIC = "__transaction_state"
# As Kafka's TransactionStateManager.transactionTopicConfigs (records are never compressed).
TRANSACTION_STATE_TOPIC_CONFIGS = {"cleanup.policy": "compact", "compression.type": "uncompressed",
                                   "segment.bytes": "104857600", "unclean.leader.election.enable": "false"}


def prepare_transaction_state_topic(store, num_partitions: int):
    """Make __transaction_state the internal topic before any request is served; returns it.

    Absent: created with ``num_partitions`` (transaction.state.log.num.partitions). Already internal:
    kept with its own partition count, which transactional ids are placed by (as in Kafka). An
    ordinary topic of that name (an older kafkaemu auto-created it when a client looked it up) held
    no transaction records: it is grown to ``num_partitions`` if smaller and made internal.
    """
    topic = store.get(TRANSACTION_STATE_TOPIC)
    if topic is None:
        return store.create_topic(TRANSACTION_STATE_TOPIC, num_partitions, dict(TRANSACTION_STATE_TOPIC_CONFIGS),
                                  internal=True)
    if topic.internal:
        if len(topic.partitions) != num_partitions:
            log.info("transaction_state_topic_partitions_kept", partitions=len(topic.partitions),
                     configured=num_partitions)
        return topic
    have = len(topic.partitions)
    if have < num_partitions:
        store.add_partitions(TRANSACTION_STATE_TOPIC, num_partitions)
    store.make_internal(TRANSACTION_STATE_TOPIC, TRANSACTION_STATE_TOPIC_CONFIGS)
    log.warning("transaction_state_topic_repaired", partitions_before=have, partitions=len(topic.partitions),
                reason="found as an ordinary topic; made the internal transaction state topic")
    return topic


def log_sink(store):
    """A transaction coordinator sink appending each call's records as one batch to a partition."""
    from .coordinator_log import append_coordinator_batch

    def append(partition: int, records: list[tuple[bytes, bytes | None]], now_ms: int) -> None:
        if not records:
            return
        append_coordinator_batch(store.get(TRANSACTION_STATE_TOPIC), partition, records, now_ms)
    return append


def read_records(store) -> Iterator[tuple[bytes, bytes | None]]:
    """Every keyed (key, value) of __transaction_state, partition by partition in offset order; a
    batch that cannot be read is logged and skipped."""
    from .coordinator_log import read_keyed_records
    return read_keyed_records(store.get(TRANSACTION_STATE_TOPIC), "transaction_state_batch_skipped")
