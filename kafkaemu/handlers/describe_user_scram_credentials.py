"""DescribeUserScramCredentials (key 50), v0: the SCRAM mechanisms and iterations of each user
(all users when none are named), as Kafka: CLUSTER DESCRIBE is required; a user named twice is
DUPLICATE_RESOURCE, one without credentials RESOURCE_NOT_FOUND."""
from ..auth import scram_admin
from ..protocol.errors import ErrorCode
from .authorization import DESCRIBE, authorize_cluster
from ..protocol.api_keys import ApiKey
from .registry import registry


@registry.register(ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS, 0, 0)
def describe_user_scram_credentials(ctx, req):
    if not authorize_cluster(ctx, DESCRIBE):
        # DescribeUserScramCredentialsRequest.getErrorResponse: one result (no user name) per user asked for
        return {"error_code": ErrorCode.CLUSTER_AUTHORIZATION_FAILED, "error_message": None, "results": [
            {"user": "", "error_code": ErrorCode.CLUSTER_AUTHORIZATION_FAILED, "error_message": None,
             "credential_infos": []} for _ in req.users or []]}
    users = None if req.users is None else [u.name for u in req.users]
    return {"error_code": ErrorCode.NONE, "error_message": "",
            "results": scram_admin.describe(ctx.credentials, users)}
