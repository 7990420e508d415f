"""OffsetFetch (key 9), v1-v10 (Kafka 4 removed the older versions, KIP-896: they close the connection).

Committed offsets of one group (v0-7) or several (v8+); -1 with empty metadata for partitions
without a commit; a null topic list (v2+) returns every committed partition. Works in every group
state (an Empty group may hold offsets). v0-1 have no top-level error, so a group-level error is
put on every partition. v7+ require_stable: a partition with a pending transactional offset
commit answers UNSTABLE_OFFSET_COMMIT (older versions, and require_stable false, read the
committed offset, as Kafka).
v9's member_id/member_epoch are checked against a KIP-848 consumer group's member
(UNKNOWN_MEMBER_ID, STALE_MEMBER_EPOCH); null/-1 (admin clients) are always accepted.
v10 (KIP-848) names topics by id: each id is resolved to its name (offsets are kept by name), an
unknown id (the zero id too) answers UNKNOWN_TOPIC_ID for its partitions, and every topic of the
answer carries its id (the zero id for a committed topic that no longer exists), as
KafkaApis.fetchOffsetsForGroup.
"""
from ..protocol.defaults import ZERO_UUID
from ..protocol.errors import ErrorCode
from .group_common import is_coordinator
from ..protocol.api_keys import ApiKey
from .authorization import DESCRIBE, GROUP, TOPIC, authorize, denied_names
from .registry import registry


@registry.register(ApiKey.OFFSET_FETCH, 1, 10)
def offset_fetch(ctx, req):
    version = ctx.api_version
    if version >= 10:
        return {"groups": [_fetch_by_topic_id(ctx, g, req.require_stable) for g in req.groups]}
    if version >= 8:
        return {"groups": [_fetch(ctx, g.group_id, _topics(g.topics), g.member_id if version >= 9 else None,
                                  g.member_epoch if version >= 9 else -1, req.require_stable) for g in req.groups]}
    topics = _topics(req.topics)
    group = _fetch(ctx, req.group_id, topics, require_stable=version >= 7 and req.require_stable)
    error = group["error_code"]
    out_topics = [{"name": t["name"], "partitions": [
        dict(p, error_code=p["error_code"] or (error if version < 2 else 0)) for p in t["partitions"]]}
        for t in group["topics"]]
    return {"topics": out_topics, "error_code": error}


def _topics(topics):
    if topics is None:
        return None
    return [(t.name, list(t.partition_indexes)) for t in topics]


def _fetch_by_topic_id(ctx, group, require_stable) -> dict:
    store = ctx.store
    known, unknown = [], []
    for t in group.topics or ():
        topic = None if t.topic_id == ZERO_UUID else store.by_id(t.topic_id)
        (unknown if topic is None else known).append((topic.name if topic else "", t))
    topics = None if group.topics is None else [(name, list(t.partition_indexes)) for name, t in known]
    result = _fetch(ctx, group.group_id, topics, group.member_id, group.member_epoch, require_stable)
    for t in result["topics"]:
        topic = store.get(t["name"])
        t["topic_id"] = ZERO_UUID if topic is None else topic.topic_id
    if unknown and result["error_code"] == ErrorCode.NONE:
        result = dict(result, topics=[
            {"name": "", "topic_id": t.topic_id, "partitions": [
                {"partition_index": p, "committed_offset": -1, "committed_leader_epoch": -1, "metadata": "",
                 "error_code": ErrorCode.UNKNOWN_TOPIC_ID} for p in t.partition_indexes]}
            for _, t in unknown] + result["topics"])
    return result


def _fetch(ctx, group_id, topics, member_id=None, member_epoch=-1, require_stable=False) -> dict:
    # a group's error (OffsetFetchResponse.groupError): from v2 at the group alone, before in each partition
    per_partition = topics if ctx.api_version < 2 else None
    if not authorize(ctx, DESCRIBE, GROUP, group_id):
        return _failed(group_id, per_partition, ErrorCode.GROUP_AUTHORIZATION_FAILED)
    if not is_coordinator(ctx, group_id):
        return _failed(group_id, per_partition, ErrorCode.NOT_COORDINATOR)
    coordinator = ctx.groups
    if ctx.authorizer is None:
        return coordinator.fetch_offsets(ctx.now_ms, group_id, topics, member_id, member_epoch, require_stable)
    if topics is None:   # all the group's topics: those the principal may not describe are left out
        result = coordinator.fetch_offsets(ctx.now_ms, group_id, None, member_id, member_epoch, require_stable)
        hidden = denied_names(ctx, DESCRIBE, TOPIC, [t["name"] for t in result["topics"]], log_denied=False)
        return dict(result, topics=[t for t in result["topics"] if t["name"] not in hidden])
    denied = denied_names(ctx, DESCRIBE, TOPIC, [name for name, _ in topics])
    result = coordinator.fetch_offsets(ctx.now_ms, group_id, [t for t in topics if t[0] not in denied], member_id,
                                       member_epoch, require_stable)
    if denied:
        failed = _failed(group_id, [t for t in topics if t[0] in denied], ErrorCode.TOPIC_AUTHORIZATION_FAILED)
        result = dict(result, topics=result["topics"] + failed["topics"])
    return result


def _failed(group_id, topics, code) -> dict:
    return {"group_id": group_id, "error_code": code, "topics": [
        {"name": name, "partitions": [{"partition_index": p, "committed_offset": -1, "committed_leader_epoch": -1,
                                       "metadata": "", "error_code": code}
                                      for p in parts]} for name, parts in (topics or [])]}
