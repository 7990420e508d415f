"""DescribeDelegationToken (key 41), v1-v3: the tokens of the owners asked for that the requester owns,
renews, or may describe (DESCRIBE on the token, DESCRIBE_TOKENS on its owner)."""
from ..auth.acl import AclOperation, ResourceType
from ..auth.tokens import split_principal
from ..protocol.errors import ErrorCode
from .authorization import DESCRIBE, authorize
from .delegation_token_common import requests_allowed
from ..protocol.api_keys import ApiKey
from .registry import registry


@registry.register(ApiKey.DESCRIBE_DELEGATION_TOKEN, 1, 3)
def describe_delegation_token(ctx, req):
    if not requests_allowed(ctx):
        return {"error_code": ErrorCode.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED, "tokens": []}
    if not ctx.tokens.enabled:
        return {"error_code": ErrorCode.DELEGATION_TOKEN_AUTH_DISABLED, "tokens": []}
    if req.owners is not None and not req.owners:
        return {"error_code": ErrorCode.NONE, "tokens": []}
    owners = None if req.owners is None else [f"{o.principal_type}:{o.principal_name}" for o in req.owners]

    def may_describe(token) -> bool:
        return authorize(ctx, DESCRIBE, ResourceType.DELEGATION_TOKEN, token.token_id, log_denied=False) or \
            authorize(ctx, AclOperation.DESCRIBE_TOKENS, ResourceType.USER, token.owner, log_denied=False)

    tokens = ctx.tokens.visible(str(ctx.principal), owners, may_describe)
    return {"error_code": ErrorCode.NONE, "tokens": [{
        "principal_type": split_principal(t.owner)[0], "principal_name": split_principal(t.owner)[1],
        "token_requester_principal_type": split_principal(t.requester)[0],
        "token_requester_principal_name": split_principal(t.requester)[1],
        "issue_timestamp": t.issued, "expiry_timestamp": t.expiry, "max_timestamp": t.max, "token_id": t.token_id,
        "hmac": t.hmac, "renewers": [{"principal_type": split_principal(r)[0], "principal_name": split_principal(r)[1]}
                                     for r in t.renewers]} for t in tokens]}
