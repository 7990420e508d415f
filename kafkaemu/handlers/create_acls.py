"""CreateAcls (key 30), v1-v3, as Kafka's AclApis and AclControlManager: CLUSTER ALTER is
required; each ACL is checked (INVALID_REQUEST with Kafka's message); an existing ACL succeeds
unchanged; more new ACLs than one controller batch takes fail whole (POLICY_VIOLATION)."""
from ..auth.acl import AclOperation
from ..auth.authorizer import TooManyAcls
from ..protocol.errors import ErrorCode
from .acl_common import acl_of, refusal
from ..protocol.api_keys import ApiKey
from .registry import registry


def _all(creations, code: int, message: str) -> dict:
    return {"results": [{"error_code": code, "error_message": message} for _ in creations]}


@registry.register(ApiKey.CREATE_ACLS, 1, 3)
def create_acls(ctx, req):
    acls = [acl_of(creation) for creation in req.creations]
    refused = refusal(ctx, AclOperation.ALTER, "No Authorizer is configured.")
    if refused is not None:
        return _all(acls, *refused)
    try:
        errors = ctx.authorizer.create(acls)
    except TooManyAcls as exc:
        return _all(acls, ErrorCode.POLICY_VIOLATION, str(exc))
    return {"results": [{"error_code": ErrorCode.NONE} if error is None else
                        {"error_code": ErrorCode.INVALID_REQUEST, "error_message": error} for error in errors]}
