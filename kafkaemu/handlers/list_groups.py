"""ListGroups (key 16), v0-v5.

Every live group this node coordinates (with several nodes each lists its own, as Kafka), with
protocol type, state (v4+, filterable by ``states_filter``, case-insensitive) and type (v5+,
"classic" or "consumer" for KIP-848 groups; filterable by ``types_filter``).
Not implemented: authorization.
"""
from .group_common import is_coordinator
from ..protocol.api_keys import ApiKey
from .authorization import CLUSTER, DESCRIBE, GROUP, authorize
from .registry import registry


@registry.register(ApiKey.LIST_GROUPS, 0, 5)
def list_groups(ctx, req):
    version = ctx.api_version
    states = list(req.states_filter) if version >= 4 else []
    types = list(req.types_filter) if version >= 5 else []
    groups = ctx.groups.list_groups(ctx.now_ms, states, types)
    groups = [g for g in groups if is_coordinator(ctx, g["group_id"])]
    if ctx.authorizer is not None and not authorize(ctx, DESCRIBE, CLUSTER, "kafka-cluster", log_denied=False):
        groups = [g for g in groups if authorize(ctx, DESCRIBE, GROUP, g["group_id"], log_denied=False)]
    return {"error_code": 0, "groups": groups}
