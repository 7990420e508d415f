"""AlterPartitionReassignments (key 45), v0-v1, as Kafka's controller checks a reassignment
(ReplicationControlManager): an unknown topic or partition is UNKNOWN_TOPIC_OR_PARTITION, an
empty replica list, an unregistered node or a node listed twice INVALID_REPLICA_ASSIGNMENT, a
changed replica count with allow_replication_factor_change false INVALID_REPLICATION_FACTOR,
null replicas (cancel) NO_REASSIGNMENT_IN_PROGRESS. A reassignment completes at once: Metadata
shows the new replicas, the first one leading when the old leader is not among them
(``placement.reassign``). Needs ALTER on the cluster."""
from ..protocol.api_keys import ApiKey
from ..protocol.errors import ErrorCode
from .authorization import ALTER, authorize_cluster
from .registry import registry


@registry.register(ApiKey.ALTER_PARTITION_REASSIGNMENTS, 0, 1)
def alter_partition_reassignments(ctx, req):
    allow_rf_change = req.allow_replication_factor_change if ctx.api_version >= 1 else True
    if not authorize_cluster(ctx, ALTER):
        code = ErrorCode.CLUSTER_AUTHORIZATION_FAILED
        message = "Cluster authorization failed."
        return {"allow_replication_factor_change": allow_rf_change, "error_code": code, "error_message": message,
                "responses": [{"name": t.name, "partitions": [
                    {"partition_index": p.partition_index, "error_code": code, "error_message": message}
                    for p in t.partitions]} for t in req.topics]}
    responses = []
    for t in req.topics:
        parts = []
        for p in t.partitions:
            code, message = _reassign(ctx, t.name, p.partition_index, p.replicas, allow_rf_change)
            parts.append({"partition_index": p.partition_index, "error_code": code, "error_message": message})
        responses.append({"name": t.name, "partitions": parts})
    return {"allow_replication_factor_change": allow_rf_change, "error_code": ErrorCode.NONE,
            "error_message": None, "responses": responses}


def _reassign(ctx, topic_name, index, replicas, allow_rf_change) -> tuple[int, str | None]:
    topic = ctx.store.get(topic_name)
    if topic is None:
        return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"Unable to find a topic named {topic_name}."
    if not 0 <= index < len(topic.partitions):
        return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"Unable to find partition {topic_name}:{index}."
    if replicas is None:
        return ErrorCode.NO_REASSIGNMENT_IN_PROGRESS, None   # Kafka's controller sets no message here
    if not replicas:
        return ErrorCode.INVALID_REPLICA_ASSIGNMENT, "The manual partition assignment includes an empty replica list."
    previous = None
    for node in sorted(replicas):
        if node not in ctx.placement.listeners:
            return (ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                    f"The manual partition assignment includes broker {node}, but no such broker is registered.")
        if node == previous:
            return (ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                    f"The manual partition assignment includes the broker {node} more than once.")
        previous = node
    current = ctx.placement.replicas(topic.partitions[index])
    if not allow_rf_change and len(current) != len(replicas):
        return (ErrorCode.INVALID_REPLICATION_FACTOR,
                f"The replication factor is changed from {len(current)} to {len(replicas)} but "
                f"allowReplicationFactorChange is false.")
    ctx.placement.reassign(topic_name, index, list(replicas))
    return ErrorCode.NONE, None
