"""ShareGroupHeartbeat as the share group manager takes it, and Kafka's checks before any group is
looked at (GroupCoordinatorService.throwIfShareGroupHeartbeatRequestIsInvalid), with its messages."""
from __future__ import annotations

from dataclasses import dataclass

from ...protocol.errors import ErrorCode
from ..modern.requests import check_ids, invalid

E = ErrorCode
LEAVE_GROUP_MEMBER_EPOCH = -1


@dataclass
class ShareHeartbeat:
    group_id: str
    member_id: str
    member_epoch: int
    rack_id: str | None = None
    subscribed_topic_names: list[str] | None = None
    client_id: str = ""
    client_host: str = ""


def validate_heartbeat(req: ShareHeartbeat) -> None:
    check_ids(req)
    if req.member_epoch == 0:
        if not req.subscribed_topic_names:
            invalid("SubscribedTopicNames must be set in first request.")
    elif req.member_epoch < LEAVE_GROUP_MEMBER_EPOCH:
        invalid("MemberEpoch is invalid.")
