"""OffsetForLeaderEpoch (key 23), v2-v4 (Kafka 4 removed the older versions, KIP-896: they close the connection).

For each partition: the end offset of the requested leader epoch from the leader-epoch cache,
answered as Kafka's LeaderEpochFileCache.endOffsetFor (the current epoch ends at the log end;
an older epoch ends where the next one starts; an unknown newer epoch is -1/-1). v2+ checks
current_leader_epoch (FENCED_LEADER_EPOCH / UNKNOWN_LEADER_EPOCH), then leadership
(NOT_LEADER_OR_FOLLOWER when another emulated node leads the partition). Unknown topic or partition:
UNKNOWN_TOPIC_OR_PARTITION. Follower requests (replica_id >= 0) are answered the same way.
"""
from ..protocol.errors import ErrorCode
from .partition_access import serve_partition
from ..protocol.api_keys import ApiKey
from .authorization import CLUSTER_ACTION, DESCRIBE, TOPIC, authorize_cluster, denied_names
from .registry import registry


@registry.register(ApiKey.OFFSET_FOR_LEADER_EPOCH, 2, 4)
def offset_for_leader_epoch(ctx, req):
    store = ctx.store
    topics = []
    denied = () if ctx.authorizer is None or authorize_cluster(ctx, CLUSTER_ACTION) else \
        denied_names(ctx, DESCRIBE, TOPIC, [t.topic for t in req.topics])
    for t in req.topics:
        topic = store.get(t.topic)
        parts = []
        for p in t.partitions:
            plog, error = (None, ErrorCode.TOPIC_AUTHORIZATION_FAILED) if t.topic in denied else \
                serve_partition(ctx, topic, p.partition, p.current_leader_epoch)
            out = {"error_code": error, "partition": p.partition, "leader_epoch": -1, "end_offset": -1}
            if error == ErrorCode.NONE:
                out["leader_epoch"], out["end_offset"] = plog.end_offset_for_epoch(p.leader_epoch)
            parts.append(out)
        topics.append({"topic": t.topic, "partitions": parts})
    return {"throttle_time_ms": 0, "topics": topics}
