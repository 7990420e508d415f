"""ShareGroupDescribe (key 77), v1 (KIP-932): group epoch, assignment epoch, state (Empty/Stable),
the assignor ("simple") and every member with its epoch, subscription and assignment (topic ids
with names). Unknown groups, and groups of another kind, get GROUP_ID_NOT_FOUND, as Kafka; the
empty group id INVALID_GROUP_ID. authorized_operations is INT32_MIN unless asked for.

With authorization on, as KafkaApis.handleShareGroupDescribe: a group the principal may not
DESCRIBE is GROUP_AUTHORIZATION_FAILED; a group with a member assigned a topic the principal may
not DESCRIBE is TOPIC_AUTHORIZATION_FAILED without its members; authorized_operations, when asked
for, is the principal's operations on the group."""
from ..protocol.api_keys import ApiKey
from ..protocol.errors import ErrorCode
from .authorization import DESCRIBE, GROUP, TOPIC, authorized_operations, denied_names
from .group_common import is_coordinator
from .registry import registry

TOPICS_HIDDEN = "The group has described topic(s) that the client is not authorized to describe."


def _failed(code: ErrorCode, group_id: str, message: str | None = None) -> dict:
    return {"error_code": code, "error_message": message, "group_id": group_id, "group_state": "",
            "assignor_name": "", "members": []}


@registry.register(ApiKey.SHARE_GROUP_DESCRIBE, 1, 1)
def share_group_describe(ctx, req):
    names = {t.topic_id: name for name, t in ctx.store.topics.items()}
    denied = denied_names(ctx, DESCRIBE, GROUP, req.group_ids)
    mine = [g for g in req.group_ids if g not in denied and (not g or is_coordinator(ctx, g))]
    described = ctx.groups.share_group_describe(ctx.now_ms, mine, names, bool(req.include_authorized_operations))
    by_id = {d["group_id"]: d for d in described}
    if ctx.authorizer is not None:
        by_id = {g: _authorized_view(ctx, d, bool(req.include_authorized_operations)) for g, d in by_id.items()}
    by_id.update((g, _failed(ErrorCode.GROUP_AUTHORIZATION_FAILED, g)) for g in denied)
    return {"groups": [by_id.get(g, _failed(ErrorCode.NOT_COORDINATOR, g)) for g in req.group_ids]}


def _authorized_view(ctx, described: dict, include_operations: bool) -> dict:
    if described["error_code"]:
        return described
    assigned = {tp["topic_name"] for m in described["members"] for tp in m["assignment"]["topic_partitions"]}
    if denied_names(ctx, DESCRIBE, TOPIC, assigned):
        return _failed(ErrorCode.TOPIC_AUTHORIZATION_FAILED, described["group_id"], TOPICS_HIDDEN)
    if include_operations:
        return dict(described, authorized_operations=authorized_operations(ctx, GROUP, described["group_id"]))
    return described
