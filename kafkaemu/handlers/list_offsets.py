"""ListOffsets (key 2), v1-v11 (Kafka 4 removed the older versions, KIP-896: they close the connection).

Timestamps: -1 latest (the high watermark, or for read_committed, v2+, the last stable offset:
the first offset of the earliest open transaction), -2 earliest (log start), -3 max timestamp (v7+: the first
record carrying the largest timestamp, as Kafka 3.9 after KAFKA-16310), -4 earliest local (v8+;
no tiered storage, so the log start), -5 latest tiered (v9+; no tiered storage, so offset -1,
as Kafka answers when remote storage is off), -6 earliest pending upload (v11+, KIP-1023; likewise
offset -1 without remote storage). Any other timestamp finds the first record (not batch) at or after it, decompressing
batches as needed; none found answers offset -1 and timestamp -1, as does a record found at or
past the last fetchable offset (the LSO under read_committed), as in Kafka.

current_leader_epoch (v4+) is checked (FENCED_LEADER_EPOCH / UNKNOWN_LEADER_EPOCH), then
leadership (NOT_LEADER_OR_FOLLOWER when another emulated node leads the partition).
As ReplicaManager.fetchOffset, after authorization: a partition listed twice answers INVALID_REQUEST,
a negative timestamp that is no sentinel or is newer than the request's version (-3 before v7, -4
before v8, -5 before v9, -6 before v11) UNSUPPORTED_VERSION.
Not implemented: timeout_ms (answers are immediate).
"""
from ..protocol.errors import ErrorCode
from .partition_access import serve_partition
from ..protocol.api_keys import ApiKey
from .authorization import DESCRIBE, TOPIC, denied_names
from .registry import registry

LATEST, EARLIEST, MAX_TIMESTAMP, EARLIEST_LOCAL, LATEST_TIERED, EARLIEST_PENDING_UPLOAD = -1, -2, -3, -4, -5, -6
# ReplicaManager.timestampMinSupportedVersion
_SENTINEL_SINCE = {LATEST: 0, EARLIEST: 0, MAX_TIMESTAMP: 7, EARLIEST_LOCAL: 8, LATEST_TIERED: 9,
                   EARLIEST_PENDING_UPLOAD: 11}
READ_COMMITTED = 1


@registry.register(ApiKey.LIST_OFFSETS, 1, 11)
def list_offsets(ctx, req):
    store = ctx.store
    v = ctx.api_version
    committed = v >= 2 and req.isolation_level == READ_COMMITTED
    topics = []
    denied = denied_names(ctx, DESCRIBE, TOPIC, [t.name for t in req.topics])
    seen, duplicates = set(), set()
    for t in req.topics:
        for p in t.partitions:
            key = (t.name, p.partition_index)
            (duplicates if key in seen else seen).add(key)
    for t in req.topics:
        topic = store.get(t.name)
        parts = []
        for p in t.partitions:
            ts = p.timestamp
            if t.name in denied:
                plog, error = None, ErrorCode.TOPIC_AUTHORIZATION_FAILED
            elif (t.name, p.partition_index) in duplicates:
                plog, error = None, ErrorCode.INVALID_REQUEST
            elif ts < 0 and v < _SENTINEL_SINCE.get(ts, 1 << 15):
                plog, error = None, ErrorCode.UNSUPPORTED_VERSION
            else:
                plog, error = serve_partition(ctx, topic, p.partition_index, p.current_leader_epoch)
            out = {"partition_index": p.partition_index, "error_code": error, "timestamp": -1, "offset": -1,
                   "leader_epoch": -1}
            if error == ErrorCode.NONE:
                out["timestamp"], out["offset"], out["leader_epoch"] = _lookup(plog, p.timestamp, committed)
            parts.append(out)
        topics.append({"name": t.name, "partitions": parts})
    return {"throttle_time_ms": 0, "topics": topics}


def _lookup(plog, ts, committed):
    """(timestamp, offset, leader epoch), as Kafka's Partition.fetchOffsetForTimestamp: the last
    fetchable offset is the LSO under read_committed, else the high watermark; a record found
    at or past it is not answered."""
    last_fetchable = plog.last_stable_offset if committed else plog.high_watermark
    if ts == LATEST:
        return -1, last_fetchable, plog.leader_epoch
    if ts in (EARLIEST, EARLIEST_LOCAL):
        start = plog.log_start_offset
        return -1, start, plog.epoch_for_offset(start)
    if ts in (LATEST_TIERED, EARLIEST_PENDING_UPLOAD):
        return -1, -1, -1
    found = plog.max_timestamp_offset() if ts == MAX_TIMESTAMP else plog.offset_for_timestamp(ts)
    return found if found is not None and found[1] < last_fetchable else (-1, -1, -1)

