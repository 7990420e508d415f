"""ConsumerGroupDescribe (key 69), v0-v1.

Group epoch, target assignment epoch, state (Empty/Assigning/Reconciling/Stable), the server
assignor in use, and every member with its epoch, subscription, current and target assignment
(topic ids with names). Unknown groups and classic groups get GROUP_ID_NOT_FOUND, as Kafka;
the empty group id INVALID_GROUP_ID. v1 (KIP-1099) adds each member's type (1: consumer protocol).
authorized_operations is INT32_MIN unless asked for, then READ|DELETE|DESCRIBE (no authorizer).
Not implemented: ACLs.
"""
from ..protocol.errors import ErrorCode
from .group_common import is_coordinator
from ..protocol.api_keys import ApiKey
from .authorization import DESCRIBE, GROUP, authorized_operations, denied_names
from .registry import registry


@registry.register(ApiKey.CONSUMER_GROUP_DESCRIBE, 0, 1)
def consumer_group_describe(ctx, req):
    store = ctx.store
    names = {t.topic_id: name for name, t in store.topics.items()}
    denied = denied_names(ctx, DESCRIBE, GROUP, req.group_ids)
    mine = [g for g in req.group_ids if g not in denied and (not g or is_coordinator(ctx, g))]  # "": INVALID_GROUP_ID
    described = ctx.groups.consumer_group_describe(
        ctx.now_ms, mine, names, bool(req.include_authorized_operations))
    by_id = {d["group_id"]: d for d in described}
    if req.include_authorized_operations and ctx.authorizer is not None:
        by_id = {g: dict(d, authorized_operations=authorized_operations(ctx, GROUP, g)) if not d["error_code"] else d
                 for g, d in by_id.items()}
    by_id.update((g, {"error_code": ErrorCode.GROUP_AUTHORIZATION_FAILED, "group_id": g, "group_state": "",
                      "assignor_name": "", "members": []}) for g in denied)
    return {"groups": [by_id.get(g, {"error_code": ErrorCode.NOT_COORDINATOR, "group_id": g, "group_state": "",
                                     "assignor_name": "", "members": []})
                       for g in req.group_ids]}
