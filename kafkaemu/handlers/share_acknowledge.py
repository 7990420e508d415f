"""ShareAcknowledge (key 79), v1-v2 (KIP-932): acknowledgements of records a member acquired.

The request belongs to the member's share session on this node: epoch 0 is
INVALID_SHARE_SESSION_EPOCH (only ShareFetch opens a session), an unknown session
SHARE_SESSION_NOT_FOUND, a wrong epoch INVALID_SHARE_SESSION_EPOCH; -1 applies the
acknowledgements and closes the session, releasing what the member still holds there. Each
partition answers INVALID_REQUEST for malformed batches (unordered, overlapping, a wrong number of
types, unknown types, RENEW without ``is_renew_ack``), INVALID_RECORD_STATE for records the member
does not hold, UNKNOWN_TOPIC_ID or NOT_LEADER_OR_FOLLOWER. v2 answers the acquisition lock time.
Authorization (READ on the group and on each topic, 29 per partition): share_common.py.
"""
from __future__ import annotations

from ..core.group_api import GroupError
from ..protocol.api_keys import ApiKey
from ..protocol.errors import ErrorCode
from .registry import registry
from .share_common import (acknowledge, add_partition, data_path_error, leader_of, member_key, node_endpoints, resolve,
                           unreadable_topics)

E = ErrorCode


@registry.register(ApiKey.SHARE_ACKNOWLEDGE, 1, 2)
def share_acknowledge(ctx, req):
    spm = ctx.shares
    error = data_path_error(ctx, req)
    message = None
    closed = None
    if error == E.NONE:
        try:
            session = spm.acknowledge_session(ctx.now_ms, member_key(ctx, req), req.share_session_epoch)
            closed = session if req.share_session_epoch == -1 else None
        except GroupError as exc:
            error, message = exc.code, exc.message
    if error != E.NONE:
        return {"throttle_time_ms": 0, "error_code": error, "error_message": message,
                "acquisition_lock_timeout_ms": 0, "responses": [], "node_endpoints": []}
    topics: list = []
    unreadable = unreadable_topics(ctx, [t.topic_id for t in req.topics])
    for t in req.topics:
        for p in t.partitions:
            code = acknowledge(ctx, req, t.topic_id, p, unreadable)
            plog = resolve(ctx, t.topic_id, p.partition_index, unreadable)[0]
            add_partition(topics, t.topic_id, {"partition_index": p.partition_index, "error_code": code,
                                               "error_message": None, "current_leader": leader_of(ctx, plog, code)})
    if closed is not None:
        spm.release_member(ctx.now_ms, req.group_id, req.member_id, list(closed.partitions))
    return {"throttle_time_ms": 0, "error_code": E.NONE, "error_message": None,
            "acquisition_lock_timeout_ms": int(spm.config(req.group_id, "share.record.lock.duration.ms")),
            "responses": topics, "node_endpoints": node_endpoints(ctx, topics)}
