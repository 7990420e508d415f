"""OffsetCommit as the offsets manager takes it, already normalised to the newest version.

Handlers build it from decoded requests; tests build it directly.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(slots=True)
class CommitPartition:
    """One partition of a commit, its fields named as the OffsetCommit / TxnOffsetCommit request's
    partition: a handler hands the decoded partitions over as they are (a field a version lacks
    decodes as its default, which is what the older version means)."""
    partition_index: int
    committed_offset: int
    committed_leader_epoch: int = -1
    committed_metadata: str | None = ""


@dataclass(slots=True)   # made per OffsetCommit request
class OffsetCommit:
    group_id: str
    topics: list[tuple[str, list[CommitPartition]]]
    generation_id: int = -1
    member_id: str = ""
    group_instance_id: str | None = None
    retention_time_ms: int = -1
    api_version: int = 9
    topic_ids: dict[str, bytes] | None = None   # v10: each topic's id, which its answer names too


@dataclass
class TxnOffsetCommit:
    """TxnOffsetCommit: offsets pending in a transaction until its marker commits or aborts them."""
    transactional_id: str
    group_id: str
    producer_id: int
    producer_epoch: int
    topics: list[tuple[str, list[CommitPartition]]]
    generation_id: int = -1          # v3+ (KIP-447); older versions carry no member
    member_id: str = ""
    group_instance_id: str | None = None
    api_version: int = 4
    topic_ids: None = None   # its handler names topics by id itself (a failed write is answered as OffsetCommit's)
