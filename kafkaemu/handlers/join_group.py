"""JoinGroup (key 11), v0-v9.

Parks the reply until the group's join phase completes (or answers at once on errors,
MEMBER_ID_REQUIRED for v4+ dynamic members with an empty member id, or a rejoin in a settled
state). v0 has no rebalance timeout: the session timeout stands in, as in Kafka. Before v7 the
protocol name is not nullable; the codec writes a null one as "". The empty group id gets
INVALID_GROUP_ID; a protocol listed twice counts once (the coordinator keeps its first listing, see
``core.classic.requests.distinct_protocols``). A JoinGroup for a KIP-848 consumer group gets
INCONSISTENT_GROUP_PROTOCOL. Not implemented: classic members joining a consumer group (Kafka's
group.consumer.migration.policy), authorization.
"""
from ..core.classic.requests import JoinGroup
from ..protocol.errors import ErrorCode
from .group_common import client_host, is_coordinator
from ..broker.context import DEFERRED
from ..protocol.api_keys import ApiKey
from .authorization import GROUP, READ, authorize
from .consumer_group_topics import topic_metas
from .registry import registry


@registry.register(ApiKey.JOIN_GROUP, 0, 9)
def join_group(ctx, req):
    version = ctx.api_version
    if not authorize(ctx, READ, GROUP, req.group_id):
        return {"error_code": ErrorCode.GROUP_AUTHORIZATION_FAILED, "generation_id": -1, "member_id": "",
                "protocol_name": None}
    if req.group_id and not is_coordinator(ctx, req.group_id):  # "": INVALID_GROUP_ID first
        return {"error_code": ErrorCode.NOT_COORDINATOR, "member_id": req.member_id}
    rebalance_timeout = req.rebalance_timeout_ms if version >= 1 else req.session_timeout_ms
    ctx.groups.join_group(ctx.now_ms, JoinGroup(
        group_id=req.group_id,
        member_id=req.member_id,
        protocol_type=req.protocol_type,
        protocols=[(p.name, bytes(p.metadata)) for p in req.protocols],
        session_timeout_ms=req.session_timeout_ms,
        rebalance_timeout_ms=rebalance_timeout,
        group_instance_id=req.group_instance_id if version >= 5 else None,
        client_id=ctx.client_id or "",
        client_host=client_host(ctx),
        api_version=version,
        reason=req.reason if version >= 8 else None,
    ), ctx.respond, topic_metas(ctx))
    return DEFERRED
