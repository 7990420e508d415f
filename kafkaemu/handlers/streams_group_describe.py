"""StreamsGroupDescribe (key 89), v0 (KIP-1071): group epoch, assignment epoch, state (Empty,
NotReady, Assigning, Reconciling, Stable), the topology as configured against the topics that exist,
and every member with its process, endpoint, tags, task offsets, current and target tasks. Unknown
groups and groups of another kind get GROUP_ID_NOT_FOUND, the empty id INVALID_GROUP_ID, a group
the principal may not DESCRIBE GROUP_AUTHORIZATION_FAILED; authorized_operations is INT32_MIN
unless asked for."""
from ..protocol.api_keys import ApiKey
from ..protocol.errors import ErrorCode
from .authorization import DESCRIBE, GROUP, authorize, authorized_operations
from .group_common import is_coordinator
from .registry import registry


def _failed(code: ErrorCode, group_id: str) -> dict:
    return {"error_code": code, "group_id": group_id, "group_state": "", "members": [], "topology": None}


@registry.register(ApiKey.STREAMS_GROUP_DESCRIBE, 0, 0)
def streams_group_describe(ctx, req):
    if ctx.features.level("streams.version") < 1:
        return {"groups": [_failed(ErrorCode.UNSUPPORTED_VERSION, g) for g in req.group_ids]}
    out = {}
    mine = []
    for g in req.group_ids:
        if g and not authorize(ctx, DESCRIBE, GROUP, g):
            out[g] = _failed(ErrorCode.GROUP_AUTHORIZATION_FAILED, g)
        elif g and not is_coordinator(ctx, g):
            out[g] = _failed(ErrorCode.NOT_COORDINATOR, g)
        else:
            mine.append(g)
    for d in ctx.groups.streams_group_describe(ctx.now_ms, mine, bool(req.include_authorized_operations)):
        if d["error_code"] == 0 and req.include_authorized_operations and ctx.authorizer is not None:
            d["authorized_operations"] = authorized_operations(ctx, GROUP, d["group_id"])
        out[d["group_id"]] = d
    return {"groups": [out[g] for g in req.group_ids]}
