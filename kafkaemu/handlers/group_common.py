"""Shared by the group API handlers: whether this node coordinates the group, the client host as
Kafka shows it, the partition check of offset commits, and the topics of a commit by topic id."""
from __future__ import annotations

from ..protocol.defaults import ZERO_UUID


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


def resolve_topic_ids(ctx, topics) -> tuple[list, list, dict]:
    """The topics of a commit by topic id (OffsetCommit v10, TxnOffsetCommit v6): (those whose id
    names a topic, each given that topic's name as Kafka sets it; those whose id names none; name -> id)."""
    known, unknown, ids = [], [], {}
    for t in topics:
        topic = None if t.topic_id == ZERO_UUID else ctx.store.by_id(t.topic_id)
        if topic is None:
            unknown.append(t)
        else:
            t["name"] = topic.name
            ids[topic.name] = t.topic_id
            known.append(t)
    return known, unknown, ids
