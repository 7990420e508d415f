"""ListGroups (key 16), v0-v5.

Every live group this broker coordinates, with protocol type, state (v4+, filterable by
``states_filter``, case-insensitive) and type (v5+, always "classic"; filterable by ``types_filter``).
Not implemented: KIP-848 consumer groups, authorization.
"""
from .registry import handler


@handler(16, 0, 5)
def list_groups(ctx, req):
    version = ctx.api_version
    states = list(req.states_filter) if version >= 4 else []
    types = list(req.types_filter) if version >= 5 else []
    return {"error_code": 0, "groups": ctx.broker.coordinator.list_groups(ctx.now_ms, states, types)}
