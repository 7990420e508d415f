"""DeleteRecords (key 21), v0-v2.

Moves each partition's log start offset up to the requested offset (-1: the high watermark);
batches wholly below it are dropped, the one holding it is kept (fetches return it and clients
skip the records below). An offset past the high watermark (or below -1) is OFFSET_OUT_OF_RANGE;
a smaller offset than the current log start leaves it unchanged. Unknown partitions are
UNKNOWN_TOPIC_OR_PARTITION; partitions led by another emulated node NOT_LEADER_OR_FOLLOWER;
internal topics INVALID_TOPIC_EXCEPTION, as in Kafka. timeout_ms is
not needed: single replica, so the low watermark moves at once.
"""
from ..protocol.errors import ErrorCode
from .partition_access import serve_partition
from ..protocol.api_keys import ApiKey
from .authorization import DELETE, TOPIC, denied_names
from .registry import registry


@registry.register(ApiKey.DELETE_RECORDS, 0, 2)
def delete_records(ctx, req):
    store = ctx.store
    topics = []
    denied = denied_names(ctx, DELETE, TOPIC, [t.name for t in req.topics])
    for t in req.topics:
        topic = store.get(t.name)
        parts = []
        for p in t.partitions:
            plog, error = serve_partition(ctx, topic, p.partition_index)
            low = -1
            if t.name in denied:
                error = ErrorCode.TOPIC_AUTHORIZATION_FAILED
            elif error == ErrorCode.NONE and topic.internal:
                error = ErrorCode.INVALID_TOPIC_EXCEPTION
            elif error == ErrorCode.NONE:
                name, low = plog.delete_records(p.offset)
                error = ErrorCode[name]
            parts.append({"partition_index": p.partition_index, "low_watermark": low, "error_code": error})
        topics.append({"name": t.name, "partitions": parts})
    return {"throttle_time_ms": 0, "topics": topics}
