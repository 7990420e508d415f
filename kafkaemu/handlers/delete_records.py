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
from .partition_access import find_partition, partition_error
from .registry import handler


@handler(21, 0, 2)
def delete_records(ctx, req):
    store = ctx.broker.store
    topics = []
    for t in req.topics:
        topic = store.get(t.name)
        parts = []
        for p in t.partitions:
            plog = find_partition(topic, p.partition_index)
            if plog is None:
                parts.append({"partition_index": p.partition_index, "low_watermark": -1,
                              "error_code": ErrorCode.UNKNOWN_TOPIC_OR_PARTITION})
            elif partition_error(ctx, plog) != ErrorCode.NONE:
                parts.append({"partition_index": p.partition_index, "low_watermark": -1,
                              "error_code": partition_error(ctx, plog)})
            elif topic.internal:
                parts.append({"partition_index": p.partition_index, "low_watermark": -1,
                              "error_code": ErrorCode.INVALID_TOPIC_EXCEPTION})
            else:
                error, low = plog.delete_records(p.offset)
                parts.append({"partition_index": p.partition_index, "low_watermark": low,
                              "error_code": ErrorCode[error]})
        topics.append({"name": t.name, "partitions": parts})
    return {"throttle_time_ms": 0, "topics": topics}
