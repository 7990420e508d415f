"""What the three ACL APIs share: requests' codes to ACLs and filters, and Kafka's rules on them.

As Kafka's request classes (``CreateAclsRequest``, ``DescribeAclsRequest``, ``DeleteAclsRequest``)
parse them: an UNKNOWN resource type, pattern type, operation or permission type (a code Kafka
does not know reads as UNKNOWN) makes the request unparseable, so the connection is closed."""
from __future__ import annotations

from ..auth.acl import Acl, AclFilter, AclOperation, AclPermissionType, PatternType, ResourceType, from_code
from ..protocol.envelope import RequestDecodeError
from ..protocol.errors import ErrorCode
from .authorization import authorize_cluster


def refusal(ctx, operation: AclOperation, disabled_message: str) -> tuple[ErrorCode, str] | None:
    """(error, message) the whole request fails with, as AclApis: CLUSTER ``operation`` is required,
    then an authorizer (SECURITY_DISABLED, with Kafka's message of that API); None to go on."""
    if not authorize_cluster(ctx, operation):
        return ErrorCode.CLUSTER_AUTHORIZATION_FAILED, "Cluster authorization failed."
    if ctx.authorizer is None:
        return ErrorCode.SECURITY_DISABLED, disabled_message
    return None


def _codes(resource_type, pattern_type, operation, permission_type):
    codes = (from_code(ResourceType, resource_type), from_code(PatternType, pattern_type),
             from_code(AclOperation, operation), from_code(AclPermissionType, permission_type))
    if 0 in codes:  # UNKNOWN
        raise RequestDecodeError(f"ACL request contains UNKNOWN elements: resource type {resource_type}, "
                                 f"pattern type {pattern_type}, operation {operation}, permission {permission_type}")
    return codes


def acl_of(creation) -> Acl:
    rt, pt, op, perm = _codes(creation.resource_type, creation.resource_pattern_type, creation.operation,
                              creation.permission_type)
    return Acl(rt, creation.resource_name, pt, creation.principal, creation.host, op, perm)


def filter_of(f) -> AclFilter:
    rt, pt, op, perm = _codes(f.resource_type_filter, f.pattern_type_filter, f.operation, f.permission_type)
    return AclFilter(rt, f.resource_name_filter, pt, f.principal_filter, f.host_filter, op, perm)


def acl_fields(acl: Acl) -> dict:
    return {"resource_type": acl.resource_type, "resource_name": acl.resource_name,
            "pattern_type": acl.pattern_type, "principal": acl.principal, "host": acl.host,
            "operation": acl.operation, "permission_type": acl.permission_type}
