"""ConsumerGroupDescribe entries (newest shape); the heartbeat's answers are modern/wire.py's."""
from __future__ import annotations

from ...protocol.errors import ErrorCode
from ...protocol.operations import NOT_REQUESTED
from ..modern import Assignment
from .group import ConsumerGroup


# ConsumerGroupDescribe v1's member_type (KIP-1099): 0 a classic-protocol member of a consumer group
# (online migration), 1 a consumer-protocol member, as ConsumerGroupMember.asConsumerGroupDescribeMember
CLASSIC_MEMBER, CONSUMER_MEMBER = 0, 1


def described_group(group: ConsumerGroup, topics_by_id: dict[bytes, str], assignor: str,
                    authorized_operations: int) -> dict:
    def named(assignment: Assignment) -> dict:
        return {"topic_partitions": [
            {"topic_id": tid, "topic_name": topics_by_id.get(tid, ""), "partitions": sorted(parts)}
            for tid, parts in sorted(assignment.items()) if parts]}

    members = [{
        "member_id": m.member_id, "instance_id": m.instance_id, "rack_id": m.rack_id,
        "member_epoch": m.member_epoch, "client_id": m.client_id, "client_host": m.client_host,
        "subscribed_topic_names": list(m.subscribed_topic_names),
        "subscribed_topic_regex": "" if m.subscribed_topic_regex is None else m.subscribed_topic_regex,  # Kafka: ""
        "assignment": named(m.assigned), "target_assignment": named(group.target.get(m.member_id, {})),
        "member_type": CONSUMER_MEMBER,
    } for m in group.members.values()]
    return {"error_code": 0, "error_message": None, "group_id": group.group_id, "group_state": group.state.value,
            "group_epoch": group.group_epoch, "assignment_epoch": group.assignment_epoch,
            "assignor_name": assignor, "members": members, "authorized_operations": authorized_operations}


def described_error(code: ErrorCode, message: str | None, group_id: str) -> dict:
    return {"error_code": int(code), "error_message": message, "group_id": group_id, "group_state": "",
            "group_epoch": 0, "assignment_epoch": 0, "assignor_name": "", "members": [],
            "authorized_operations": NOT_REQUESTED}
