"""ShareFetch (key 78), v1-v2 (KIP-932): records of share partitions, acquired for one member.

The share session (core/share/sessions.py) holds the partitions a member fetches from this node:
epoch 0 opens it (acknowledgements in it are INVALID_REQUEST), later epochs add partitions and
drop ``forgotten_topics_data``, -1 closes it and releases what the member holds there. Piggy-backed
acknowledgements apply first, per partition (``acknowledge_error_code``: INVALID_REQUEST for
malformed batches, INVALID_RECORD_STATE for records the member does not hold, UNKNOWN_TOPIC_ID,
NOT_LEADER_OR_FOLLOWER). Then every partition of the session acquires records (redeliveries first,
then new whole batches up to the high watermark, or the last stable offset under
share.isolation.level=read_committed) while ``max_records`` lasts; the answer carries the stored
batches holding them and ``acquired_records`` (first, last offset, delivery count; new records in
runs broken at a batch's start once one holds ``batch_size``), with the acquisition lock time.
As Kafka's DelayedShareFetch, only what a read of the log gives may be acquired: each partition
reads from its first acquirable offset up to its even share of ``max_bytes`` (at most the broker's
fetch.max.bytes), less what the partitions before it read, the first partition that reads anything
getting at least one batch however large. A v2 request with ``is_renew_ack`` only renews locks and acquires nothing.

Long poll: a request without acknowledgements that acquires nothing waits up to ``max_wait_ms``,
woken by an append to a session partition or by records becoming available again (a lock lapsing
on the broker's clock, a release); it then acquires again and answers.
Under share.isolation.level=read_committed records are acquired up to the last stable offset, and
transaction markers and the records of aborted transactions are archived instead of delivered, as
Kafka's SharePartition does.
Authorization (READ on the group and on each topic, 29 per partition): share_common.py.
Not implemented: the record-limit acquire mode (v2 ``share_acquire_mode`` 1 is treated as
batch-optimized).
"""
from __future__ import annotations

from ..core.group_api import GroupError
from ..core.share.partitions import ShareStateNotWritten
from ..protocol.api_keys import ApiKey
from ..protocol.errors import ErrorCode
from ..storage.record_batch import parse_header
from ..broker.context import DEFERRED
from .registry import registry
from ..storage.share_log import ShareFetchWaiter
from .share_common import (acknowledge, add_partition, data_path_error, leader_of, member_key, node_endpoints, resolve,
                           unreadable_topics)

E = ErrorCode
DEFAULT_MAX_RECORDS = 500


@registry.register(ApiKey.SHARE_FETCH, 1, 2)
def share_fetch(ctx, req):
    error = data_path_error(ctx, req)
    if error != E.NONE:
        return _top_error(error)
    if ctx.api_version >= 2 and req.is_renew_ack and (req.max_bytes or req.min_bytes or req.max_records
                                                      or req.max_wait_ms):
        # KIP-1222: a renewing fetch acquires nothing, so its limits must all be 0 (Kafka logs which)
        return _top_error(E.INVALID_REQUEST)
    spm = ctx.shares
    fetch = [(t.topic_id, p.partition_index) for t in req.topics for p in t.partitions
             if req.share_session_epoch != -1 or not p.acknowledgement_batches]
    forget = [(t.topic_id, p) for t in req.forgotten_topics_data for p in t.partitions]
    has_acks = any(p.acknowledgement_batches for t in req.topics for p in t.partitions)
    try:
        session, ended = spm.fetch_session(ctx.now_ms, member_key(ctx, req), req.share_session_epoch, fetch, forget,
                                           has_acks, ctx.connection_id)
    except GroupError as exc:
        return _top_error(exc.code, exc.message)
    # READ on the topics of the request and of the session, asked once (KafkaApis.handleShareFetchRequest)
    unreadable = unreadable_topics(ctx, [t.topic_id for t in req.topics] +
                                   ([tid for tid, _ in session.partitions] if session is not None else []))
    acked: dict[tuple[bytes, int], ErrorCode] = {}
    for t in req.topics:
        for p in t.partitions:
            if p.acknowledgement_batches:
                acked[(t.topic_id, p.partition_index)] = acknowledge(ctx, req, t.topic_id, p, unreadable)
    if ended is not None:
        spm.release_member(ctx.now_ms, req.group_id, req.member_id, list(ended.partitions))
    renew_only = ctx.api_version >= 2 and bool(req.is_renew_ack)
    partitions = list(session.partitions) if session is not None and not renew_only else []
    full = req.share_session_epoch == 0
    response, acquired, watched = _acquire(ctx, req, partitions, acked, full, unreadable)
    if acquired or acked or not watched or req.max_wait_ms <= 0:
        return response

    def complete() -> None:   # called from an append or a timer: no ticking from here
        ctx.respond(_acquire(ctx, req, partitions, acked, full, unreadable)[0])

    ctx.store.fetches.park(ShareFetchWaiter(watched, 1, ctx.now_ms + req.max_wait_ms, 0, complete), req.max_wait_ms)
    return DEFERRED


