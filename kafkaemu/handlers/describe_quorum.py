"""DescribeQuorum (key 55), v0-v2: the metadata quorum (``ctx.quorum``, ``core/quorum.py``): a new
cluster's first node is a combined broker and controller, the single voter and leader of
``__cluster_metadata`` partition 0; the other running nodes are brokers, observers caught up, and
voters AddRaftVoter adds are listed as voters with the endpoints they were added with. A static
quorum (kraft.version 0) reports its voters without directory ids. The high watermark counts the
metadata records of the topics and partitions. Any other topic or partition, or more than one, is
INVALID_REQUEST as KafkaRaftClient answers. Needs DESCRIBE on the cluster."""
from ..core.quorum import CONTROLLER_LISTENER, directory_id
from ..protocol.api_keys import ApiKey
from ..protocol.errors import DEFAULT_MESSAGES, ErrorCode
from .authorization import DESCRIBE, authorize_cluster
from .registry import registry

METADATA_TOPIC = "__cluster_metadata"


@registry.register(ApiKey.DESCRIBE_QUORUM, 0, 2)
def describe_quorum(ctx, req):
    if not authorize_cluster(ctx, DESCRIBE):
        return _error(ErrorCode.CLUSTER_AUTHORIZATION_FAILED)
    if len(req.topics) != 1 or req.topics[0].topic_name != METADATA_TOPIC or len(req.topics[0].partitions) != 1 \
            or req.topics[0].partitions[0].partition_index != 0:
        return _error(ErrorCode.INVALID_REQUEST)
    quorum = ctx.quorum
    end = 1 + sum(1 + len(t.partitions) for t in ctx.store.topics.values())
    now = ctx.now_ms
    voters = sorted(quorum.voters.values(), key=lambda v: v.node_id)
    current = [_replica(v.node_id, quorum.voter_directory(v), end, now, now) for v in voters]
    observers = [_replica(n, directory_id(ctx.cluster_id, n), end, now, now) for n in ctx.placement.node_ids
                 if n not in quorum.voters and n not in ctx.placement.stopped_nodes]
    return {"error_code": ErrorCode.NONE, "error_message": "", "topics": [{
        "topic_name": METADATA_TOPIC, "partitions": [{
            "partition_index": 0, "error_code": ErrorCode.NONE, "error_message": "", "leader_id": quorum.leader_id,
            "leader_epoch": quorum.leader_epoch, "high_watermark": end, "current_voters": current,
            "observers": observers}]}],
        "nodes": [{"node_id": v.node_id, "listeners": _listeners(ctx, v)} for v in voters]}


def _listeners(ctx, voter) -> list[dict]:
    if voter.endpoints:
        return [{"name": name, "host": host, "port": port} for name, host, port in voter.endpoints]
    host, port = ctx.placement.listeners[voter.node_id]
    return [{"name": CONTROLLER_LISTENER, "host": host, "port": port}]


def _replica(node_id: int, directory: bytes, end: int, fetched_ms: int, caught_up_ms: int) -> dict:
    return {"replica_id": node_id, "replica_directory_id": directory, "log_end_offset": end,
            "last_fetch_timestamp": fetched_ms, "last_caught_up_timestamp": caught_up_ms}


def _error(code: int) -> dict:
    return {"error_code": code, "error_message": DEFAULT_MESSAGES.get(code), "topics": [], "nodes": []}
