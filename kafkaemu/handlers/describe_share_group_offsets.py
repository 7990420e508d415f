"""DescribeShareGroupOffsets (key 90), v0-v1 (KIP-932): each share partition's start offset (the
share-partition start offset, SPSO) and, from v1, its lag: the records from the start offset to
the high watermark not yet acknowledged or archived. Both as the partition's last state write told
the share coordinator (SharePartition.written: Kafka reads the share state summary), so the start
offset lags one write behind the records just acknowledged. ``topics`` null means every partition with
share state. As Kafka's GroupCoordinatorService.describeShareGroupOffsets, which reads the share
state summary without looking the group up: a group with no share state (one that does not exist,
or of another kind) answers NONE, with no topics when all are asked for; a partition without share
state, of an unknown topic (its id zero) or beyond the topic's partitions, start offset -1, leader
epoch 0 and lag -1. A share partition assigned but not fetched from yet (or fetched, but its state
not written since) answers start offset -1 and lag -1, as Kafka's share state is uninitialized then.

With authorization on, as KafkaApis.handleDescribeShareGroupOffsetsRequest: a group the principal
may not DESCRIBE is GROUP_AUTHORIZATION_FAILED; topics it may not DESCRIBE are left out of an
all-topics answer, and a named one answers TOPIC_AUTHORIZATION_FAILED for each partition, after the
others."""
from ..core.share.partition import UNINITIALIZED
from ..protocol.api_keys import ApiKey
from ..protocol.errors import DEFAULT_MESSAGES, ErrorCode
from .authorization import DESCRIBE, GROUP, TOPIC, authorize, denied_names
from .registry import registry
from .group_common import is_coordinator

E = ErrorCode
TOPIC_DENIED = "Topic authorization failed."   # Errors.TOPIC_AUTHORIZATION_FAILED.message


@registry.register(ApiKey.DESCRIBE_SHARE_GROUP_OFFSETS, 0, 1)
def describe_share_group_offsets(ctx, req):
    return {"groups": [_group(ctx, g) for g in req.groups]}


def _group(ctx, req_group) -> dict:
    out = {"group_id": req_group.group_id, "topics": [], "error_code": E.NONE, "error_message": None}
    if ctx.authorizer is not None and not authorize(ctx, DESCRIBE, GROUP, req_group.group_id):
        out["error_code"] = E.GROUP_AUTHORIZATION_FAILED
        return out
    if not is_coordinator(ctx, req_group.group_id):
        out["error_code"] = E.NOT_COORDINATOR
        return out
    if req_group.group_id == "" and any(ctx.store.get(t.topic_name) is not None for t in req_group.topics or ()):
        # Kafka's share-state persister refuses to read the state of an empty group id; KafkaApis
        # answers the failed read as an unexpected error
        out.update(error_code=E.UNKNOWN_SERVER_ERROR, error_message=DEFAULT_MESSAGES[E.UNKNOWN_SERVER_ERROR])
        return out
    spm = ctx.shares
    state = spm.group_state(ctx.now_ms, req_group.group_id)
    starts = {tp: sp.start_offset for tp, sp in state.items()}
    names = {t.topic_id: name for name, t in ctx.store.topics.items()}
    if req_group.topics is None:
        wanted: dict[str, list[int]] = {}
        for tid, p in sorted(starts):
            if tid in names:
                wanted.setdefault(names[tid], []).append(p)
        asked = list(wanted.items())
        hidden = denied_names(ctx, DESCRIBE, TOPIC, wanted, log_denied=False)
        asked, refused = [(n, ps) for n, ps in asked if n not in hidden], []
    else:
        asked = [(t.topic_name, list(t.partitions)) for t in req_group.topics]
        denied = denied_names(ctx, DESCRIBE, TOPIC, [name for name, _ in asked])
        asked, refused = [(n, ps) for n, ps in asked if n not in denied], [(n, ps) for n, ps in asked if n in denied]
    for name, partitions in asked:
        topic = ctx.store.get(name)
        entry = {"topic_name": name, "topic_id": topic.topic_id if topic is not None else bytes(16), "partitions": []}
        for p in partitions:
            part = {"partition_index": p, "start_offset": -1, "leader_epoch": 0, "lag": -1, "error_code": E.NONE,
                    "error_message": None}
            if topic is not None and 0 <= p < len(topic.partitions):
                sp = state.get((topic.topic_id, p))
                if sp is not None:
                    plog = topic.partitions[p]
                    start, complete = sp.written
                    part["start_offset"] = start
                    part["leader_epoch"] = plog.leader_epoch
                    if start != UNINITIALIZED:   # never fetched from, or not written since: no lag
                        part["lag"] = max(plog.high_watermark - start - complete, 0)
            entry["partitions"].append(part)
        out["topics"].append(entry)
    for name, partitions in refused:
        out["topics"].append({"topic_name": name, "topic_id": bytes(16), "partitions": [
            {"partition_index": p, "start_offset": -1, "leader_epoch": 0, "lag": -1,   # Kafka's field defaults
             "error_code": E.TOPIC_AUTHORIZATION_FAILED, "error_message": TOPIC_DENIED} for p in partitions]})
    return out
