"""ListPartitionReassignments (key 46), v0: the ongoing reassignments. A kafkaemu reassignment
completes when it is made (the partition's one log serves every replica), so none is ever
ongoing and the list is empty, as Kafka's once its reassignments finish. Needs DESCRIBE on the
cluster."""
from ..protocol.api_keys import ApiKey
from ..protocol.errors import ErrorCode
from .authorization import DESCRIBE, authorize_cluster
from .registry import registry


@registry.register(ApiKey.LIST_PARTITION_REASSIGNMENTS, 0, 0)
def list_partition_reassignments(ctx, req):
    if not authorize_cluster(ctx, DESCRIBE):
        # ListPartitionReassignmentsRequest.getErrorResponse: the topics asked for, each partition empty
        return {"error_code": ErrorCode.CLUSTER_AUTHORIZATION_FAILED, "error_message": "Cluster authorization failed.",
                "topics": [{"name": t.name, "partitions": [
                    {"partition_index": p, "replicas": [], "adding_replicas": [], "removing_replicas": []}
                    for p in t.partition_indexes]} for t in req.topics or []]}
    return {"error_code": ErrorCode.NONE, "error_message": None, "topics": []}
