"""LeaveGroup (key 13), v0-v5.

v0-2 name one member and are turned into the v3 member list here; v3+ leave a batch, by member id
and/or group.instance.id (an empty member id with an instance id removes that static member), with
per-member errors. For v0-2 the member's error becomes the top-level error, as in Kafka.
The empty group id gets INVALID_GROUP_ID. Not implemented: authorization.
"""
from ..core.classic.requests import LeaveGroup, LeavingMember
from ..protocol.errors import ErrorCode
from .group_common import is_coordinator
from ..protocol.api_keys import ApiKey
from .authorization import GROUP, READ, authorize
from .registry import registry


@registry.register(ApiKey.LEAVE_GROUP, 0, 5)
def leave_group(ctx, req):
    version = ctx.api_version
    if not authorize(ctx, READ, GROUP, req.group_id):
        return {"error_code": ErrorCode.GROUP_AUTHORIZATION_FAILED, "members": []}
    if req.group_id and not is_coordinator(ctx, req.group_id):  # "": INVALID_GROUP_ID first
        return {"error_code": ErrorCode.NOT_COORDINATOR, "members": []}
    if version < 3:
        members = [LeavingMember(req.member_id)]
    else:
        members = [LeavingMember(m.member_id, m.group_instance_id, m.reason if version >= 5 else None)
                   for m in req.members]
    result = ctx.groups.leave_group(ctx.now_ms, LeaveGroup(req.group_id, members))
    if version < 3 and result["error_code"] == ErrorCode.NONE and result["members"]:
        result = dict(result, error_code=result["members"][0]["error_code"])
    return result
