"""ExpireDelegationToken (key 40), v1-v2: by the owner or a renewer; a negative period expires it at once."""
from .delegation_token_common import new_expiry
from ..protocol.api_keys import ApiKey
from .registry import registry


@registry.register(ApiKey.EXPIRE_DELEGATION_TOKEN, 1, 2)
def expire_delegation_token(ctx, req):
    return new_expiry(ctx, ctx.tokens.expire, req.hmac, req.expiry_time_period_ms)
