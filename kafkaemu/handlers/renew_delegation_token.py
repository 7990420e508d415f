"""RenewDelegationToken (key 39), v1-v2: by the owner or a renewer, at most the renew period ahead."""
from .delegation_token_common import new_expiry
from ..protocol.api_keys import ApiKey
from .registry import registry


@registry.register(ApiKey.RENEW_DELEGATION_TOKEN, 1, 2)
def renew_delegation_token(ctx, req):
    return new_expiry(ctx, ctx.tokens.renew, req.hmac, req.renew_period_ms)
