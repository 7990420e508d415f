"""Heartbeat (key 12), v0-v4.

Keeps a member's session alive; REBALANCE_IN_PROGRESS while the group prepares a rebalance,
ILLEGAL_GENERATION / UNKNOWN_MEMBER_ID / FENCED_INSTANCE_ID as Kafka; the empty group id gets
INVALID_GROUP_ID. Not implemented: authorization.
"""
from ..core.classic.requests import Heartbeat
from ..protocol.errors import ErrorCode
from .group_common import is_coordinator
from ..protocol.api_keys import ApiKey
from .authorization import GROUP, READ, authorize
from .registry import registry


@registry.register(ApiKey.HEARTBEAT, 0, 4)
def heartbeat(ctx, req):
    if ctx.authorizer is not None and not authorize(ctx, READ, GROUP, req.group_id):
        return {"error_code": ErrorCode.GROUP_AUTHORIZATION_FAILED}
    if req.group_id and not is_coordinator(ctx, req.group_id):  # "": INVALID_GROUP_ID first
        return {"error_code": ErrorCode.NOT_COORDINATOR}
    return ctx.groups.heartbeat(ctx.now_ms, Heartbeat(
        group_id=req.group_id,
        generation_id=req.generation_id,
        member_id=req.member_id,
        group_instance_id=req.group_instance_id if ctx.api_version >= 3 else None,
    ))
