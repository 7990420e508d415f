"""ShareGroupHeartbeat (key 76), v1 (KIP-932): joining (epoch 0), heartbeating and leaving (-1) a
share group through kafkaemu/core/share/manager.py, with Kafka's "simple" server assignor (a
partition goes to several members when they outnumber the partitions). A member takes its new
assignment at once (nothing is revoked first: share partitions are consumed together). Session
timeout and heartbeat interval: Kafka's group.share.* defaults (45 s, 5 s).
Not implemented: rack-aware assignment, authorization; share-group membership is not written to
__consumer_offsets (after a restart members rejoin).
"""
from ..core.share.requests import ShareHeartbeat
from ..protocol.api_keys import ApiKey
from ..protocol.errors import ErrorCode
from .consumer_group_topics import topic_metas
from .group_common import client_host, is_coordinator
from .registry import registry


@registry.register(ApiKey.SHARE_GROUP_HEARTBEAT, 1, 1)
def share_group_heartbeat(ctx, req):
    if not is_coordinator(ctx, req.group_id):
        return {"error_code": ErrorCode.NOT_COORDINATOR, "member_epoch": 0, "heartbeat_interval_ms": 0}
    heartbeat = ShareHeartbeat(
        group_id=req.group_id, member_id=req.member_id, member_epoch=req.member_epoch, rack_id=req.rack_id,
        subscribed_topic_names=None if req.subscribed_topic_names is None else list(req.subscribed_topic_names),
        client_id=ctx.client_id or "", client_host=client_host(ctx))
    return ctx.groups.share_group_heartbeat(ctx.now_ms, heartbeat, topic_metas(ctx))
