"""DeleteTopics (key 20), v1-v6 (Kafka 4 removed the older versions, KIP-896: they close the connection) (v6 names topics by name or by id).

As Kafka's ControllerApis: a topic named twice, an entry with both a name and an id, or with
neither gets INVALID_REQUEST; unknown names UNKNOWN_TOPIC_OR_PARTITION, unknown ids
UNKNOWN_TOPIC_ID. Unlike KRaft, internal topics (__consumer_offsets) are refused with
INVALID_TOPIC_EXCEPTION: deleting it would wipe every group's state.
"""
from collections import Counter

from ..protocol.defaults import ZERO_UUID
from ..protocol.errors import DEFAULT_MESSAGES, ErrorCode
from ..protocol.api_keys import ApiKey
from .authorization import DELETE, DESCRIBE, TOPIC, authorize
from .registry import registry


@registry.register(ApiKey.DELETE_TOPICS, 1, 6)
def delete_topics(ctx, req):
    wanted = [(t.name, t.topic_id) for t in req.topics] if ctx.api_version >= 6 \
        else [(name, ZERO_UUID) for name in req.topic_names]
    counts = Counter(wanted)
    with ctx.store.topic_changes():   # the request's deletions reach the data directory as one write
        return {"responses": [_delete(ctx, name, topic_id, counts[(name, topic_id)] > 1)
                              for name, topic_id in dict.fromkeys(wanted)]}


def _delete(ctx, name, topic_id, duplicate: bool) -> dict:
    entry = {"name": name, "topic_id": topic_id, "error_code": ErrorCode.NONE}
    by_id = name is None
    if duplicate:
        entry.update(error_code=ErrorCode.INVALID_REQUEST,
                     error_message="Duplicate topic id." if by_id else "Duplicate topic name.")
        return entry
    if by_id and topic_id == ZERO_UUID:
        entry.update(error_code=ErrorCode.INVALID_REQUEST, error_message="Neither topic name nor id were specified.")
        return entry
    if not by_id and topic_id != ZERO_UUID:
        entry.update(error_code=ErrorCode.INVALID_REQUEST,
                     error_message="You may not specify both topic name and topic id.")
        return entry
    topic = ctx.store.by_id(topic_id) if by_id else ctx.store.get(name)
    if ctx.authorizer is not None and not (by_id and topic is None):
        target = topic.name if by_id else name
        if (by_id and not authorize(ctx, DESCRIBE, TOPIC, target)) or not authorize(ctx, DELETE, TOPIC, target):
            entry.update(error_code=ErrorCode.TOPIC_AUTHORIZATION_FAILED,   # ControllerApis: ApiError(error)
                         error_message=DEFAULT_MESSAGES[ErrorCode.TOPIC_AUTHORIZATION_FAILED])
            return entry
    if topic is None:   # Kafka's controller answers with the error's message
        entry.update(error_code=ErrorCode.UNKNOWN_TOPIC_ID, error_message="This server does not know this topic id.") \
            if by_id else entry.update(error_code=ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                                       error_message=f"Topic {name} does not exist.")
    elif topic.internal:
        entry.update(error_code=ErrorCode.INVALID_TOPIC_EXCEPTION,
                     error_message=f"Cannot delete internal topic {topic.name}.")
    else:
        ctx.topics.delete(topic.name)
        entry.update(name=topic.name, topic_id=topic.topic_id)
    return entry
