"""CreatePartitions (key 37), v0-v3.

Grows a topic's partition count (clients then see it in Metadata at once and rejoin their
groups). Shrinking or keeping the count is INVALID_PARTITIONS, unknown topics
UNKNOWN_TOPIC_OR_PARTITION, a topic named twice INVALID_REQUEST, assignments naming unknown
nodes INVALID_REPLICA_ASSIGNMENT. validate_only checks without changing anything. Messages are
Kafka's (ControllerApis, ReplicationControlManager.createPartitions).

As Kafka's controller (ReplicationControlManager.validateTotalNumberOfPartitions), a request that
would add more than MAX_PARTITIONS_PER_BATCH partitions in all is refused before anything is
allocated: every topic of it gets POLICY_VIOLATION.
"""
from collections import Counter

from ..protocol.errors import ErrorCode
from .create_topics import MAX_PARTITIONS_PER_BATCH
from ..protocol.api_keys import ApiKey
from .authorization import ALTER, TOPIC, denied_names
from .registry import registry


@registry.register(ApiKey.CREATE_PARTITIONS, 0, 3)
def create_partitions(ctx, req):
    counts = Counter(t.name for t in req.topics)
    if _additional_partitions(ctx, req.topics, counts) > MAX_PARTITIONS_PER_BATCH:
        return {"results": [{"name": t.name, "error_code": ErrorCode.POLICY_VIOLATION,
                             "error_message": "Excessively large number of additional partitions per request."}
                            for t in req.topics]}
    results = []
    denied = denied_names(ctx, ALTER, TOPIC, [t.name for t in req.topics if counts[t.name] == 1])
    answered = set()
    with ctx.store.topic_changes():   # the request's topics reach the data directory as one write
        for t in req.topics:
            if t.name in answered:   # a name given twice is answered once, as Kafka's controller does
                continue
            answered.add(t.name)
            code, message = (ErrorCode.TOPIC_AUTHORIZATION_FAILED, None) \
                if t.name in denied else _validate(ctx, t, counts)
            if code == ErrorCode.NONE and not req.validate_only:
                ctx.store.add_partitions(t.name, t.count)
            results.append({"name": t.name, "error_code": code, "error_message": message})
    return {"results": results}


def _additional_partitions(ctx, topics, counts) -> int:
    """Partitions the request would add, over the topics Kafka's controller gets to see (not the
    duplicates, not unknown topics)."""
    total = 0
    for t in topics:
        topic = ctx.store.get(t.name)
        if counts[t.name] == 1 and topic is not None and t.count > len(topic.partitions):
            total += t.count - len(topic.partitions)
    return total


def _validate(ctx, t, counts):
    topic = ctx.store.get(t.name)
    if counts[t.name] > 1:
        return ErrorCode.INVALID_REQUEST, "Duplicate topic name."
    if topic is None:
        return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, None
    current = len(topic.partitions)
    if t.count == current:
        return ErrorCode.INVALID_PARTITIONS, f"Topic already has {current} partition(s)."
    if t.count < current:
        return ErrorCode.INVALID_PARTITIONS, (
            f"The topic {t.name} currently has {current} partition(s); {t.count} would not be an increase.")
    additional = t.count - current
    if t.assignments is not None:
        if len(t.assignments) != additional:
            return ErrorCode.INVALID_REPLICA_ASSIGNMENT, (
                f"Attempted to add {additional} additional partition(s), but only {len(t.assignments)} "
                "assignment(s) were specified.")
        for a in t.assignments:
            if not a.broker_ids:
                return ErrorCode.INVALID_REPLICA_ASSIGNMENT, \
                    "The manual partition assignment includes an empty replica list."
            unknown = next((b for b in a.broker_ids if b not in ctx.placement.listeners), None)
            if unknown is not None:
                return ErrorCode.INVALID_REPLICA_ASSIGNMENT, (
                    f"The manual partition assignment includes broker {unknown}, but no such broker is registered.")
    return ErrorCode.NONE, None
