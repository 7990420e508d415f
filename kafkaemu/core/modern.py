"""What KIP-848 consumer groups and KIP-932 share groups share (Kafka's coordinator.group.modern):
the subscribed topics' metadata, assignments (topic id -> partitions), and the parts of their
heartbeat answers that are the same (the error answer, an assignment on the wire)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from ..protocol.errors import ErrorCode

Assignment = dict[bytes, frozenset[int]]   # topic id -> partitions


@dataclass(frozen=True)
class TopicMeta:
    name: str
    topic_id: bytes
    num_partitions: int


def assignment_of(partitions: Iterable[tuple[bytes, int]]) -> Assignment:
    """(topic id, partition) pairs as an Assignment."""
    by_topic: dict[bytes, set[int]] = {}
    for tid, p in partitions:
        by_topic.setdefault(tid, set()).add(p)
    return {tid: frozenset(ps) for tid, ps in by_topic.items()}


def error_response(code: ErrorCode, message: str | None = None) -> dict:
    """A ConsumerGroupHeartbeat or ShareGroupHeartbeat answer carrying an error."""
    return {"error_code": int(code), "error_message": message, "member_id": None, "member_epoch": 0,
            "heartbeat_interval_ms": 0, "assignment": None}


def wire_assignment(assignment: Assignment) -> dict:
    """An assignment as a heartbeat answer carries it: topics in id order, partitions sorted, empty topics left out."""
    return {"topic_partitions": [{"topic_id": tid, "partitions": sorted(parts)}
                                 for tid, parts in sorted(assignment.items()) if parts]}
