"""ShareGroupDescribe (key 77), v1 (KIP-932): group epoch, assignment epoch, state (Empty/Stable),
the assignor ("simple") and every member with its epoch, subscription and assignment (topic ids
with names). Unknown groups, and groups of another kind, get GROUP_ID_NOT_FOUND, as Kafka; the
empty group id INVALID_GROUP_ID. authorized_operations is INT32_MIN unless asked for."""
from ..protocol.api_keys import ApiKey
from ..protocol.errors import ErrorCode
from .group_common import is_coordinator
from .registry import registry


@registry.register(ApiKey.SHARE_GROUP_DESCRIBE, 1, 1)
def share_group_describe(ctx, req):
    names = {t.topic_id: name for name, t in ctx.store.topics.items()}
    mine = [g for g in req.group_ids if not g or is_coordinator(ctx, g)]
    described = ctx.groups.share_group_describe(ctx.now_ms, mine, names, bool(req.include_authorized_operations))
    by_id = {d["group_id"]: d for d in described}
    return {"groups": [by_id.get(g, {"error_code": ErrorCode.NOT_COORDINATOR, "group_id": g, "group_state": "",
                                     "assignor_name": "", "members": []})
                       for g in req.group_ids]}
