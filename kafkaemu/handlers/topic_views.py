"""How brokers and partitions are described in Metadata-like responses (shared by
Metadata, DescribeCluster and DescribeTopicPartitions)."""
from ..protocol.errors import ErrorCode


def brokers(broker) -> list[dict]:
    return [{"node_id": n, "broker_id": n, "host": host, "port": port, "rack": None}
            for n, (host, port) in sorted(broker.listeners.items())]


def partition_metadata(broker, partition) -> dict:
    leader = broker.partition_leader(partition)
    return {
        "error_code": ErrorCode.NONE,
        "partition_index": partition.index,
        "leader_id": leader,
        "leader_epoch": partition.leader_epoch,
        "replica_nodes": [leader],
        "isr_nodes": [leader],
        "eligible_leader_replicas": None,
        "last_known_elr": None,
        "offline_replicas": [],
    }
