"""DeleteShareGroupOffsets (key 92), v0 (KIP-932): forget the share state of whole topics for an
empty share group; the next consumption starts where share.auto.offset.reset says. A group with
members answers NON_EMPTY_GROUP, an unknown group or one of another kind GROUP_ID_NOT_FOUND, an
empty group id INVALID_GROUP_ID ("The group id is invalid.", as Kafka's
GroupCoordinatorService.deleteShareGroupOffsets, after the group's authorization), an unknown topic UNKNOWN_TOPIC_OR_PARTITION, and so does a topic whose share state the group never
initialized ("There is no offset information to delete.", as Kafka's
sharePartitionsEligibleForOffsetDeletion). The coordinator records the topic as deleting, deletes
its share state, then records it deleted (ShareGroupStatePartitionMetadata).

With authorization on, as KafkaApis.handleDeleteShareGroupOffsetsRequest: DELETE on the group
(GROUP_AUTHORIZATION_FAILED), and READ on each topic: a topic the principal may not read answers
TOPIC_AUTHORIZATION_FAILED, first, and keeps its share state."""
from ..protocol.api_keys import ApiKey
from ..protocol.errors import ErrorCode
from .authorization import DELETE, GROUP, READ, TOPIC, authorize, denied_names
from .registry import registry
from .share_common import INVALID_GROUP_ID_MESSAGE, share_group_error

E = ErrorCode
TOPIC_DENIED = "Topic authorization failed."   # Errors.TOPIC_AUTHORIZATION_FAILED.message
GROUP_DENIED = "Group authorization failed."   # the top-level error carries Errors.message, as Kafka's


@registry.register(ApiKey.DELETE_SHARE_GROUP_OFFSETS, 0, 0)
def delete_share_group_offsets(ctx, req):
    if ctx.authorizer is not None and not authorize(ctx, DELETE, GROUP, req.group_id):
        return _top_error(E.GROUP_AUTHORIZATION_FAILED, GROUP_DENIED)
    if not req.group_id:
        return _top_error(E.INVALID_GROUP_ID, INVALID_GROUP_ID_MESSAGE)
    error, message = share_group_error(ctx, req.group_id, must_be_empty=True)
    if error != E.NONE:
        return _top_error(error, message)
    denied = denied_names(ctx, READ, TOPIC, [t.topic_name for t in req.topics])
    refused = [{"topic_name": t.topic_name, "topic_id": bytes(16), "error_code": E.TOPIC_AUTHORIZATION_FAILED,
                "error_message": TOPIC_DENIED} for t in req.topics if t.topic_name in denied]
    topics = []
    for t in req.topics:
        if t.topic_name in denied:
            continue
        topic = ctx.store.get(t.topic_name)
        topics.append((t.topic_name, topic.topic_id if topic is not None else None))
    responses = ctx.groups.delete_share_group_offsets(ctx.now_ms, req.group_id, topics)
    if isinstance(responses, ErrorCode):
        return _top_error(responses)
    return {"throttle_time_ms": 0, "error_code": E.NONE, "error_message": None, "responses": refused + responses}


def _top_error(code: ErrorCode, message: str | None = None) -> dict:
    return {"throttle_time_ms": 0, "error_code": code, "error_message": message, "responses": []}
