"""Fetch (key 1), v4-v18 (Kafka 4 removed the older versions, KIP-896: they close the connection).

Returns whole stored batches from the one holding the fetch offset (clients skip records below
their position), concatenated as stored: a partition's ``records`` is the list of stored batches,
which the codec writes one after the other without joining them (``primitives.write_bytes``).
Every stored batch is a v2 record batch (appends convert nothing older; Kafka 4 removed the
down-conversion of Fetch v0-3). Limits, as Kafka's KafkaApis/ReplicaManager: the response carries
at most min(``max_bytes``, the broker's ``fetch.max.bytes``) (55 MiB by default), each partition at
most its ``partition_max_bytes`` of what remains; the first partition with data returns at least one
batch even when it is larger (KIP-74), so consumers make progress. ``min_bytes`` is capped at the
response limit too. Every version gets the batches in their stored codec: Kafka 3's
UNSUPPORTED_COMPRESSION_TYPE for zstd topics before v10 went with down-conversion.

Long poll: when no partition has an error and fewer than ``min_bytes`` are available, the reply
is parked (DEFERRED) in the store's fetch purgatory; an append to a watched partition that makes
``min_bytes`` available, or the ``max_wait_ms`` deadline at ``Broker.tick``, completes it by
reading again.

Fetch sessions (KIP-227, v7+): a full fetch with epoch 0 creates a session (see
``storage/fetch_sessions.py``); incremental fetches (epoch 1, 2, ...) update it with the listed
partitions, drop ``forgotten_topics_data``, fetch every partition of the session and answer only
those with records, an error or a changed high watermark / last stable offset / log start offset.
Epoch -1 closes the session (a sessionless full fetch). An unknown session id is
FETCH_SESSION_ID_NOT_FOUND; a wrong epoch (or a session by name used with v13+ ids, or the
reverse) INVALID_FETCH_SESSION_EPOCH; epoch below -1 INVALID_FETCH_SESSION_EPOCH.

Errors per partition: UNKNOWN_TOPIC_OR_PARTITION (by name, v0-12), UNKNOWN_TOPIC_ID (v13+),
OFFSET_OUT_OF_RANGE (below log start or past the high watermark), FENCED_LEADER_EPOCH /
UNKNOWN_LEADER_EPOCH (v9+ current_leader_epoch), NOT_LEADER_OR_FOLLOWER when another emulated
node leads the partition (with KIP-951's current_leader, v12+, and node_endpoints, v16+),
diverging_epoch for v12+ last_fetched_epoch.
Isolation (v4+): read_committed returns only whole batches below the last stable offset (the
first offset of the earliest open transaction, else the high watermark) with the aborted
transactions (producer id, first offset) overlapping the batches returned, from the partition's
aborted-transaction index, as Kafka's LocalLog.read/collectAbortedTransactions; clients drop the
aborted records. read_uncommitted reads to the high watermark, aborted_transactions null.
last_stable_offset is the real LSO for both; a read_committed long poll waits for bytes below it.
preferred_read_replica is -1. Follower fetches (replica_id >= 0) are served like consumers
(with authorization on, they need CLUSTER_ACTION instead of READ on each topic).
v17 adds a follower's replica_directory_id, v18 a follower's high watermark (KIP-1166): tagged
fields consumers do not send, which a single-replica log has no use for.
"""
from operator import itemgetter

from ..protocol.errors import ErrorCode
from ..storage.fetch_purgatory import FetchWaiter
from ..storage.fetch_sessions import SessionPartition
from ..storage.record_batch import parse_header
from .authorization import CLUSTER_ACTION, READ, TOPIC, authorize, authorize_cluster
from .partition_access import current_leader, node_endpoints, serve_partition
from ..broker.context import DEFERRED
from ..protocol.api_keys import ApiKey
from .registry import registry

READ_COMMITTED = 1
FINAL_EPOCH, INITIAL_EPOCH = -1, 0


