"""SASL/PLAIN server side (RFC 4616): one message ``[authzid] NUL authcid NUL passwd``.

Answers as Kafka's PlainSaslServer: an empty reply on success; a missing user name or password,
or a malformed message, fails with the generic message; a wrong password or unknown user with
"Invalid username or password"."""
from __future__ import annotations

import hmac
from typing import Mapping

from .errors import AuthenticationFailed


class PlainServer:
    mechanism = "PLAIN"

    def __init__(self, passwords: Mapping[str, str]) -> None:
        self._passwords = passwords
        self.complete = False
        self.username: str | None = None

    def evaluate(self, token: bytes) -> bytes:
        if self.complete:
            raise AuthenticationFailed("PLAIN exchange already complete")
        try:
            text = token.decode("utf-8")
        except UnicodeDecodeError:
            raise AuthenticationFailed("PLAIN message is not UTF-8") from None
        parts = text.split("\x00", 2)
        if len(parts) != 3:
            raise AuthenticationFailed(f"Invalid SASL/PLAIN response: expected 3 tokens, got {len(parts)}")
        authzid, username, password = parts
        if not username:
            raise AuthenticationFailed("Authentication failed: username not specified")
        if not password:
            raise AuthenticationFailed("Authentication failed: password not specified")
        self.username = username  # for the log; only trusted once ``complete``
        expected = self._passwords.get(username)
        if expected is None or not hmac.compare_digest(expected.encode(), password.encode()):
            raise AuthenticationFailed(f"invalid password for user {username!r}",
                                       "Authentication failed: Invalid username or password")
        if authzid and authzid != username:
            raise AuthenticationFailed(
                "authorization id differs from user name",
                "Authentication failed: Client requested an authorization id that is different from username")
        self.complete = True
        return b""
