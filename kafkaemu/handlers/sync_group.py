"""SyncGroup (key 14), v0-v5.

Followers are parked until the leader's assignment arrives; the leader's map is stored in
__consumer_offsets and each member gets only its own assignment (empty if the leader left it
out). v5 checks protocol type and name (INCONSISTENT_GROUP_PROTOCOL). The empty group id gets
INVALID_GROUP_ID. Not implemented: authorization.
"""
from ..core.classic.requests import SyncGroup
from ..protocol.errors import ErrorCode
from .group_common import is_coordinator
from ..broker.context import DEFERRED
from ..protocol.api_keys import ApiKey
from .authorization import GROUP, READ, authorize
from .registry import registry


@registry.register(ApiKey.SYNC_GROUP, 0, 5)
def sync_group(ctx, req):
    if not authorize(ctx, READ, GROUP, req.group_id):
        return {"error_code": ErrorCode.GROUP_AUTHORIZATION_FAILED, "assignment": b""}
    if req.group_id and not is_coordinator(ctx, req.group_id):  # "": INVALID_GROUP_ID first
        return {"error_code": ErrorCode.NOT_COORDINATOR, "assignment": b""}
    version = ctx.api_version
    ctx.groups.sync_group(ctx.now_ms, SyncGroup(
        group_id=req.group_id,
        generation_id=req.generation_id,
        member_id=req.member_id,
        assignments={a.member_id: bytes(a.assignment) for a in req.assignments},
        group_instance_id=req.group_instance_id if version >= 3 else None,
        protocol_type=req.protocol_type if version >= 5 else None,
        protocol_name=req.protocol_name if version >= 5 else None,
    ), ctx.respond)
    return DEFERRED
