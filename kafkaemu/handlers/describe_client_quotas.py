"""DescribeClientQuotas (key 48), v0-v1: the quota entities a filter matches and their values, as
a KRaft broker answers from its quota cache (``core/quotas/entities.py``): CLUSTER
DESCRIBE_CONFIGS is required; a bad filter is the request's error with entries null."""
from ..auth.acl import AclOperation
from ..core.quotas.entities import QuotaError
from ..protocol.api_keys import ApiKey
from ..protocol.errors import ErrorCode
from .authorization import authorize_cluster
from .registry import registry


def _error(code: int, message: str | None) -> dict:
    return {"error_code": code, "error_message": message, "entries": None}


@registry.register(ApiKey.DESCRIBE_CLIENT_QUOTAS, 0, 1)
def describe_client_quotas(ctx, req):
    if not authorize_cluster(ctx, AclOperation.DESCRIBE_CONFIGS):
        return _error(ErrorCode.CLUSTER_AUTHORIZATION_FAILED, None)
    try:
        found = ctx.quotas.describe(((c.entity_type, c.match_type, c.match) for c in req.components), req.strict)
    except QuotaError as exc:
        return _error(getattr(ErrorCode, exc.code), exc.message)
    return {"error_code": ErrorCode.NONE, "error_message": "", "entries": [
        {"entity": [{"entity_type": t, "entity_name": n} for t, n in sorted(entity, key=lambda p: p[0])],
         "values": [{"key": k, "value": v} for k, v in values.items()]}
        for entity, values in found.items()]}
