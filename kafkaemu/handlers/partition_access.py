"""Finding a partition and checking that this node may serve it: shared by the data-path handlers
(Produce, Fetch, ListOffsets, OffsetForLeaderEpoch, DeleteRecords)."""
from ..protocol.errors import ErrorCode


def find_partition(topic, index: int):
    if topic is None or index < 0 or index >= len(topic.partitions):
        return None
    return topic.partitions[index]


def leader_epoch_error(plog, current_leader_epoch: int):
    """Kafka's check of the client's current leader epoch: -1 skips it; older is fenced; newer is unknown."""
    if current_leader_epoch is None or current_leader_epoch < 0 or current_leader_epoch == plog.leader_epoch:
        return ErrorCode.NONE
    if current_leader_epoch < plog.leader_epoch:
        return ErrorCode.FENCED_LEADER_EPOCH
    return ErrorCode.UNKNOWN_LEADER_EPOCH


def partition_error(ctx, plog, current_leader_epoch: int = -1):
    """As Kafka's Partition.getLocalLog: the leader epoch first, then whether this node leads the
    partition (NOT_LEADER_OR_FOLLOWER when several nodes are emulated and another one leads it)."""
    error = leader_epoch_error(plog, current_leader_epoch)
    if error == ErrorCode.NONE and ctx.placement.partition_leader(plog) != ctx.node_id:
        return ErrorCode.NOT_LEADER_OR_FOLLOWER
    return error


def serve_partition(ctx, topic, index: int, current_leader_epoch: int = -1):
    """(partition log or None, error) for a request naming ``index`` of ``topic`` (None: unknown):
    UNKNOWN_TOPIC_OR_PARTITION, else ``partition_error``."""
    plog = find_partition(topic, index)
    if plog is None:
        return None, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    return plog, partition_error(ctx, plog, current_leader_epoch)


def current_leader(ctx, plog) -> dict:
    """KIP-951's hint sent with NOT_LEADER_OR_FOLLOWER / FENCED_LEADER_EPOCH."""
    return {"leader_id": ctx.placement.partition_leader(plog), "leader_epoch": plog.leader_epoch}


def node_endpoints(ctx, node_ids) -> list:
    listeners = ctx.placement.listeners
    return [{"node_id": n, "host": listeners[n][0], "port": listeners[n][1], "rack": None}
            for n in sorted(node_ids) if n in listeners]
