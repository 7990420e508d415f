"""AlterClientQuotas (key 49), v0-v1: set or remove quota values per entity, validated as Kafka's
controller does (``core/quotas/entities.py``): CLUSTER ALTER_CONFIGS is required (every entry
CLUSTER_AUTHORIZATION_FAILED otherwise); each entity succeeds or fails on its own;
``validate_only`` changes nothing. Enforcement follows at once (``broker/quotas.py``)."""
from ..auth.acl import AclOperation
from ..core.quotas.entities import Entity
from ..protocol.api_keys import ApiKey
from ..protocol.errors import ErrorCode
from .authorization import authorize_cluster
from .registry import registry


def _entity_data(entity) -> list[dict]:
    return [{"entity_type": t, "entity_name": n} for t, n in sorted(entity, key=lambda p: p[0])]


@registry.register(ApiKey.ALTER_CLIENT_QUOTAS, 0, 1)
def alter_client_quotas(ctx, req):
    if not authorize_cluster(ctx, AclOperation.ALTER_CONFIGS):
        return {"entries": [{"error_code": ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
                             "error_message": "Cluster authorization failed.",
                             "entity": [{"entity_type": e.entity_type, "entity_name": e.entity_name}
                                        for e in entry.entity]} for entry in req.entries]}
    # as ClientQuotaEntity, a type named twice in one entity keeps its last name
    alterations = [(Entity({e.entity_type: e.entity_name for e in entry.entity}.items()),
                    [(op.key, op.value, op.remove) for op in entry.ops]) for entry in req.entries]
    results = ctx.quotas.alter(alterations, req.validate_only)
    return {"entries": [{"error_code": getattr(ErrorCode, code), "error_message": message,
                         "entity": _entity_data(entity)} for entity, code, message in results]}
