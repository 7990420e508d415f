"""DeleteAcls (key 31), v1-v3, as Kafka's AclApis and AclControlManager: CLUSTER ALTER is
required; each filter removes every ACL it matches and lists them."""
from ..auth.acl import AclOperation
from ..protocol.errors import ErrorCode
from .acl_common import acl_fields, filter_of, refusal
from ..protocol.api_keys import ApiKey
from .registry import registry


def _all(filters, code: int, message: str) -> dict:
    return {"filter_results": [{"error_code": code, "error_message": message, "matching_acls": []}
                               for _ in filters]}


@registry.register(ApiKey.DELETE_ACLS, 1, 3)
def delete_acls(ctx, req):
    filters = [filter_of(f) for f in req.filters]
    refused = refusal(ctx, AclOperation.ALTER, "No Authorizer is configured.")
    if refused is not None:
        return _all(filters, *refused)
    results = []
    for result in ctx.authorizer.delete(filters):
        if isinstance(result, str):
            results.append({"error_code": ErrorCode.INVALID_REQUEST, "error_message": result, "matching_acls": []})
        else:
            results.append({"error_code": ErrorCode.NONE, "matching_acls": [
                {"error_code": ErrorCode.NONE, **acl_fields(acl)} for acl in result]})
    return {"filter_results": results}
