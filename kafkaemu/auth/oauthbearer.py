"""SASL/OAUTHBEARER server side (RFC 7628) with Kafka's unsecured-token validator, what a Kafka
broker uses when no validator class is configured (``OAuthBearerUnsecuredValidatorCallbackHandler``,
meant for development).

The client's one message is ``n,[a=authzid],^Aauth=Bearer <token>^A[key=value^A...]^A``. The token is
an unsecured JWS, ``base64url(header).base64url(claims).`` with header ``alg`` ``none``, no
signature, a numeric ``exp`` in the future, an optional numeric ``iat`` not in the future and not
after ``exp``, and the principal in the ``sub`` claim. A token that fails is answered with
``{"status":"invalid_token"}`` (not yet a failure: the client answers ^A, then the exchange fails
with that message, as Kafka's OAuthBearerSaslServer does); a malformed message fails at once."""
from __future__ import annotations

import base64
import json
import re
import time
from typing import Callable

from .errors import AuthenticationFailed

_SASLNAME = r"(?:[\x01-\x2B\x2D-\x3C\x3E-\x7F]|=2C|=3D)+"
_KVPAIRS = r"(?:[A-Za-z]+=[\x21-\x7E \t\r\n]+\x01)*"
_INITIAL = re.compile(rf"n,(?:a=(?P<authzid>{_SASLNAME}))?,\x01(?P<kvpairs>{_KVPAIRS})\x01", re.S)
_AUTH = re.compile(r"(?P<scheme>\w+) +(?P<token>[-_~+/.a-zA-Z0-9]+=*)")
INVALID_TOKEN = '{"status":"invalid_token"}'


class InvalidToken(Exception):
    pass


def _json_part(part: str) -> dict:
    try:
        data = json.loads(base64.urlsafe_b64decode(part.replace("+", "-").replace("/", "_") + "=" * (-len(part) % 4)))
    except (ValueError, UnicodeDecodeError):
        raise InvalidToken("malformed Base64 URL encoded value or JSON") from None
    if not isinstance(data, dict):
        raise InvalidToken("malformed JSON")
    return data


def validate_unsecured_token(token: str, now_ms: int, principal_claim: str = "sub") -> tuple[str, float]:
    """(principal name, expiration in seconds) of a valid unsecured JWS; InvalidToken otherwise."""
    if ".." in token:
        raise InvalidToken("Malformed compact serialization contains '..'")
    parts = token.split(".")
    if len(parts) != 3:
        raise InvalidToken("Unsecured JWS compact serializations must have 3 dot-separated Base64URL-encoded values")
    header, claims = _json_part(parts[0]), _json_part(parts[1])
    if header.get("alg") != "none":
        raise InvalidToken("Unsecured JWS must have 'none' for an algorithm")
    if parts[2]:
        raise InvalidToken("Unsecured JWS must not contain a digital signature")
    exp, iat = claims.get("exp"), claims.get("iat")
    if not isinstance(exp, (int, float)) or isinstance(exp, bool):
        raise InvalidToken("No expiration time in JWT")
    principal = claims.get(principal_claim)
    if not isinstance(principal, str) or not principal.strip():
        raise InvalidToken(f"No principal name in JWT claim: {principal_claim}")
    if iat is not None and (not isinstance(iat, (int, float)) or isinstance(iat, bool)):
        raise InvalidToken("The iat claim had the incorrect type")
    if iat is not None and 1000 * iat > now_ms:
        raise InvalidToken("The Issued At value was after the indicated time")
    if now_ms >= 1000 * exp:
        raise InvalidToken("The indicated time was on or after the Expiration Time value")
    if iat is not None and iat > exp:
        raise InvalidToken("The Issued At value is after the Expiration Time value")
    return principal, exp


class OAuthBearerServer:
    mechanism = "OAUTHBEARER"

    def __init__(self, now_ms: Callable[[], int] = lambda: int(time.time() * 1000)) -> None:
        self._now_ms = now_ms
        self._error: str | None = None
        self.complete = False
        self.username: str | None = None

    def evaluate(self, response: bytes) -> bytes:
        if response == b"\x01" and self._error is not None:
            raise AuthenticationFailed(f"invalid OAUTHBEARER token: {self._error}", INVALID_TOKEN)
        self._error = None
        try:
            text = response.decode("utf-8")
        except UnicodeDecodeError:
            raise AuthenticationFailed("Invalid OAUTHBEARER client first message") from None
        match = _INITIAL.fullmatch(text)
        if match is None:
            raise AuthenticationFailed("Invalid OAUTHBEARER client first message")
        pairs = dict(item.split("=", 1) for item in match["kvpairs"].split("\x01") if item)
        auth = pairs.get("auth")
        if auth is None:
            raise AuthenticationFailed("Invalid OAUTHBEARER client first message: 'auth' not specified")
        auth_match = _AUTH.fullmatch(auth)
        if auth_match is None:
            raise AuthenticationFailed("Invalid OAUTHBEARER client first message: invalid 'auth' format")
        if auth_match["scheme"].lower() != "bearer":
            raise AuthenticationFailed(f"Invalid scheme in OAUTHBEARER client first message: {auth_match['scheme']}")
        try:
            principal, _ = validate_unsecured_token(auth_match["token"], self._now_ms())
        except InvalidToken as exc:
            self._error = str(exc)
            return INVALID_TOKEN.encode()
        authzid = match["authzid"]
        if authzid and authzid != principal:
            raise AuthenticationFailed(
                "authorization id differs from the token's principal",
                f"Authentication failed: Client requested an authorization id ({authzid}) that is different from "
                f"the token's principal name ({principal})")
        self.username = principal
        self.complete = True
        return b""
