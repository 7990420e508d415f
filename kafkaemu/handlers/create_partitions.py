"""CreatePartitions (key 37), v0-v3.

Grows a topic's partition count (clients then see it in Metadata at once and rejoin their
groups). Shrinking or keeping the count is INVALID_PARTITIONS, unknown topics
UNKNOWN_TOPIC_OR_PARTITION, a topic named twice INVALID_REQUEST, assignments naming unknown
nodes INVALID_REPLICA_ASSIGNMENT. validate_only checks without changing anything.
"""
from collections import Counter

from ..protocol.errors import ErrorCode
from .registry import handler


@handler(37, 0, 3)
def create_partitions(ctx, req):
    broker = ctx.broker
    counts = Counter(t.name for t in req.topics)
    results = []
    for t in req.topics:
        code, message = ErrorCode.NONE, None
        topic = broker.store.get(t.name)
        if counts[t.name] > 1:
            code, message = ErrorCode.INVALID_REQUEST, "Duplicate topic in request."
        elif topic is None:
            code, message = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"The topic '{t.name}' does not exist."
        elif t.count <= len(topic.partitions):
            code, message = ErrorCode.INVALID_PARTITIONS, (
                f"Topic currently has {len(topic.partitions)} partitions, which is higher than or equal to "
                f"the requested {t.count}." if t.count < len(topic.partitions) else
                f"Topic already has {t.count} partitions.")
        elif t.assignments is not None and (
                len(t.assignments) != t.count - len(topic.partitions)
                or any(b not in broker.listeners for a in t.assignments for b in a.broker_ids)):
            code, message = ErrorCode.INVALID_REPLICA_ASSIGNMENT, "Invalid partition assignment."
        elif not req.validate_only:
            broker.store.add_partitions(t.name, t.count)
        results.append({"name": t.name, "error_code": code, "error_message": message})
    return {"results": results}
