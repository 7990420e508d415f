"""Transaction metadata as __transaction_state records, in Apache Kafka's format (TransactionLog).

Key: TransactionLogKey version 0 (the transactional id). Value: TransactionLogValue version 0
while the finalized ``transaction.version`` is 0, version 1 (flexible: previous/next producer ids
and the client's transaction version as tagged fields) from 1 on, as Kafka's
TransactionVersion.transactionLogValueVersion; both are read. The partitions
are null in state Empty and grouped by topic otherwise. A null value (tombstone) removes an expired
transactional id. Kafka does not write the last producer epoch: a loaded one is -1.
"""
from __future__ import annotations

from dataclasses import dataclass

from ...protocol.catalog import catalog
from ..record_format import split, versioned
from .metadata import NO_PRODUCER_EPOCH, TransactionMetadata, TxnTransit
from .state import TransactionState

KEY_VERSIONS = (0,)
KEY_VERSION = 0
VALUE_VERSIONS = (0, 1)


@dataclass(frozen=True)
class TransactionKey:
    transactional_id: str


def encode_key(transactional_id: str) -> bytes:
    body = catalog().data("TransactionLogKey", KEY_VERSION).encode({"transactional_id": transactional_id})
    return versioned(KEY_VERSION, body)


def decode_key(data: bytes) -> TransactionKey:
    version, body = split(data)
    if version not in KEY_VERSIONS:
        raise ValueError(f"key version {version} is not a transaction log key")
    return TransactionKey(catalog().data("TransactionLogKey", version).decode(body).transactional_id)


def value_version(transaction_version: int) -> int:
    return 1 if transaction_version >= 1 else 0


def encode_value(t: TxnTransit, transaction_version: int = 0) -> bytes:
    if t.state is TransactionState.EMPTY and t.partitions:
        raise ValueError(f"a transaction in state Empty has no partitions: {t}")
    partitions = None
    if t.state is not TransactionState.EMPTY:
        by_topic: dict[str, list[int]] = {}
        for topic, partition in sorted(t.partitions):
            by_topic.setdefault(topic, []).append(partition)
        partitions = [{"topic": topic, "partition_ids": ids} for topic, ids in by_topic.items()]
    version = value_version(transaction_version)
    body = catalog().data("TransactionLogValue", version).encode({
        "producer_id": t.producer_id,
        "previous_producer_id": t.prev_producer_id,
        "next_producer_id": t.next_producer_id,
        "client_transaction_version": t.client_transaction_version,
        "producer_epoch": t.producer_epoch,
        "transaction_timeout_ms": t.txn_timeout_ms,
        "transaction_status": t.state.id,
        "transaction_partitions": partitions,
        "transaction_last_update_timestamp_ms": t.txn_last_update_timestamp,
        "transaction_start_timestamp_ms": t.txn_start_timestamp,
    })
    return versioned(version, body)


def decode_value(transactional_id: str, data: bytes) -> TransactionMetadata:
    version, body = split(data)
    if version not in VALUE_VERSIONS:
        raise ValueError(f"unknown transaction log value version {version}")
    v = catalog().data("TransactionLogValue", version).decode(body)
    state = TransactionState.from_id(v.transaction_status)
    partitions = () if state is TransactionState.EMPTY or v.transaction_partitions is None else \
        [(p.topic, i) for p in v.transaction_partitions for i in p.partition_ids]
    return TransactionMetadata(
        transactional_id, v.producer_id, v.producer_epoch, v.transaction_timeout_ms, state,
        v.transaction_last_update_timestamp_ms, previous_producer_id=v.previous_producer_id,
        next_producer_id=v.next_producer_id, last_producer_epoch=NO_PRODUCER_EPOCH, partitions=partitions,
        txn_start_timestamp=v.transaction_start_timestamp_ms,
        client_transaction_version=v.client_transaction_version)
