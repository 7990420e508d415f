"""DescribeQuorum (key 55), v0-v2: the metadata quorum as a KRaft cluster whose first node is a
combined broker and controller, the single voter and leader of ``__cluster_metadata`` partition 0
(the node DescribeCluster names as controller); the other nodes are brokers, observers caught up.
The high watermark counts the metadata records of the topics and partitions. Any other topic or
partition, or more than one, is INVALID_REQUEST as KafkaRaftClient answers. Needs DESCRIBE on
the cluster."""
import hashlib

from ..protocol.api_keys import ApiKey
from ..protocol.errors import ErrorCode
from .authorization import DESCRIBE, authorize_cluster
from .registry import registry

METADATA_TOPIC = "__cluster_metadata"
LEADER_EPOCH = 1
CONTROLLER_LISTENER = "CONTROLLER"


@registry.register(ApiKey.DESCRIBE_QUORUM, 0, 2)
def describe_quorum(ctx, req):
    if not authorize_cluster(ctx, DESCRIBE):
        return _error(ErrorCode.CLUSTER_AUTHORIZATION_FAILED)
    if len(req.topics) != 1 or req.topics[0].topic_name != METADATA_TOPIC or len(req.topics[0].partitions) != 1 \
            or req.topics[0].partitions[0].partition_index != 0:
        return _error(ErrorCode.INVALID_REQUEST)
    controller = ctx.config.node_id
    end = 1 + sum(1 + len(t.partitions) for t in ctx.store.topics.values())
    now = ctx.now_ms
    voter = _replica(ctx, controller, end, -1, now)
    observers = [_replica(ctx, n, end, now, now) for n in ctx.placement.node_ids
                 if n != controller and n not in ctx.placement.stopped_nodes]
    host, port = ctx.placement.listeners[controller]
    return {"error_code": ErrorCode.NONE, "error_message": None, "topics": [{
        "topic_name": METADATA_TOPIC, "partitions": [{
            "partition_index": 0, "error_code": ErrorCode.NONE, "error_message": None, "leader_id": controller,
            "leader_epoch": LEADER_EPOCH, "high_watermark": end, "current_voters": [voter],
            "observers": observers}]}],
        "nodes": [{"node_id": controller, "listeners": [{"name": CONTROLLER_LISTENER, "host": host, "port": port}]}]}


def _replica(ctx, node_id: int, end: int, fetched_ms: int, caught_up_ms: int) -> dict:
    directory = hashlib.md5(f"{ctx.cluster_id}/{node_id}".encode()).digest()
    return {"replica_id": node_id, "replica_directory_id": directory, "log_end_offset": end,
            "last_fetch_timestamp": fetched_ms, "last_caught_up_timestamp": caught_up_ms}


def _error(code: int) -> dict:
    return {"error_code": code, "error_message": None, "topics": [], "nodes": []}
