"""What the delegation token APIs (38-41) share. As Kafka's KafkaApis and
DelegationTokenControlManager: none of them over PLAINTEXT, one-way SSL or a token-authenticated
connection (DELEGATION_TOKEN_REQUEST_NOT_ALLOWED); a token for another owner needs CREATE_TOKENS on
that user (DELEGATION_TOKEN_AUTHORIZATION_FAILED); renewers must be users (INVALID_PRINCIPAL_TYPE);
only the owner and renewers renew or expire (DELEGATION_TOKEN_OWNER_MISMATCH)."""
from ..auth.tokens import split_principal
from ..protocol.errors import ErrorCode

ANONYMOUS = "User:ANONYMOUS"


def requests_allowed(ctx) -> bool:
    """KafkaApis.allowTokenRequests."""
    protocol = ctx.config.security_protocol
    return not (getattr(ctx.principal, "token_authenticated", False) or protocol == "PLAINTEXT"
                or (protocol == "SSL" and ctx.principal == ANONYMOUS))


def create_response(code, owner: str, requester: str, token=None) -> dict:
    owner_type, owner_name = split_principal(owner)
    requester_type, requester_name = split_principal(requester)
    out = {"error_code": code, "principal_type": owner_type, "principal_name": owner_name,
           "token_requester_principal_type": requester_type, "token_requester_principal_name": requester_name,
           "issue_timestamp_ms": -1, "expiry_timestamp_ms": -1, "max_timestamp_ms": -1, "token_id": "",
           "hmac": b"", "throttle_time_ms": 0}
    if token is not None:
        out.update(issue_timestamp_ms=token.issued, expiry_timestamp_ms=token.expiry, max_timestamp_ms=token.max,
                   token_id=token.token_id, hmac=token.hmac)
    return out


def new_expiry(ctx, change, hmac: bytes, period_ms: int) -> dict:
    """Renew and Expire: ``change(owner or renewer, hmac, period_ms)`` gives (error, new expiry)."""
    if not requests_allowed(ctx):
        return {"error_code": ErrorCode.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED, "expiry_timestamp_ms": -1}
    code, expiry = change(str(ctx.principal), bytes(hmac), period_ms)
    return {"error_code": code, "expiry_timestamp_ms": expiry}
