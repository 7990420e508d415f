"""Fetch (key 1), v0-v17.

Returns whole stored batches from the one holding the fetch offset (clients skip records below
their position), concatenated as stored. Limits: ``max_bytes`` for the response (v3+) and
``partition_max_bytes`` per partition; from v3 the first partition with data returns at least
one batch even when it is larger (KIP-74), so consumers make progress; v0-v2 have no such
exception, as in Kafka. v0-v3 get legacy message sets (magic 0 for v0-1, magic 1 for v2-3), down-
converted as Kafka 3.9 does (headers dropped; zstd topics answer UNSUPPORTED_COMPRESSION_TYPE
before v10; message.downconversion.enable=false answers UNSUPPORTED_VERSION).

Long poll: when no partition has an error and fewer than ``min_bytes`` are available, the reply
is parked (DEFERRED) in the store's fetch purgatory; an append to a watched partition that makes
``min_bytes`` available, or the ``max_wait_ms`` deadline at ``Broker.tick``, completes it by
reading again.

Fetch sessions (KIP-227): kafkaemu never creates a session. A full fetch (epoch 0 or -1) is
answered in full with session id 0, which clients read as "no session; keep sending full
fetches" (as when Kafka's session cache is full). An incremental fetch (epoch > 0) names a
session kafkaemu never issued: FETCH_SESSION_ID_NOT_FOUND; an epoch below -1 is
INVALID_FETCH_SESSION_EPOCH. forgotten_topics_data is therefore irrelevant.

Errors per partition: UNKNOWN_TOPIC_OR_PARTITION (by name, v0-12), UNKNOWN_TOPIC_ID (v13+),
OFFSET_OUT_OF_RANGE (below log start or past the high watermark), FENCED_LEADER_EPOCH /
UNKNOWN_LEADER_EPOCH (v9+ current_leader_epoch), diverging_epoch for v12+ last_fetched_epoch.
Isolation: read_committed reads up to the last stable offset, which equals the high watermark
since transactions are not implemented (aborted_transactions is always empty).
preferred_read_replica is -1. Follower fetches (replica_id >= 0) are served like consumers.
"""
from ..protocol.errors import ErrorCode
from ..storage import topic_config
from ..storage.fetch_purgatory import FetchWaiter
from ..storage.legacy_records import down_convert
from .partition_access import find_partition, leader_epoch_error
from .registry import DEFERRED, handler

READ_COMMITTED = 1


@handler(1, 0, 17)
def fetch(ctx, req):
    v = ctx.api_version
    if v >= 7:
        if req.session_epoch > 0:
            return _top_error(ErrorCode.FETCH_SESSION_ID_NOT_FOUND)
        if req.session_epoch < -1:
            return _top_error(ErrorCode.INVALID_FETCH_SESSION_EPOCH)
    plan = _resolve(ctx, req)
    response, available, has_error = _read(v, req, plan)
    watched = [plog for _, _, parts in plan for _, plog, _ in parts if plog is not None]
    if has_error or req.max_wait_ms <= 0 or available >= req.min_bytes or not watched:
        return response

    def complete() -> None:
        ctx.respond(_read(v, req, plan)[0])

    ctx.broker.store.fetches.park(FetchWaiter(watched, req.min_bytes, ctx.now_ms + req.max_wait_ms, available,
                                              complete))
    return DEFERRED


def _top_error(code):
    return {"throttle_time_ms": 0, "error_code": code, "session_id": 0, "responses": []}


def _resolve(ctx, req):
    """[(topic name, topic id, [(partition request, plog or None, error)])] in request order."""
    store = ctx.broker.store
    by_id = ctx.api_version >= 13
    plan = []
    for ft in req.topics:
        topic = store.by_id(ft.topic_id) if by_id else store.get(ft.topic)
        missing = ErrorCode.UNKNOWN_TOPIC_ID if by_id else ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        parts = []
        for fp in ft.partitions:
            plog = find_partition(topic, fp.partition)
            if plog is None:
                parts.append((fp, None, missing if topic is None else ErrorCode.UNKNOWN_TOPIC_OR_PARTITION))
                continue
            parts.append((fp, plog, leader_epoch_error(plog, fp.current_leader_epoch)))
        name = topic.name if topic is not None else (None if by_id else ft.topic)
        plan.append((name, topic.topic_id if topic is not None else (ft.topic_id or bytes(16)), parts))
    return plan


def _read(v, req, plan):
    """Build the response; returns (response, bytes returned, whether any partition has an error)."""
    remaining = req.max_bytes if v >= 3 else 0x7FFFFFFF
    min_one = v >= 3
    legacy_magic = 0 if v <= 1 else 1 if v <= 3 else None
    committed = v >= 4 and req.isolation_level == READ_COMMITTED
    total = 0
    has_error = False
    topics = []
    for name, topic_id, parts in plan:
        out = []
        for fp, plog, error in parts:
            if error == ErrorCode.NONE:
                error, entry = _read_partition(fp, plog, remaining, min_one and total == 0, legacy_magic, v)
            else:
                entry = None
            if entry is None:
                has_error = True
                entry = {"partition_index": fp.partition, "error_code": error, "high_watermark": -1,
                         "last_stable_offset": -1, "log_start_offset": -1, "records": b"",
                         "aborted_transactions": None, "preferred_read_replica": -1}
            else:
                size = len(entry["records"])
                total += size
                remaining -= size
                if committed:
                    entry["aborted_transactions"] = []
                if "diverging_epoch" in entry:
                    has_error = True
            out.append(entry)
        topics.append({"topic": name or "", "topic_id": topic_id, "partitions": out})
    return {"throttle_time_ms": 0, "error_code": ErrorCode.NONE, "session_id": 0, "responses": topics}, \
        total, has_error


def _read_partition(fp, plog, remaining, min_one, legacy_magic, v):
    offset = fp.fetch_offset
    hw = plog.high_watermark
    if legacy_magic is not None or v < 10:
        configs = plog.configs
        if v < 10 and topic_config.effective(configs, "compression.type") == "zstd":
            return ErrorCode.UNSUPPORTED_COMPRESSION_TYPE, None
        if legacy_magic is not None and topic_config.effective(configs, "message.downconversion.enable") == "false":
            return ErrorCode.UNSUPPORTED_VERSION, None
    entry = {"partition_index": fp.partition, "error_code": ErrorCode.NONE, "high_watermark": hw,
             "last_stable_offset": plog.last_stable_offset, "log_start_offset": plog.log_start_offset,
             "aborted_transactions": None, "preferred_read_replica": -1, "records": b""}
    if v >= 12 and fp.last_fetched_epoch >= 0:
        epoch, end = plog.end_offset_for_epoch(fp.last_fetched_epoch)
        if end < offset or epoch < fp.last_fetched_epoch:
            entry["diverging_epoch"] = {"epoch": epoch, "end_offset": end}
            return ErrorCode.NONE, entry
    if offset < plog.log_start_offset or offset > hw:
        return ErrorCode.OFFSET_OUT_OF_RANGE, None
    if offset < hw and remaining > 0:
        batches = plog.read(offset, min(fp.partition_max_bytes, remaining), min_one)
        if legacy_magic is None:
            entry["records"] = b"".join(batches)
        else:
            entry["records"] = b"".join(down_convert(b, legacy_magic) for b in batches)
    return ErrorCode.NONE, entry
