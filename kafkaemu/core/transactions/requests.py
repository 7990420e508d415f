"""Transaction coordinator requests as the core takes them, already normalised to the newest
version (handlers build them from decoded requests; tests build them directly)."""
from __future__ import annotations

from dataclasses import dataclass, field

TopicPartition = tuple[str, int]


@dataclass
class InitProducerId:
    transactional_id: str | None
    transaction_timeout_ms: int
    producer_id: int = -1            # v3+: the current id and epoch of a producer recovering (KIP-360)
    producer_epoch: int = -1


@dataclass
class AddPartitions:
    transactional_id: str
    producer_id: int
    producer_epoch: int
    partitions: list[TopicPartition] = field(default_factory=list)
    transaction_version: int = 0     # 2: added by a V2 producer's write (KIP-890 part 2)


@dataclass
class EndTxn:
    transactional_id: str
    producer_id: int
    producer_epoch: int
    committed: bool
    transaction_version: int = 0     # 2: EndTxn v5 (KIP-890 part 2), an epoch bump per transaction


@dataclass
class ListTransactions:
    state_filters: list[str] = field(default_factory=list)
    producer_id_filters: list[int] = field(default_factory=list)
    duration_filter_ms: int = -1     # v1+: only transactions open longer than this
