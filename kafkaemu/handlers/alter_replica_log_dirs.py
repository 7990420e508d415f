"""AlterReplicaLogDirs (key 34), v1-v2: a node has one log dir (``describe_log_dirs.log_dir``),
so moving a replica to it changes nothing (NONE), any other path is LOG_DIR_NOT_FOUND, an unknown
partition UNKNOWN_TOPIC_OR_PARTITION and a partition without a replica on the node
NOT_LEADER_OR_FOLLOWER, as Kafka's ReplicaManager. Needs ALTER on the cluster."""
from ..protocol.api_keys import ApiKey
from ..protocol.errors import ErrorCode
from .authorization import ALTER, authorize_cluster
from .describe_log_dirs import log_dir
from .registry import registry


@registry.register(ApiKey.ALTER_REPLICA_LOG_DIRS, 1, 2)
def alter_replica_log_dirs(ctx, req):
    allowed = authorize_cluster(ctx, ALTER)
    here = log_dir(ctx, ctx.node_id)
    results: dict[str, list] = {}
    for d in req.dirs:
        for t in d.topics:
            parts = results.setdefault(t.name, [])
            for index in t.partitions:
                code = _check(ctx, d.path, here, t.name, index) if allowed else ErrorCode.CLUSTER_AUTHORIZATION_FAILED
                parts.append({"partition_index": index, "error_code": code})
    return {"results": [{"topic_name": name, "partitions": parts} for name, parts in results.items()]}


def _check(ctx, path: str, here: str, topic_name: str, index: int) -> int:
    if path != here:
        return ErrorCode.LOG_DIR_NOT_FOUND
    topic = ctx.store.get(topic_name)
    if topic is None or not 0 <= index < len(topic.partitions):
        return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    if ctx.node_id not in ctx.placement.replicas(topic.partitions[index]):
        return ErrorCode.NOT_LEADER_OR_FOLLOWER
    return ErrorCode.NONE
