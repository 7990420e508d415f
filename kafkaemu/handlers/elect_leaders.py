"""ElectLeaders (key 43), v0-v2, as Kafka's controller elects (ReplicationControlManager).

PREFERRED (0) moves leadership to a partition's first replica; ELECTION_NOT_NEEDED when it
already leads, PREFERRED_LEADER_NOT_AVAILABLE while its node is stopped. UNCLEAN (1) elects the
first live replica of a partition without a leader (ELECTION_NOT_NEEDED when it has one,
ELIGIBLE_LEADERS_NOT_AVAILABLE when none is live). Null partitions: every partition, leaving
out those whose election is not needed. Needs ALTER on the cluster."""
from ..protocol.api_keys import ApiKey
from ..protocol.errors import DEFAULT_MESSAGES, ErrorCode
from .authorization import ALTER, authorize_cluster
from .registry import registry

PREFERRED, UNCLEAN = 0, 1


@registry.register(ApiKey.ELECT_LEADERS, 0, 2)
def elect_leaders(ctx, req):
    election = req.election_type if ctx.api_version >= 1 else PREFERRED
    requested = req.topic_partitions
    top = ErrorCode.NONE
    if not authorize_cluster(ctx, ALTER):
        top = ErrorCode.CLUSTER_AUTHORIZATION_FAILED
    elif election not in (PREFERRED, UNCLEAN):
        top = ErrorCode.INVALID_REQUEST
    if top != ErrorCode.NONE:
        results = [{"topic": t.topic, "partition_result": [
            {"partition_id": p, "error_code": top, "error_message": DEFAULT_MESSAGES.get(top)} for p in t.partitions]}
            for t in requested or []]
        return {"error_code": top, "replica_election_results": results}
    if requested is None:
        results = []
        for topic in ctx.store.topics.values():
            parts = [_result(ctx, topic.name, p.index, election) for p in topic.partitions]
            parts = [r for r in parts if r["error_code"] != ErrorCode.ELECTION_NOT_NEEDED]
            if parts:
                results.append({"topic": topic.name, "partition_result": parts})
    else:
        results = [{"topic": t.topic, "partition_result": [_result(ctx, t.topic, p, election) for p in t.partitions]}
                   for t in requested]
    return {"error_code": ErrorCode.NONE, "replica_election_results": results}


def _result(ctx, topic_name: str, index: int, election: int) -> dict:
    code, message = _elect(ctx, topic_name, index, election)
    return {"partition_id": index, "error_code": code, "error_message": message}


def _elect(ctx, topic_name: str, index: int, election: int) -> tuple[int, str | None]:
    topic = ctx.store.get(topic_name)
    if topic is None:
        return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"No such topic as {topic_name}"
    if not 0 <= index < len(topic.partitions):
        return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"No such partition as {topic_name}-{index}"
    placement = ctx.placement
    partition = topic.partitions[index]
    replicas = placement.replicas(partition)
    leader = placement.partition_leader(partition)
    live = [r for r in replicas if not placement.absent(r)]
    if election == PREFERRED:
        if leader == replicas[0]:
            return ErrorCode.ELECTION_NOT_NEEDED, "Leader election not needed for topic partition."
        if replicas[0] not in live:
            return ErrorCode.PREFERRED_LEADER_NOT_AVAILABLE, "The preferred leader was not available."
        placement.move_leader(topic_name, index, replicas[0])
    else:
        if leader >= 0:
            return ErrorCode.ELECTION_NOT_NEEDED, "Leader election not needed for topic partition."
        if not live:
            return ErrorCode.ELIGIBLE_LEADERS_NOT_AVAILABLE, "Eligible topic partition leaders are not available."
        placement.move_leader(topic_name, index, live[0])
    return ErrorCode.NONE, None