@registry.register(ApiKey.FETCH, 4, 18)
def fetch(ctx, req):
    v = ctx.api_version
    store = ctx.store
    session, incremental = None, False
    if v >= 7:
        sessions = store.fetch_sessions
        sid, epoch = req.session_id, req.session_epoch
        if epoch < FINAL_EPOCH:
            return _top_error(ErrorCode.INVALID_FETCH_SESSION_EPOCH)
        if epoch in (FINAL_EPOCH, INITIAL_EPOCH):
            if sid:
                sessions.remove(sid)
            if epoch == INITIAL_EPOCH:
                session = sessions.create(v >= 13, ctx.now_ms)
        else:
            session = sessions.get(sid, ctx.now_ms)
            if session is None:
                return _top_error(ErrorCode.FETCH_SESSION_ID_NOT_FOUND)
            if session.epoch != epoch or session.by_topic_id != (v >= 13):
                return _top_error(ErrorCode.INVALID_FETCH_SESSION_EPOCH)
            incremental = True
    targets = _targets(req, v)
    if session is not None:
        _update_session(session, targets, req, v, incremental)
        targets = list(session.partitions.values())
    plan = _resolve(ctx, targets, _replica_id(req, v))
    response, available, has_error, sent = _read(ctx, req, plan, session, incremental)
    watched = [plog for _, plog, _ in plan if plog is not None]
    min_bytes = min(req.min_bytes, _max_bytes(ctx, req))
    if has_error or req.max_wait_ms <= 0 or available >= min_bytes or not watched:
        sent()
        return response

    def complete() -> None:
        # read again: the session's "last sent" state only moves with a response really sent
        response, _, _, sent = _read(ctx, req, plan, session, incremental)
        sent()
        ctx.respond(response)

    committed = req.isolation_level == READ_COMMITTED
    store.fetches.park(FetchWaiter(watched, min_bytes, ctx.now_ms + req.max_wait_ms, available, complete,
                                   committed), req.max_wait_ms)
    return DEFERRED


def _max_bytes(ctx, req) -> int:
    """The response limit: min(request max_bytes, fetch.max.bytes)."""
    return min(req.max_bytes, ctx.config.fetch_max_bytes)


def _top_error(code):
    return {"throttle_time_ms": 0, "error_code": code, "session_id": 0, "responses": []}


# a request partition's fields, read as items (decoded bodies are Containers, i.e. dicts): one C call
_PARTITION_FIELDS = itemgetter("partition", "fetch_offset", "partition_max_bytes", "current_leader_epoch",
                               "last_fetched_epoch")


def _targets(req, v) -> list:
    by_id = v >= 13
    out = []
    for ft in req.topics:
        name, topic_id = (None, ft["topic_id"]) if by_id else (ft["topic"], None)
        out += [SessionPartition(name, topic_id, *_PARTITION_FIELDS(fp)) for fp in ft["partitions"]]
    return out


def _key(t) -> tuple:
    return (t.topic_id if t.topic is None else t.topic), t.partition


def _update_session(session, targets, req, v, incremental) -> None:
    parts = session.partitions
    if not incremental:   # a new session: every partition of the request, in its order
        parts.clear()
        parts.update((_key(t), t) for t in targets)
        return
    for t in targets:
        old = parts.get(_key(t))
        if old is None:
            parts[_key(t)] = t
        else:
            old.fetch_offset, old.partition_max_bytes = t.fetch_offset, t.partition_max_bytes
            old.current_leader_epoch, old.last_fetched_epoch = t.current_leader_epoch, t.last_fetched_epoch
    for ft in req.forgotten_topics_data or ():
        topic = ft.topic_id if v >= 13 else ft.topic
        for p in ft.partitions:
            parts.pop((topic, p), None)
    session.epoch = 1 if session.epoch >= 0x7FFFFFFF else session.epoch + 1


def _replica_id(req, v) -> int:
    if v < 15:
        return req.replica_id
    state = req.replica_state
    return -1 if state is None else state.replica_id


def _resolve(ctx, targets, replica_id: int = -1):
    """[(target, plog or None, error)] in session/request order. With authorization on, a consumer
    needs READ on each topic; a follower (``replica_id`` >= 0) CLUSTER_ACTION on the cluster, else
    every partition is TOPIC_AUTHORIZATION_FAILED (KafkaApis.handleFetchRequest)."""
    store = ctx.store
    plan = []
    topic = key = None
    checked = None if ctx.authorizer is None else {}   # topic name -> READ allowed
    # a follower: one answer, CLUSTER_ACTION's, for every topic
    follower = authorize_cluster(ctx, CLUSTER_ACTION) if checked is not None and replica_id >= 0 else None
    for t in targets:
        if (t.topic_id if t.topic is None else t.topic) != key or topic is None:   # partitions come by topic
            key = t.topic_id if t.topic is None else t.topic
            topic = store.by_id(key) if t.topic is None else store.get(key)
        plog, error = serve_partition(ctx, topic, t.partition, t.current_leader_epoch)
        if topic is None and t.topic is None:
            error = ErrorCode.UNKNOWN_TOPIC_ID  # named by an id nobody has
        elif checked is not None:
            name = t.topic if topic is None else topic.name
            allowed = follower if follower is not None else checked.get(name)
            if allowed is None:
                allowed = checked[name] = authorize(ctx, READ, TOPIC, name)
            if not allowed:
                plog, error = None, ErrorCode.TOPIC_AUTHORIZATION_FAILED
        plan.append((t, plog, error))
    return plan


