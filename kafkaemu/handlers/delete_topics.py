"""DeleteTopics (key 20), v0-v6 (v6 names topics by name or id).

Unknown names get UNKNOWN_TOPIC_OR_PARTITION, unknown ids UNKNOWN_TOPIC_ID; internal topics
(__consumer_offsets) are refused with INVALID_TOPIC_EXCEPTION.
"""
from ..protocol.errors import ErrorCode
from .registry import handler


@handler(20, 0, 6)
def delete_topics(ctx, req):
    broker = ctx.broker
    wanted = [(t.name, t.topic_id) for t in req.topics] if ctx.api_version >= 6 \
        else [(name, None) for name in req.topic_names]
    responses = []
    for name, topic_id in wanted:
        topic = broker.store.get(name) if name is not None else broker.store.by_id(topic_id)
        entry = {"name": name, "topic_id": topic_id or bytes(16), "error_code": ErrorCode.NONE}
        if topic is None:
            entry["error_code"] = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION if name is not None else ErrorCode.UNKNOWN_TOPIC_ID
        elif topic.internal:
            entry["error_code"] = ErrorCode.INVALID_TOPIC_EXCEPTION
            entry["error_message"] = f"Cannot delete internal topic {topic.name}."
        else:
            broker.delete_topic(topic.name)
            entry.update(name=topic.name, topic_id=topic.topic_id)
        responses.append(entry)
    return {"responses": responses}
