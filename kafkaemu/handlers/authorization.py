"""The checks handlers make, as Kafka's ``AuthHelper``: with no authorizer (authorization off)
everything is allowed. A denial a client asked for is logged and kept (``record_denial``); checks
that only filter (Metadata of all topics, authorized-operation bit sets) are not."""
from __future__ import annotations

from typing import Iterable

from ..auth.acl import CLUSTER_NAME, AclOperation, ResourceType
from ..auth.authorizer import SUPPORTED_OPERATIONS, operation_bits

TOPIC, GROUP, CLUSTER, TRANSACTIONAL_ID = (ResourceType.TOPIC, ResourceType.GROUP, ResourceType.CLUSTER,
                                           ResourceType.TRANSACTIONAL_ID)


def authorize(ctx, operation: AclOperation, resource_type: ResourceType, name: str, log_denied: bool = True) -> bool:
    authorizer = ctx.authorizer
    if authorizer is None:
        return True
    if authorizer.authorize(ctx.principal, ctx.client_host, operation, resource_type, name):
        return True
    if log_denied:
        authorizer.record_denial(ctx.principal, ctx.client_host, operation, resource_type, name,
                                 getattr(ctx.api_key, "name", str(ctx.api_key)))
    return False


def authorize_cluster(ctx, operation: AclOperation) -> bool:
    return authorize(ctx, operation, CLUSTER, CLUSTER_NAME)


def authorize_by_resource_type(ctx, operation: AclOperation, resource_type: ResourceType) -> bool:
    authorizer = ctx.authorizer
    return authorizer is None or authorizer.authorize_by_resource_type(ctx.principal, ctx.client_host, operation,
                                                                       resource_type)


def authorized_operations(ctx, resource_type: ResourceType, name: str) -> int:
    """The bit set of the resource type's operations the principal may do (all without an authorizer)."""
    authorizer = ctx.authorizer
    if authorizer is None:
        return operation_bits(SUPPORTED_OPERATIONS[resource_type])
    return authorizer.authorized_operations(ctx.principal, ctx.client_host, resource_type, name)


def denied_names(ctx, operation: AclOperation, resource_type: ResourceType, names: Iterable[str],
                 log_denied: bool = True) -> set[str]:
    """The names among ``names`` the principal may not do ``operation`` on (none without an
    authorizer, cheaply: the data path asks on every request)."""
    if ctx.authorizer is None:
        return _NONE
    return {n for n in set(names) if not authorize(ctx, operation, resource_type, n, log_denied)}


_NONE: frozenset = frozenset()
READ, WRITE, CREATE, DELETE, ALTER, DESCRIBE = (AclOperation.READ, AclOperation.WRITE, AclOperation.CREATE,
                                                AclOperation.DELETE, AclOperation.ALTER, AclOperation.DESCRIBE)
DESCRIBE_CONFIGS, ALTER_CONFIGS, IDEMPOTENT_WRITE, CLUSTER_ACTION = (
    AclOperation.DESCRIBE_CONFIGS, AclOperation.ALTER_CONFIGS, AclOperation.IDEMPOTENT_WRITE,
    AclOperation.CLUSTER_ACTION)
