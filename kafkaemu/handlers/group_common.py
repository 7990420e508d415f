"""Shared by the group API handlers: coordinator lookup, NOT_COORDINATOR, old-version shapes."""
from __future__ import annotations

from ..storage.log_store import OFFSETS_TOPIC


def coordinator_node(broker, key: str) -> int:
    """The node leading the key's __consumer_offsets partition (every key on a single broker): the
    partition the coordinator writes the group's records to."""
    topic = broker.store.get(OFFSETS_TOPIC)
    index = broker.coordinator.partition_for(key)
    if topic is None or index >= len(topic.partitions):
        return broker.node_id
    return broker.partition_leader(topic.partitions[index])


def is_coordinator(ctx, group_id: str) -> bool:
    return coordinator_node(ctx.broker, group_id) == ctx.node_id


def client_host(ctx) -> str:
    host = ctx.client_host or ""
    return host if host.startswith("/") else "/" + host   # as Java's InetAddress.toString()


def partition_exists(broker):
    def exists(topic: str, partition: int) -> bool:
        t = broker.store.get(topic)
        return t is not None and 0 <= partition < len(t.partitions)
    return exists

