"""Shared by the share-group handlers: for the data path (ShareFetch, ShareAcknowledge) finding a
share partition's log by topic id, the session key, acknowledgements of one partition, the response
shapes, and waking parked ShareFetches; for the offsets APIs the group check.

Authorization as Kafka's KafkaApis: READ on the group for ShareFetch and ShareAcknowledge (a null
group id is INVALID_REQUEST first), then READ on each topic their partitions name: a topic the
principal may not read answers TOPIC_AUTHORIZATION_FAILED for its partitions (its acknowledgements
are not applied), an unknown topic id still UNKNOWN_TOPIC_ID."""
from __future__ import annotations

from typing import Iterable

from ..protocol.errors import ErrorCode
from .authorization import GROUP, READ, TOPIC, authorize, denied_names
from .group_common import is_coordinator
from .partition_access import serve_partition

E = ErrorCode
NO_LEADER = {"leader_id": -1, "leader_epoch": -1}
MAX_MEMBER_ID_LENGTH = 36   # KafkaApis.isMemberIdValid
# Errors.INVALID_GROUP_ID.message: the share offsets APIs' error responses default to it
# (AlterShareGroupOffsetsRequest.getErrorResponseData, DeleteShareGroupOffsetsRequest.getErrorDeleteResponseData)
INVALID_GROUP_ID_MESSAGE = "The group id is invalid."


def resolve(ctx, topic_id: bytes, index: int, unreadable: frozenset = frozenset()):
    """(partition log or None, error) for a share request naming a partition by topic id;
    ``unreadable``: the topic ids the principal may not READ (``unreadable_topics``)."""
    topic = ctx.store.by_id(topic_id)
    if topic is None:
        return None, E.UNKNOWN_TOPIC_ID
    if topic_id in unreadable:
        return None, E.TOPIC_AUTHORIZATION_FAILED
    return serve_partition(ctx, topic, index)


def unreadable_topics(ctx, topic_ids: Iterable[bytes]) -> frozenset:
    """The ids among ``topic_ids`` of existing topics the principal may not READ (none without an
    authorizer): one decision per topic per request, as Kafka's filterByAuthorized."""
    if ctx.authorizer is None:
        return frozenset()
    names = {}
    for tid in set(topic_ids):
        topic = ctx.store.by_id(tid)
        if topic is not None:
            names[topic.name] = tid
    return frozenset(names[n] for n in denied_names(ctx, READ, TOPIC, names))


def data_path_error(ctx, req) -> ErrorCode:
    """ShareFetch's and ShareAcknowledge's checks before their session, in Kafka's order: a null
    group id, READ on the group, then ``request_error``."""
    if req.group_id is None:
        return E.INVALID_REQUEST
    if ctx.authorizer is not None and not authorize(ctx, READ, GROUP, req.group_id):
        return E.GROUP_AUTHORIZATION_FAILED
    return request_error(req)


def leader_of(ctx, plog, error) -> dict:
    if plog is not None and error in (E.NOT_LEADER_OR_FOLLOWER, E.FENCED_LEADER_EPOCH):
        return {"leader_id": ctx.placement.partition_leader(plog), "leader_epoch": plog.leader_epoch}
    return dict(NO_LEADER)


def member_key(ctx, req) -> tuple:
    return (ctx.node_id, req.group_id, req.member_id)


def request_error(req) -> ErrorCode:
    """Kafka answers INVALID_REQUEST to a share request without a valid member id (KafkaApis
    isMemberIdValid: not empty, at most 36 characters). An empty group id is a group like any other
    there: only a null one is refused (``data_path_error``)."""
    if not req.member_id or len(req.member_id) > MAX_MEMBER_ID_LENGTH:
        return E.INVALID_REQUEST
    return E.NONE


def acknowledge(ctx, req, topic_id: bytes, partition, unreadable: frozenset = frozenset()) -> ErrorCode:
    """One partition's acknowledgement batches, applied for the request's member."""
    plog, error = resolve(ctx, topic_id, partition.partition_index, unreadable)
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
    """(error, message) of the share offsets APIs' group: NOT_COORDINATOR elsewhere, else the group
    coordinator's check at the request's time (GROUP_ID_NOT_FOUND for an unknown group unless
    ``may_be_new``, or one of another kind; NON_EMPTY_GROUP for one with members when ``must_be_empty``)."""
    if not is_coordinator(ctx, group_id):
        return E.NOT_COORDINATOR, None
    return ctx.groups.share_offsets_group_error(ctx.now_ms, group_id, must_be_empty, may_be_new)
