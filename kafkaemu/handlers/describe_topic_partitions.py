"""DescribeTopicPartitions (key 75), v0: the admin client's describeTopics (kafka-clients 3.8+,
Spark's driver) with cursor paging.

As Apache Kafka's DescribeTopicPartitionsRequestHandler: an empty topic list means every topic;
topics are answered in name order starting at the cursor (topic name, partition index); at most
min(response_partition_limit, 2000) partitions (and at least 1) are returned, and next_cursor
points at the first partition left out. A named topic that does not exist is answered with
UNKNOWN_TOPIC_OR_PARTITION (INVALID_TOPIC_EXCEPTION for an illegal name) and the zero topic id;
when listing every topic such topics cannot occur. A cursor with a negative partition, or naming
a topic outside the requested list, is INVALID_REQUEST for every requested topic. Topic ids are
the ones Metadata and Fetch use.

Not implemented: authorization (every topic is describable, so topic_authorized_operations is the
full topic set), offline replicas and eligible leader replicas (always empty).
"""
from __future__ import annotations

from ..protocol.errors import ErrorCode
from ..protocol.operations import TOPIC_OPERATIONS
from ..storage.log_store import validate_topic_name
from ..protocol.api_keys import ApiKey
from .authorization import DESCRIBE, TOPIC, authorized_operations, denied_names
from .registry import registry
from .topic_views import partitions_metadata

MAX_REQUEST_PARTITION_SIZE_LIMIT = 2000  # Kafka's max.request.partition.size.limit default
INTERNAL_TOPICS = frozenset({"__consumer_offsets", "__transaction_state", "__share_group_state"})
ZERO_UUID = bytes(16)


class InvalidRequest(Exception):
    pass


@registry.register(ApiKey.DESCRIBE_TOPIC_PARTITIONS, 0, 0)
def describe_topic_partitions(ctx, req):
    fetch_all = not req.topics
    names = ctx.store.topics if fetch_all else [t.name for t in req.topics]
    denied = denied_names(ctx, DESCRIBE, TOPIC, names, log_denied=not fetch_all)
    try:
        result = describe(ctx, req, denied)
    except InvalidRequest:
        return {"topics": [{"error_code": ErrorCode.INVALID_REQUEST, "name": t.name, "topic_id": ZERO_UUID,
                            "is_internal": False, "partitions": []} for t in req.topics]}
    if ctx.authorizer is not None:
        for topic in result["topics"]:
            if "topic_authorized_operations" in topic:
                topic["topic_authorized_operations"] = authorized_operations(ctx, TOPIC, topic["name"])
    return result


def describe(ctx, req, denied=frozenset()) -> dict:
    """``denied``: names the principal may not describe: left out of all topics, else answered
    TOPIC_AUTHORIZATION_FAILED."""
    store = ctx.store
    cursor = req.cursor
    cursor_topic = cursor.topic_name if cursor is not None else ""
    fetch_all = not req.topics
    if fetch_all:
        names = {name for name in store.topics if name >= cursor_topic and name not in denied}
    else:
        names = {t.name for t in req.topics if t.name >= cursor_topic}
    if cursor is not None and (cursor.partition_index < 0 or cursor.topic_name not in names):
        raise InvalidRequest()

    remaining = max(min(MAX_REQUEST_PARTITION_SIZE_LIMIT, req.response_partition_limit), 1)
    topics: list[dict] = []
    next_cursor = None
    for name in sorted(names):
        if remaining == 0:
            # every partition of the previous topics fitted; the next page starts at this topic
            next_cursor = {"topic_name": name, "partition_index": 0}
            break
        topic = store.get(name)
        if name in denied:
            topics.append({"error_code": ErrorCode.TOPIC_AUTHORIZATION_FAILED, "name": name, "topic_id": ZERO_UUID,
                           "is_internal": False, "partitions": []})
            continue
        if topic is None:
            if not fetch_all:
                code = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION if validate_topic_name(name) else ErrorCode.INVALID_TOPIC_EXCEPTION
                # Kafka answers the operations of every topic its metadata cache answered, unknown ones too
                topics.append({"error_code": code, "name": name, "topic_id": ZERO_UUID,
                               "is_internal": name in INTERNAL_TOPICS, "partitions": [],
                               "topic_authorized_operations": TOPIC_OPERATIONS})
            continue
        start = cursor.partition_index if cursor is not None and name == cursor_topic else 0
        upper = min(len(topic.partitions), start + remaining)
        partitions = _partitions(ctx, topic.partitions[start:upper])
        topics.append({
            "error_code": ErrorCode.NONE,
            "name": name,
            "topic_id": topic.topic_id,
            "is_internal": topic.internal,
            "partitions": partitions,
            "topic_authorized_operations": TOPIC_OPERATIONS,
        })
        if upper < len(topic.partitions):
            next_cursor = {"topic_name": name, "partition_index": upper}
            break
        remaining -= len(partitions)
    return {"topics": topics, "next_cursor": next_cursor}


def _partitions(ctx, partitions) -> list[dict]:
    described = partitions_metadata(ctx.placement, partitions)
    for d in described:
        d["eligible_leader_replicas"] = d["last_known_elr"] = []
    return described
