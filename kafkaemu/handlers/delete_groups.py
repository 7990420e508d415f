"""DeleteGroups (key 42), v0-v3.

Deletes Empty groups with their offsets (tombstones in __consumer_offsets); NON_EMPTY_GROUP for a
group with members, GROUP_ID_NOT_FOUND for an unknown one; GROUP_AUTHORIZATION_FAILED without DELETE on
the group. v3 (Kafka 4.4) adds a per-group error message, which Kafka's coordinator leaves null for
these errors (GroupCoordinatorShard.deleteGroups sets only the code), as kafkaemu does.
"""
from ..protocol.errors import ErrorCode
from .group_common import is_coordinator
from ..protocol.api_keys import ApiKey
from .authorization import DELETE, GROUP, denied_names
from .registry import registry


@registry.register(ApiKey.DELETE_GROUPS, 0, 3)
def delete_groups(ctx, req):
    denied = denied_names(ctx, DELETE, GROUP, req.groups_names)
    mine = [g for g in req.groups_names if g not in denied and is_coordinator(ctx, g)]
    done = {r["group_id"]: r for r in ctx.groups.delete_groups(ctx.now_ms, mine)}
    done.update((g, {"group_id": g, "error_code": ErrorCode.GROUP_AUTHORIZATION_FAILED}) for g in denied)
    return {"results": [done.get(g, {"group_id": g, "error_code": ErrorCode.NOT_COORDINATOR})
                        for g in req.groups_names]}
