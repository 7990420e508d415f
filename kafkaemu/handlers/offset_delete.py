"""OffsetDelete (key 47), v0.

Deletes committed offsets of a group: GROUP_ID_NOT_FOUND for an unknown group, NON_EMPTY_GROUP for
a non-consumer group with members, GROUP_SUBSCRIBED_TO_TOPIC for topics an active consumer group
subscribes to, UNKNOWN_TOPIC_OR_PARTITION for partitions that do not exist, INVALID_GROUP_ID for
the empty group id. Not implemented: authorization.
"""
from ..protocol.errors import ErrorCode
from .group_common import is_coordinator, partition_exists
from ..protocol.api_keys import ApiKey
from .authorization import DELETE, GROUP, READ, TOPIC, authorize, denied_names
from .registry import registry


@registry.register(ApiKey.OFFSET_DELETE, 0, 0)
def offset_delete(ctx, req):
    if not authorize(ctx, DELETE, GROUP, req.group_id):
        return {"error_code": ErrorCode.GROUP_AUTHORIZATION_FAILED, "topics": []}
    if req.group_id and not is_coordinator(ctx, req.group_id):  # "": INVALID_GROUP_ID first
        return {"error_code": ErrorCode.NOT_COORDINATOR, "topics": []}
    denied = denied_names(ctx, READ, TOPIC, [t.name for t in req.topics])
    topics = [(t.name, [p.partition_index for p in t.partitions]) for t in req.topics if t.name not in denied]
    result = ctx.groups.delete_offsets(ctx.now_ms, req.group_id, topics, partition_exists(ctx))
    if denied:
        result = dict(result, topics=list(result.get("topics", [])) + [
            {"name": t.name, "partitions": [{"partition_index": p.partition_index,
                                             "error_code": ErrorCode.TOPIC_AUTHORIZATION_FAILED}
                                            for p in t.partitions]} for t in req.topics if t.name in denied])
    return result
