"""DescribeAcls (key 29), v1-v3: the ACLs a filter matches, grouped by resource pattern, as
Kafka's AclApis: CLUSTER DESCRIBE is required; SECURITY_DISABLED while authorization is off."""
from ..auth.acl import AclOperation
from ..protocol.errors import ErrorCode
from .acl_common import filter_of, refusal
from ..protocol.api_keys import ApiKey
from .registry import registry


@registry.register(ApiKey.DESCRIBE_ACLS, 1, 3)
def describe_acls(ctx, req):
    acl_filter = filter_of(req)
    refused = refusal(ctx, AclOperation.DESCRIBE, "No Authorizer is configured on the broker")
    if refused is not None:
        return {"error_code": refused[0], "error_message": refused[1], "resources": []}
    resources: dict[tuple, list] = {}
    for acl in ctx.authorizer.describe(acl_filter):
        resources.setdefault((acl.resource_type, acl.resource_name, acl.pattern_type), []).append(
            {"principal": acl.principal, "host": acl.host, "operation": acl.operation,
             "permission_type": acl.permission_type})
    return {"error_code": ErrorCode.NONE, "resources": [
        {"resource_type": rt, "resource_name": name, "pattern_type": pt, "acls": acls}
        for (rt, name, pt), acls in resources.items()]}
