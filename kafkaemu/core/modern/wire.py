"""The parts of a ConsumerGroupHeartbeat and ShareGroupHeartbeat answer that are the same: the
answer carrying an error, and an assignment as the answer carries it."""
from __future__ import annotations

from ...protocol.errors import ErrorCode
from .group import Assignment


def error_response(code: ErrorCode, message: str | None = None) -> dict:
    """A ConsumerGroupHeartbeat or ShareGroupHeartbeat answer carrying an error."""
    return {"error_code": int(code), "error_message": message, "member_id": None, "member_epoch": 0,
            "heartbeat_interval_ms": 0, "assignment": None}


def wire_assignment(assignment: Assignment) -> dict:
    """An assignment as a heartbeat answer carries it: topics in id order, partitions sorted, empty topics left out."""
    return {"topic_partitions": [{"topic_id": tid, "partitions": sorted(parts)}
                                 for tid, parts in sorted(assignment.items()) if parts]}
