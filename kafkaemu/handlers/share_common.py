"""Shared by the share-group handlers: for the data path (ShareFetch, ShareAcknowledge) finding a
share partition's log by topic id, the session key, acknowledgements of one partition, the response
shapes, and waking parked ShareFetches; for the offsets APIs the group check."""
from __future__ import annotations

from ..core.group_api import GroupType
from ..protocol.errors import ErrorCode
from .group_common import is_coordinator
from .partition_access import serve_partition

E = ErrorCode
NO_LEADER = {"leader_id": -1, "leader_epoch": -1}


def resolve(ctx, topic_id: bytes, index: int):
    """(partition log or None, error) for a share request naming a partition by topic id."""
    topic = ctx.store.by_id(topic_id)
    if topic is None:
        return None, E.UNKNOWN_TOPIC_ID
    return serve_partition(ctx, topic, index)


def leader_of(ctx, plog, error) -> dict:
    if plog is not None and error in (E.NOT_LEADER_OR_FOLLOWER, E.FENCED_LEADER_EPOCH):
        return {"leader_id": ctx.placement.partition_leader(plog), "leader_epoch": plog.leader_epoch}
    return dict(NO_LEADER)


def member_key(ctx, req) -> tuple:
    return (ctx.node_id, req.group_id, req.member_id)


def request_error(req) -> ErrorCode:
    """Kafka answers INVALID_REQUEST to a share request without a group id or member id."""
    if not req.group_id or not req.member_id:
        return E.INVALID_REQUEST
    return E.NONE


def acknowledge(ctx, req, topic_id: bytes, partition) -> ErrorCode:
    """One partition's acknowledgement batches, applied for the request's member."""
    plog, error = resolve(ctx, topic_id, partition.partition_index)
    if error != E.NONE:
        return error
    renew = ctx.api_version >= 2 and bool(req.is_renew_ack)
    return ctx.shares.acknowledge(ctx.now_ms, req.group_id, req.member_id, topic_id, partition.partition_index,
                                  partition.acknowledgement_batches, renew)


def add_partition(topics: list, topic_id: bytes, entry: dict) -> None:
    if topics and topics[-1]["topic_id"] == topic_id:
        topics[-1]["partitions"].append(entry)
    else:
        topics.append({"topic_id": topic_id, "partitions": [entry]})


def node_endpoints(ctx, entries) -> list:
    leaders = {e["current_leader"]["leader_id"] for t in entries for e in t["partitions"]
               if e["current_leader"]["leader_id"] >= 0}
    listeners = ctx.placement.listeners
    return [{"node_id": n, "host": listeners[n][0], "port": listeners[n][1], "rack": None}
            for n in sorted(leaders) if n in listeners]


def share_group_error(ctx, group_id: str, must_be_empty: bool, may_be_new: bool = False
                      ) -> tuple[ErrorCode, str | None]:
    """(error, message) of the share offsets APIs' group: NOT_COORDINATOR elsewhere, GROUP_ID_NOT_FOUND
    for an unknown group (unless ``may_be_new``: the request creates it) or one of another kind,
    NON_EMPTY_GROUP for one with members when ``must_be_empty``."""
    if not is_coordinator(ctx, group_id):
        return E.NOT_COORDINATOR, None
    group = ctx.groups.group(group_id)
    if group is None and may_be_new:
        return E.NONE, None
    if group is None or group.type is not GroupType.SHARE:
        return E.GROUP_ID_NOT_FOUND, f"Group {group_id} not found."
    if must_be_empty and not group.is_empty():
        return E.NON_EMPTY_GROUP, None
    return E.NONE, None
