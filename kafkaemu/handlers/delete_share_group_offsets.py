"""DeleteShareGroupOffsets (key 92), v0 (KIP-932): forget the share state of whole topics for an
empty share group; the next consumption starts where share.auto.offset.reset says. A group with
members answers NON_EMPTY_GROUP, an unknown group or one of another kind GROUP_ID_NOT_FOUND, an
unknown topic UNKNOWN_TOPIC_OR_PARTITION, and so does a topic whose share state the group never
initialized ("There is no offset information to delete.", as Kafka's
sharePartitionsEligibleForOffsetDeletion). The coordinator records the topic as deleting, deletes
its share state, then records it deleted (ShareGroupStatePartitionMetadata)."""
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
    topics = []
    for t in req.topics:
        topic = ctx.store.get(t.topic_name)
        topics.append((t.topic_name, topic.topic_id if topic is not None else None))
    responses = ctx.groups.delete_share_group_offsets(ctx.now_ms, req.group_id, topics)
    if isinstance(responses, ErrorCode):
        return {"throttle_time_ms": 0, "error_code": responses, "error_message": None, "responses": []}
    return {"throttle_time_ms": 0, "error_code": E.NONE, "error_message": None, "responses": responses}
