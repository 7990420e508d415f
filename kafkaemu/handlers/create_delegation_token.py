"""CreateDelegationToken (key 38), v1-v3: a token for the requester or, with CREATE_TOKENS on that
user, for another owner (delegation_token_common.py has Kafka's rules)."""
from ..auth.acl import AclOperation, ResourceType
from ..auth.tokens import split_principal
from ..protocol.errors import ErrorCode
from .authorization import authorize
from .delegation_token_common import create_response, requests_allowed
from ..protocol.api_keys import ApiKey
from .registry import registry


@registry.register(ApiKey.CREATE_DELEGATION_TOKEN, 1, 3)
def create_delegation_token(ctx, req):
    requester = str(ctx.principal)
    owner = f"{req.owner_principal_type}:{req.owner_principal_name}" if req.owner_principal_name else requester
    renewers = [f"{r.principal_type}:{r.principal_name}" for r in req.renewers]
    if not requests_allowed(ctx):
        return create_response(ErrorCode.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED, owner, requester)
    if owner != requester and not authorize(ctx, AclOperation.CREATE_TOKENS, ResourceType.USER, owner):
        return create_response(ErrorCode.DELEGATION_TOKEN_AUTHORIZATION_FAILED, owner, requester)
    if any(split_principal(r)[0] != "User" for r in renewers):
        return create_response(ErrorCode.INVALID_PRINCIPAL_TYPE, owner, requester)
    code, token = ctx.tokens.create(owner, requester, renewers, req.max_lifetime_ms)
    return create_response(code, owner, requester, token)
