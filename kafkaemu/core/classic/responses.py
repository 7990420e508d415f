"""The classic group API answers the manager builds: JoinGroup, SyncGroup and DescribeGroups
entries in their newest shape (handlers narrow them to older versions)."""
from __future__ import annotations

from ...protocol.errors import ErrorCode
from .state import ClassicGroupState


def join_response(error: ErrorCode = ErrorCode.NONE, member_id: str = "", generation_id: int = -1,
                  protocol_type: str | None = None, protocol_name: str | None = None,
                  leader: str | None = "", members: list | None = None, skip_assignment: bool = False) -> dict:
    return {"error_code": int(error), "member_id": member_id, "generation_id": generation_id,
            "protocol_type": protocol_type, "protocol_name": protocol_name, "leader": leader or "",
            "members": members or [], "skip_assignment": skip_assignment}


def sync_response(error: ErrorCode = ErrorCode.NONE, assignment: bytes = b"", protocol_type: str | None = None,
                  protocol_name: str | None = None) -> dict:
    return {"error_code": int(error), "assignment": assignment, "protocol_type": protocol_type,
            "protocol_name": protocol_name}


def current_join_answer(group, member_id: str, with_members: bool, leader: str | None = None,
                        skip_assignment: bool = False) -> dict:
    """The JoinGroup answer of the group's current generation (members: the leader's view)."""
    return join_response(ErrorCode.NONE, member_id, group.generation_id, group.protocol_type, group.protocol_name,
                         group.leader_id if leader is None else leader,
                         group.join_members_view() if with_members else [], skip_assignment)


def described_group(group_id: str, group, authorized_operations: int) -> dict:
    """A DescribeGroups entry; ``group`` None (unknown, or not a classic group) is described as Dead."""
    if group is None:
        return {"error_code": 0, "group_id": group_id, "group_state": ClassicGroupState.DEAD.value,
                "protocol_type": "", "protocol_data": "", "members": [],
                "authorized_operations": authorized_operations}
    stable = group.is_in(ClassicGroupState.STABLE)
    members = [{
        "member_id": m.member_id, "group_instance_id": m.group_instance_id,
        "client_id": m.client_id, "client_host": m.client_host,
        "member_metadata": m.metadata(group.protocol_name) if stable else b"",
        "member_assignment": m.assignment if stable else b"",
    } for m in group.members.values()]
    return {"error_code": 0, "group_id": group_id, "group_state": group.state.value,
            "protocol_type": group.protocol_type or "",
            "protocol_data": (group.protocol_name or "") if stable else "",
            "members": members, "authorized_operations": authorized_operations}
