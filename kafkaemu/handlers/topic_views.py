"""How brokers and partitions are described in Metadata-like responses (shared by
Metadata, DescribeCluster and DescribeTopicPartitions)."""
from ..protocol.errors import ErrorCode


def brokers(placement) -> list[dict]:
    """The live nodes (a node stopped through the control API, or unregistered, is left out, as
    Kafka lists only registered, unfenced brokers)."""
    return [{"node_id": n, "broker_id": n, "host": host, "port": port, "rack": None}
            for n, host, port in placement.live_nodes()]


def controller_id(ctx) -> int:
    """The controller id Metadata and DescribeCluster give: a KRaft broker names an alive broker
    (KafkaApis: metadataCache.getRandomAliveBrokerId), here the first node while it is one, else
    the first live node, -1 when none is."""
    placement = ctx.placement
    first = ctx.config.node_id
    if not placement.absent(first):
        return first
    live = placement.live_nodes()
    return live[0][0] if live else -1


def partitions_metadata(placement, partitions) -> list[dict]:
    """``partition_metadata`` of each partition (a whole topic, or a page of one). A full Metadata
    describes every partition of the cluster on each call, so the common case (one node, not
    stopped: every partition led by it) is built without a call per partition, its partitions
    sharing their (never modified) node lists: this halves the handler's time at 10,000 partitions."""
    nodes = placement.node_ids
    if len(nodes) != 1 or placement.absent(nodes[0]):
        return [partition_metadata(placement, p) for p in partitions]
    leader = nodes[0]
    none = ErrorCode.NONE
    replicas: list[int] = [leader]
    offline: list[int] = []
    return [{"error_code": none, "partition_index": p.index, "leader_id": leader, "leader_epoch": p.leader_epoch,
             "replica_nodes": replicas, "isr_nodes": replicas, "eligible_leader_replicas": None,
             "last_known_elr": None, "offline_replicas": offline} for p in partitions]


def partition_metadata(placement, partition) -> dict:
    replicas = placement.replicas(partition)
    offline = [r for r in replicas if placement.absent(r)]
    isr = [r for r in replicas if not placement.absent(r)]
    leader = placement.partition_leader(partition)
    if leader < 0:  # its leader's node is stopped or unregistered: offline, as Kafka describes such a partition
        return {"error_code": ErrorCode.LEADER_NOT_AVAILABLE, "partition_index": partition.index, "leader_id": -1,
                "leader_epoch": partition.leader_epoch, "replica_nodes": replicas, "isr_nodes": [],
                "eligible_leader_replicas": None, "last_known_elr": None, "offline_replicas": offline}
    return {
        "error_code": ErrorCode.NONE,
        "partition_index": partition.index,
        "leader_id": leader,
        "leader_epoch": partition.leader_epoch,
        "replica_nodes": replicas,
        "isr_nodes": isr,
        "eligible_leader_replicas": None,
        "last_known_elr": None,
        "offline_replicas": offline,
    }
