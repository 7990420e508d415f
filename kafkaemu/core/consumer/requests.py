"""ConsumerGroupHeartbeat as the consumer group manager takes it (newest shape), and the checks
Kafka makes on a request before looking at any group (GroupMetadataManager
.throwIfConsumerGroupHeartbeatRequestIsInvalid), with Kafka's messages."""
from __future__ import annotations

import re
from dataclasses import dataclass

from ...protocol.errors import ErrorCode
from ..group_api import GroupError
from ..modern.requests import check_ids, invalid
from .member import LEAVE_GROUP_STATIC_MEMBER_EPOCH

E = ErrorCode


@dataclass
class ConsumerHeartbeat:
    """ConsumerGroupHeartbeat, newest shape; ``owned`` is topic id -> partitions or None."""
    group_id: str
    member_id: str
    member_epoch: int
    instance_id: str | None = None
    rack_id: str | None = None
    rebalance_timeout_ms: int = -1
    subscribed_topic_names: list[str] | None = None
    subscribed_topic_regex: str | None = None
    server_assignor: str | None = None
    owned: dict[bytes, set[int]] | None = None
    client_id: str = ""
    client_host: str = ""
    api_version: int = 1
    # who asks, for the regex's authorization while it is on: User:<name> and the client's address
    principal: str = "User:ANONYMOUS"
    principal_host: str = ""


def validate_heartbeat(req: ConsumerHeartbeat, assignors: list[str]) -> None:
    """Raise GroupError for a malformed request; ``assignors``: the server assignors offered."""
    check_ids(req, member_id_required=req.api_version >= 1 or req.member_epoch != 0)
    if req.member_epoch == 0:
        if req.rebalance_timeout_ms == -1:
            invalid("RebalanceTimeoutMs must be provided in first request.")
        if req.owned is None or req.owned:
            invalid("TopicPartitions must be empty when (re-)joining.")
        if not req.subscribed_topic_names and not req.subscribed_topic_regex:
            invalid("SubscribedTopicNames or SubscribedTopicRegex must be set in first request.")
    elif req.member_epoch == LEAVE_GROUP_STATIC_MEMBER_EPOCH:
        if req.instance_id is None:
            invalid("InstanceId can't be null.")
    elif req.member_epoch < LEAVE_GROUP_STATIC_MEMBER_EPOCH:
        invalid("MemberEpoch is invalid.")
    if req.subscribed_topic_regex is not None:
        try:
            re.compile(req.subscribed_topic_regex)
        except re.error as exc:
            raise GroupError(E.INVALID_REGULAR_EXPRESSION,
                             f"SubscribedTopicRegex `{req.subscribed_topic_regex}` is not a valid "
                             f"regular expression: {exc}.")
    if req.server_assignor is not None and req.server_assignor not in assignors:
        raise GroupError(E.UNSUPPORTED_ASSIGNOR,
                         f"ServerAssignor {req.server_assignor} is not supported. Supported assignors: "
                         f"{', '.join(assignors)}.")
