"""AlterShareGroupOffsets (key 91), v0 (KIP-932): set the start offset of share partitions of an
empty share group (their in-flight records are forgotten). A group that does not exist yet is
created (empty, at group and assignment epoch 1) once a partition's offset is set, as Kafka's
alterShareGroupOffsets (getOrMaybeCreateShareGroup) creates it. A group with members answers NON_EMPTY_GROUP, one of
another kind GROUP_ID_NOT_FOUND, an empty group id INVALID_GROUP_ID ("The group id is invalid.",
as Kafka's GroupCoordinatorService.alterShareGroupOffsets); an unknown topic or
partition UNKNOWN_TOPIC_OR_PARTITION; an offset beyond the high watermark or below the log start
OFFSET_OUT_OF_RANGE. The coordinator records the valid partitions as initializing, sets their start
offsets, then records them initialized (ShareGroupStatePartitionMetadata), as Kafka's
completeAlterShareGroupOffsets and initializeShareGroupState.

With authorization on, as KafkaApis.handleAlterShareGroupOffsetsRequest: READ on the group
(GROUP_AUTHORIZATION_FAILED), and READ on each topic: the partitions of a topic the principal may
not read answer TOPIC_AUTHORIZATION_FAILED and are not altered."""
from ..protocol.api_keys import ApiKey
from ..protocol.errors import ErrorCode
from .authorization import GROUP, READ, TOPIC, authorize, denied_names
from .registry import registry
from .share_common import INVALID_GROUP_ID_MESSAGE, share_group_error

E = ErrorCode
TOPIC_DENIED = "Topic authorization failed."   # Errors.TOPIC_AUTHORIZATION_FAILED.message
GROUP_DENIED = "Group authorization failed."   # the top-level error carries Errors.message, as Kafka's


@registry.register(ApiKey.ALTER_SHARE_GROUP_OFFSETS, 0, 0)
def alter_share_group_offsets(ctx, req):
    if ctx.authorizer is not None and not authorize(ctx, READ, GROUP, req.group_id):
        return {"throttle_time_ms": 0, "error_code": E.GROUP_AUTHORIZATION_FAILED, "error_message": GROUP_DENIED,
                "responses": []}
    if not req.group_id:
        return {"throttle_time_ms": 0, "error_code": E.INVALID_GROUP_ID, "error_message": INVALID_GROUP_ID_MESSAGE,
                "responses": []}
    error, message = share_group_error(ctx, req.group_id, must_be_empty=True, may_be_new=True)
    if error != E.NONE:
        return {"throttle_time_ms": 0, "error_code": error, "error_message": message, "responses": []}
    responses, offsets, names = [], {}, {}
    denied = denied_names(ctx, READ, TOPIC, [t.topic_name for t in req.topics])
    for t in req.topics:
        topic = ctx.store.get(t.topic_name)
        entry = {"topic_name": t.topic_name, "topic_id": topic.topic_id if topic is not None else bytes(16),
                 "partitions": []}
        if t.topic_name in denied:
            entry["partitions"] = [{"partition_index": p.partition_index, "error_code": E.TOPIC_AUTHORIZATION_FAILED,
                                    "error_message": TOPIC_DENIED} for p in t.partitions]
            responses.append(entry)
            continue
        for p in t.partitions:
            code = E.NONE
            if topic is None or not 0 <= p.partition_index < len(topic.partitions):
                code = E.UNKNOWN_TOPIC_OR_PARTITION
            else:
                plog = topic.partitions[p.partition_index]
                if not plog.log_start_offset <= p.start_offset <= plog.high_watermark:
                    code = E.OFFSET_OUT_OF_RANGE
                else:
                    offsets[(topic.topic_id, p.partition_index)] = p.start_offset
                    names[topic.topic_id] = topic.name
            entry["partitions"].append({"partition_index": p.partition_index, "error_code": code,
                                        "error_message": None})
        responses.append(entry)
    error = ctx.groups.alter_share_group_offsets(ctx.now_ms, req.group_id, offsets, names)
    if error != E.NONE:
        return {"throttle_time_ms": 0, "error_code": error, "error_message": None, "responses": []}
    return {"throttle_time_ms": 0, "error_code": E.NONE, "error_message": None, "responses": responses}
