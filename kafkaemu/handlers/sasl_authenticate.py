"""SaslAuthenticate (key 36), v0-v2, once no SASL exchange is pending.

Tokens of a pending exchange are handled by kafkaemu.auth.authenticator; here, as in Kafka's
KafkaApis, a SaslAuthenticate on a PLAINTEXT/SSL listener or after authentication completed gets
ILLEGAL_SASL_STATE (no KIP-368 re-authentication)."""
from ..protocol.errors import ErrorCode
from ..protocol.api_keys import ApiKey
from .registry import registry


@registry.register(ApiKey.SASL_AUTHENTICATE, 0, 2)
def sasl_authenticate(ctx, req):
    return {"error_code": ErrorCode.ILLEGAL_SASL_STATE,
            "error_message": "SaslAuthenticate request received after successful authentication",
            "auth_bytes": b""}
