"""ShareGroupHeartbeat (key 76), v1 (KIP-932): joining (epoch 0), heartbeating and leaving (-1) a
share group through kafkaemu/core/share/manager.py, with Kafka's "simple" server assignor (a
partition goes to several members when they outnumber the partitions). A member takes its new
assignment at once (nothing is revoked first: share partitions are consumed together). Session
timeout and heartbeat interval: Kafka's group.share.* defaults (45 s, 5 s).
With authorization on, as KafkaApis.handleShareGroupHeartbeat: READ on the group
(GROUP_AUTHORIZATION_FAILED), then DESCRIBE on every topic subscribed (TOPIC_AUTHORIZATION_FAILED).
An empty member id, or one longer than 36 characters, is INVALID_REQUEST without a message, as
KafkaApis answers before the coordinator sees it.
Not implemented: rack-aware assignment; share-group membership is not written to
__consumer_offsets (after a restart members rejoin).
"""
from ..core.share.requests import ShareHeartbeat
from ..protocol.api_keys import ApiKey
from ..protocol.errors import ErrorCode
from .authorization import DESCRIBE, GROUP, READ, TOPIC, authorize, denied_names
from .consumer_group_topics import topic_metas
from .group_common import client_host, is_coordinator
from .registry import registry
from .share_common import MAX_MEMBER_ID_LENGTH


@registry.register(ApiKey.SHARE_GROUP_HEARTBEAT, 1, 1)
def share_group_heartbeat(ctx, req):
    if ctx.authorizer is not None:   # authorization off, the common case, asks nothing
        if not authorize(ctx, READ, GROUP, req.group_id):
            return {"error_code": ErrorCode.GROUP_AUTHORIZATION_FAILED, "member_epoch": 0, "heartbeat_interval_ms": 0}
        if req.subscribed_topic_names and denied_names(ctx, DESCRIBE, TOPIC, req.subscribed_topic_names):
            return {"error_code": ErrorCode.TOPIC_AUTHORIZATION_FAILED, "member_epoch": 0, "heartbeat_interval_ms": 0}
    if not req.member_id or len(req.member_id) > MAX_MEMBER_ID_LENGTH:   # KafkaApis.isMemberIdValid, no message
        return {"error_code": ErrorCode.INVALID_REQUEST, "member_epoch": 0, "heartbeat_interval_ms": 0}
    if not is_coordinator(ctx, req.group_id):
        return {"error_code": ErrorCode.NOT_COORDINATOR, "member_epoch": 0, "heartbeat_interval_ms": 0}
    heartbeat = ShareHeartbeat(
        group_id=req.group_id, member_id=req.member_id, member_epoch=req.member_epoch, rack_id=req.rack_id,
        subscribed_topic_names=None if req.subscribed_topic_names is None else list(req.subscribed_topic_names),
        client_id=ctx.client_id or "", client_host=client_host(ctx))
    return ctx.groups.share_group_heartbeat(ctx.now_ms, heartbeat, topic_metas(ctx))
