"""RenewDelegationToken (key 39), v1-v2: by the owner or a renewer, at most the renew period ahead."""
from ..protocol.errors import ErrorCode
from .delegation_token_common import requests_allowed
from ..protocol.api_keys import ApiKey
from .registry import registry


@registry.register(ApiKey.RENEW_DELEGATION_TOKEN, 1, 2)
def renew_delegation_token(ctx, req):
    if not requests_allowed(ctx):
        return {"error_code": ErrorCode.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED, "expiry_timestamp_ms": -1}
    code, expiry = ctx.tokens.renew(str(ctx.principal), bytes(req.hmac), req.renew_period_ms)
    return {"error_code": code, "expiry_timestamp_ms": expiry}
