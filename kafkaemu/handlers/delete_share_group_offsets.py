"""DeleteShareGroupOffsets (key 92), v0 (KIP-932): forget the share state of whole topics for an
empty share group; the next consumption starts where share.auto.offset.reset says. A group with
members answers NON_EMPTY_GROUP, an unknown group or one of another kind GROUP_ID_NOT_FOUND, an
unknown topic UNKNOWN_TOPIC_OR_PARTITION."""
from ..protocol.api_keys import ApiKey
from ..protocol.errors import ErrorCode
from .registry import registry
from .share_common import share_group_error

E = ErrorCode


@registry.register(ApiKey.DELETE_SHARE_GROUP_OFFSETS, 0, 0)
def delete_share_group_offsets(ctx, req):
    ctx.groups.tick(ctx.now_ms)
    error, message = share_group_error(ctx, req.group_id, must_be_empty=True)
    if error != E.NONE:
        return {"throttle_time_ms": 0, "error_code": error, "error_message": message, "responses": []}
    responses = []
    for t in req.topics:
        topic = ctx.store.get(t.topic_name)
        if topic is None:
            responses.append({"topic_name": t.topic_name, "topic_id": bytes(16),
                              "error_code": E.UNKNOWN_TOPIC_OR_PARTITION, "error_message": None})
            continue
        ctx.groups.share_partitions.delete_topic_state(req.group_id, topic.topic_id)
        responses.append({"topic_name": t.topic_name, "topic_id": topic.topic_id, "error_code": E.NONE,
                          "error_message": None})
    return {"throttle_time_ms": 0, "error_code": E.NONE, "error_message": None, "responses": responses}