def _acquire(ctx, req, partitions, acked, full, unreadable):
    """(response, records acquired, the logs a long poll would watch)."""
    spm = ctx.shares
    group, member = req.group_id, req.member_id
    budget = req.max_records if req.max_records > 0 else DEFAULT_MAX_RECORDS
    max_bytes = min(req.max_bytes, ctx.config.fetch_max_bytes) if req.max_bytes > 0 else ctx.config.fetch_max_bytes
    partition_bytes = max(max_bytes // max(len(partitions), 1), 1)   # PartitionMaxBytesStrategy: uniform
    min_one = True    # as ReplicaManager.readFromLog: the first partition read gives a batch however large
    topics: list = []
    watched = []
    total = 0
    for tid, index in partitions:
        plog, error = resolve(ctx, tid, index, unreadable)
        entry = {"partition_index": index, "error_code": error, "error_message": None,
                 "acknowledge_error_code": acked.get((tid, index), E.NONE), "acknowledge_error_message": None,
                 "current_leader": leader_of(ctx, plog, error), "records": b"", "acquired_records": []}
        sp = None
        if error == E.NONE:
            try:
                sp = spm.partition(ctx.now_ms, group, tid, index)
            except ShareStateNotWritten as exc:   # its first state could not be written
                entry["error_code"] = error = exc.error
        if sp is not None:
            committed = spm.read_committed(group)
            end = plog.last_stable_offset if committed else plog.high_watermark
            sp.skip_to(plog.log_start_offset)
            first = sp.first_available()
            if first is None and sp.can_acquire_new() and sp.end_offset < end:
                first = sp.end_offset
            got = []
            if budget > total and first is not None and max_bytes > 0:
                read = plog.read(first, min(partition_bytes, max_bytes), min_one, max_offset=end)
                if read:
                    min_one = False
                    max_bytes -= sum(len(b) for b in read)
                    bounds = [_bounds(b) for b in read]
                    got = spm.acquire(ctx.now_ms, group, member, tid, index, budget - total, bounds,
                                      up_to=bounds[-1][1], batch_size=req.batch_size)
            if got and committed:
                got = spm.archive_acquired(ctx.now_ms, group, member, tid, index,
                                           _not_committed(plog, got, sp.end_offset), got)
            if got:
                total += sum(a.last_offset - a.first_offset + 1 for a in got)
                entry["records"] = _batches_for(plog, got, sp.end_offset)
                entry["acquired_records"] = [{"first_offset": a.first_offset, "last_offset": a.last_offset,
                                              "delivery_count": a.delivery_count} for a in got]
            watched.append(plog)
        if full or error != E.NONE or entry["acquired_records"] or (tid, index) in acked:
            add_partition(topics, tid, entry)
    for (tid, index), code in acked.items():   # acknowledged partitions outside the session
        if (tid, index) not in partitions:
            add_partition(topics, tid, {"partition_index": index, "error_code": E.NONE, "error_message": None,
                                        "acknowledge_error_code": code, "acknowledge_error_message": None,
                                        "current_leader": dict(leader_of(ctx, None, code)), "records": b"",
                                        "acquired_records": []})
    lock_ms = int(spm.config(group, "share.record.lock.duration.ms"))
    response = {"throttle_time_ms": 0, "error_code": E.NONE, "error_message": None,
                "acquisition_lock_timeout_ms": lock_ms, "responses": topics,
                "node_endpoints": node_endpoints(ctx, topics)}
    return response, total, watched


def _bounds(batch) -> tuple[int, int]:
    h = parse_header(batch)
    return h.base_offset, h.last_offset


def _batches_for(plog, acquired, end_offset: int) -> list:
    """The stored batches holding the acquired offsets (clients skip the records not acquired);
    in-flight batches end below the share partition's end offset."""
    out = []
    for batch in plog.read(acquired[0].first_offset, 1 << 62, True, max_offset=end_offset):
        base, end = _bounds(batch)
        if any(a.first_offset <= end and a.last_offset >= base for a in acquired):
            out.append(batch)
    return out


def _not_committed(plog, acquired, end_offset: int) -> list[tuple[int, int]]:
    """read_committed: the acquired batches never to deliver, transaction markers and the batches
    of aborted transactions (Kafka's SharePartition archives them)."""
    first = acquired[0].first_offset
    aborted = plog.aborted_transactions(first, end_offset)
    out = []
    for batch in plog.read(first, 1 << 62, True, max_offset=end_offset):
        h = parse_header(batch)
        if h.is_control or (h.is_transactional and any(
                a.producer_id == h.producer_id and a.first_offset <= h.base_offset <= a.last_offset for a in aborted)):
            out.append((h.base_offset, h.last_offset))
    return out


def _top_error(code: ErrorCode, message: str | None = None) -> dict:
    return {"throttle_time_ms": 0, "error_code": code, "error_message": message, "acquisition_lock_timeout_ms": 0,
            "responses": [], "node_endpoints": []}
