"""ConsumerGroupHeartbeat (key 68), v0-v1: the KIP-848 consumer group protocol.

Joining (epoch 0), heartbeating, reconciling (incremental revocation) and leaving (epoch -1, or -2
for a static member's temporary leave) through kafkaemu/core/consumer/manager.py, with the
server-side assignors "uniform" (default) and "range". v1 requires a client-generated member id and
adds subscribed_topic_regex (Python ``re`` with full-match semantics stands in for Kafka's RE2/J;
internal topics never match). v0 members joining with an empty member id get a generated one.
Session timeout and heartbeat interval are the broker settings group.consumer.session.timeout.ms
(45000) and group.consumer.heartbeat.interval.ms (5000), BrokerConfig fields (--override names).
With authorization on: READ on the group, DESCRIBE on each topic subscribed by name, and a regex
resolves only to the topics the principal may describe (core/consumer/regex_resolution.py).
Not implemented: rack-aware assignment, client-side assignors. Group state is written to
__consumer_offsets as Kafka's ConsumerGroup* records.
"""
from ..core.consumer.requests import ConsumerHeartbeat
from ..protocol.errors import ErrorCode
from .consumer_group_topics import topic_metas
from .group_common import client_host, is_coordinator
from ..protocol.api_keys import ApiKey
from .authorization import DESCRIBE, GROUP, READ, TOPIC, authorize, denied_names
from .registry import registry


@registry.register(ApiKey.CONSUMER_GROUP_HEARTBEAT, 0, 1)
def consumer_group_heartbeat(ctx, req):
    if ctx.authorizer is not None:   # authorization off, the common case, asks nothing
        if not authorize(ctx, READ, GROUP, req.group_id):
            return {"error_code": ErrorCode.GROUP_AUTHORIZATION_FAILED, "member_epoch": 0,
                    "heartbeat_interval_ms": 0}
        if req.subscribed_topic_names and denied_names(ctx, DESCRIBE, TOPIC, req.subscribed_topic_names):
            # KafkaApis answers the code alone
            return {"error_code": ErrorCode.TOPIC_AUTHORIZATION_FAILED, "member_epoch": 0, "heartbeat_interval_ms": 0}
    if not is_coordinator(ctx, req.group_id):
        return {"error_code": ErrorCode.NOT_COORDINATOR, "member_epoch": 0, "heartbeat_interval_ms": 0}
    owned = None
    if req.topic_partitions is not None:
        owned = {bytes(tp.topic_id): set(tp.partitions) for tp in req.topic_partitions}
    heartbeat = ConsumerHeartbeat(
        group_id=req.group_id,
        member_id=req.member_id,
        member_epoch=req.member_epoch,
        instance_id=req.instance_id,
        rack_id=req.rack_id,
        rebalance_timeout_ms=req.rebalance_timeout_ms,
        subscribed_topic_names=None if req.subscribed_topic_names is None else list(req.subscribed_topic_names),
        subscribed_topic_regex=req.subscribed_topic_regex if ctx.api_version >= 1 else None,
        server_assignor=req.server_assignor,
        owned=owned,
        client_id=ctx.client_id or "",
        client_host=client_host(ctx),
        api_version=ctx.api_version,
    )
    if ctx.authorizer is not None:   # a regex resolves to the topics this principal may describe
        heartbeat.principal, heartbeat.principal_host = ctx.principal, ctx.client_host
    return ctx.groups.consumer_group_heartbeat(ctx.now_ms, heartbeat, topic_metas(ctx))
