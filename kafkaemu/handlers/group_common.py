"""Shared by the group API handlers: whether this node coordinates the group, the client host as
Kafka shows it, the partition check of offset commits."""
from __future__ import annotations


def is_coordinator(ctx, group_id: str) -> bool:
    return ctx.placement.group_coordinator(group_id) == ctx.node_id


def client_host(ctx) -> str:
    host = ctx.client_host or ""
    return host if host.startswith("/") else "/" + host   # as Java's InetAddress.toString()


def partition_exists(ctx):
    def exists(topic: str, partition: int) -> bool:
        t = ctx.store.get(topic)
        return t is not None and 0 <= partition < len(t.partitions)
    return exists