def _read(ctx, req, plan, session=None, incremental=False):
    """Build the response; returns (response, bytes returned, whether any partition has an error,
    a callable recording in the session what the response tells the client)."""
    v = ctx.api_version
    leaders = set()
    sent = []   # (session partition, hw, lso, log start) to remember once the response goes out
    remaining = _max_bytes(ctx, req)
    committed = req.isolation_level == READ_COMMITTED
    total = 0
    has_error = False
    topics = []
    for t, plog, error in plan:
        # an error found before reading (an unknown partition, a denied topic) is KafkaApis' answer, built
        # from the message's defaults (aborted_transactions empty); one found reading is the replica
        # manager's, whose answer has none (null)
        before_reading = error in (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, ErrorCode.UNKNOWN_TOPIC_ID,
                                   ErrorCode.TOPIC_AUTHORIZATION_FAILED)
        if error == ErrorCode.NONE:
            error, entry, size = _read_partition(t, plog, remaining, total == 0, v, committed)
        else:
            entry = None
        if entry is None:
            has_error = True
            entry = {"partition_index": t.partition, "error_code": error, "high_watermark": -1,
                     "last_stable_offset": -1, "log_start_offset": -1, "records": b"",
                     "aborted_transactions": [] if before_reading else None, "preferred_read_replica": -1}
            if error in (ErrorCode.NOT_LEADER_OR_FOLLOWER, ErrorCode.FENCED_LEADER_EPOCH):
                entry["current_leader"] = current_leader(ctx, plog)
                leaders.add(entry["current_leader"]["leader_id"])
        else:
            total += size
            remaining -= size
            if "diverging_epoch" in entry:
                has_error = True
        if session is not None:
            changed = (entry["error_code"] != ErrorCode.NONE or entry["records"] or "diverging_epoch" in entry
                       or entry["high_watermark"] != t.sent_hw or entry["last_stable_offset"] != t.sent_lso
                       or entry["log_start_offset"] != t.sent_log_start)
            if incremental and not changed:
                continue
            sent.append((t, entry["high_watermark"], entry["last_stable_offset"], entry["log_start_offset"]))
        name = plog.topic.name if plog is not None else t.topic
        topic_id = plog.topic.topic_id if plog is not None else (t.topic_id or bytes(16))
        if topics and topics[-1]["topic_id"] == topic_id and topics[-1]["topic"] == (name or ""):
            topics[-1]["partitions"].append(entry)
        else:
            topics.append({"topic": name or "", "topic_id": topic_id, "partitions": [entry]})

    def mark_sent() -> None:
        for t, hw, lso, log_start in sent:
            t.sent_hw, t.sent_lso, t.sent_log_start = hw, lso, log_start

    return {"throttle_time_ms": 0, "error_code": ErrorCode.NONE,
            "session_id": session.session_id if session is not None else 0, "responses": topics,
            "node_endpoints": node_endpoints(ctx, leaders)}, total, has_error, mark_sent


def _read_partition(fp, plog, remaining, min_one, v, committed=False):
    """(error, response entry or None on error, bytes of records in it)."""
    offset = fp.fetch_offset
    hw = plog.high_watermark
    lso = plog.last_stable_offset
    entry = {"partition_index": fp.partition, "error_code": ErrorCode.NONE, "high_watermark": hw,
             "last_stable_offset": lso, "log_start_offset": plog.log_start_offset,
             "aborted_transactions": [] if committed else None, "preferred_read_replica": -1, "records": b""}
    if v >= 12 and fp.last_fetched_epoch >= 0:
        epoch, end = plog.end_offset_for_epoch(fp.last_fetched_epoch)
        if end < offset or epoch < fp.last_fetched_epoch:
            entry["diverging_epoch"] = {"epoch": epoch, "end_offset": end}
            return ErrorCode.NONE, entry, 0
    if offset < plog.log_start_offset or offset > hw:
        return ErrorCode.OFFSET_OUT_OF_RANGE, None, 0
    end = lso if committed else hw
    size = 0
    if offset < end and remaining > 0:
        max_bytes = min(fp.partition_max_bytes, remaining)
        if committed:
            batches = plog.read(offset, max_bytes, min_one, max_offset=end)
            if batches:
                upper = parse_header(batches[-1]).last_offset + 1
                entry["aborted_transactions"] = [{"producer_id": a.producer_id, "first_offset": a.first_offset}
                                                 for a in plog.aborted_transactions(offset, upper)]
        else:
            batches = plog.read(offset, max_bytes, min_one)
        if batches:
            entry["records"] = batches            # the stored batches themselves, written as they are
            size = sum(map(len, batches))
    return ErrorCode.NONE, entry, size
