"""DeleteGroups (key 42), v0-v2.

Deletes Empty groups with their offsets (tombstones in __consumer_offsets); NON_EMPTY_GROUP for a
group with members, GROUP_ID_NOT_FOUND for an unknown one. Not implemented: authorization.
"""
from ..protocol.errors import ErrorCode
from .group_common import is_coordinator
from .registry import handler


@handler(42, 0, 2)
def delete_groups(ctx, req):
    mine = [g for g in req.groups_names if is_coordinator(ctx, g)]
    done = {r["group_id"]: r for r in ctx.broker.coordinator.delete_groups(ctx.now_ms, mine)}
    return {"results": [done.get(g, {"group_id": g, "error_code": ErrorCode.NOT_COORDINATOR})
                        for g in req.groups_names]}
