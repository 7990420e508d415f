"""How a SASL exchange fails, split the way Kafka splits it.

Kafka's SaslServerAuthenticator sends the message of a ``SaslAuthenticationException`` to the
client as is, but replaces any other ``SaslException`` by a generic message so that details
(such as whether a user exists) do not leak. ``client_message=None`` is the second kind."""
from __future__ import annotations


class AuthenticationFailed(Exception):
    def __init__(self, detail: str, client_message: str | None = None) -> None:
        super().__init__(detail)
        self.detail = detail
        self.client_message = client_message


def generic_failure_message(mechanism: str) -> str:
    return f"Authentication failed during authentication due to invalid credentials with SASL mechanism {mechanism}"
