"""SaslHandshake (key 17), v0-v1, once no SASL exchange is pending.

On a SASL listener the handshake is answered by kafkaemu.auth.authenticator before the client
authenticates; a request reaching this handler comes from a PLAINTEXT/SSL listener or from an
already authenticated connection. Kafka's KafkaApis answers both with ILLEGAL_SASL_STATE and an
empty mechanism list (kafkaemu does not implement KIP-368 re-authentication)."""
from ..protocol.errors import ErrorCode
from ..protocol.api_keys import ApiKey
from .registry import registry


@registry.register(ApiKey.SASL_HANDSHAKE, 0, 1)
def sasl_handshake(ctx, req):
    return {"error_code": ErrorCode.ILLEGAL_SASL_STATE, "mechanisms": []}
