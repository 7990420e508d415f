"""ExpireDelegationToken (key 40), v1-v2: by the owner or a renewer; a negative period expires it at once."""
from ..protocol.errors import ErrorCode
from .delegation_token_common import requests_allowed
from ..protocol.api_keys import ApiKey
from .registry import registry


@registry.register(ApiKey.EXPIRE_DELEGATION_TOKEN, 1, 2)
def expire_delegation_token(ctx, req):
    if not requests_allowed(ctx):
        return {"error_code": ErrorCode.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED, "expiry_timestamp_ms": -1}
    code, expiry = ctx.tokens.expire(str(ctx.principal), bytes(req.hmac), req.expiry_time_period_ms)
    return {"error_code": code, "expiry_timestamp_ms": expiry}
