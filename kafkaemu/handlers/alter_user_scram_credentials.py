"""AlterUserScramCredentials (key 51), v0: add, replace or delete users' SCRAM credentials (the
client sends the salted password), as Kafka's ScramControlManager: CLUSTER ALTER is required; a
user altered twice is DUPLICATE_RESOURCE, an empty name or too few/many iterations
UNACCEPTABLE_CREDENTIAL, an unknown mechanism UNSUPPORTED_SASL_MECHANISM, deleting a credential
that does not exist RESOURCE_NOT_FOUND. The next authentication sees the change."""
from ..auth import scram_admin
from ..protocol.errors import DEFAULT_MESSAGES, ErrorCode
from .authorization import ALTER, authorize_cluster
from ..protocol.api_keys import ApiKey
from .registry import registry


@registry.register(ApiKey.ALTER_USER_SCRAM_CREDENTIALS, 0, 0)
def alter_user_scram_credentials(ctx, req):
    if not authorize_cluster(ctx, ALTER):
        users = dict.fromkeys([d.name for d in req.deletions] + [u.name for u in req.upsertions])
        denied = ErrorCode.CLUSTER_AUTHORIZATION_FAILED
        return {"results": [{"user": user, "error_code": denied, "error_message": DEFAULT_MESSAGES[denied]}
                            for user in users]}
    return {"results": scram_admin.alter(
        ctx.credentials, [(d.name, d.mechanism) for d in req.deletions],
        [(u.name, u.mechanism, u.iterations, bytes(u.salt), bytes(u.salted_password)) for u in req.upsertions])}
