"""The per-connection SASL state machine that runs before any other request, sans-IO.

It follows Kafka's SaslServerAuthenticator:
- Before the handshake only ApiVersions (once, as the first request) and SaslHandshake are
  accepted; any other request closes the connection without a reply (Kafka throws
  InvalidRequestException, "Unexpected Kafka request of type X during SASL handshake").
- SaslHandshake names a mechanism. An enabled one is answered NONE with the enabled list; v1
  moves to SaslAuthenticate requests, v0 to raw SASL tokens framed by a 4-byte size (pre-KIP-152
  clients), answered the same way. Otherwise UNSUPPORTED_SASL_MECHANISM with the enabled list,
  then close.
- SaslAuthenticate carries the tokens. A failed exchange is answered SASL_AUTHENTICATION_FAILED
  with a message, then the connection is closed (raw tokens: closed without a reply). Any other
  request during the exchange closes the connection (Kafka first answers it with
  ILLEGAL_SASL_STATE in that API's error shape; kafkaemu just closes).
- Until authentication completes the connection limits frames to sasl.server.max.receive.size (512 KiB).
Once complete, every request goes to the ordinary handlers; there SaslHandshake and
SaslAuthenticate get ILLEGAL_SASL_STATE as from Kafka's KafkaApis (no re-authentication).
"""
from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Callable

from ..logging import get_logger
from ..protocol import envelope
from ..protocol.api_keys import ApiKey
from ..protocol.errors import ErrorCode
from .credentials import CredentialStore
from .errors import AuthenticationFailed, generic_failure_message



class SaslState(Enum):
    HANDSHAKE_OR_VERSIONS_REQUEST = "handshake_or_versions_request"
    HANDSHAKE_REQUEST = "handshake_request"
    AUTHENTICATE = "authenticate"          # SaslAuthenticate requests (SaslHandshake v1)
    AUTHENTICATE_RAW = "authenticate_raw"  # size-framed raw tokens (SaslHandshake v0)
    COMPLETE = "complete"
    FAILED = "failed"


_NEXT: dict[SaslState, frozenset[SaslState]] = {
    SaslState.HANDSHAKE_OR_VERSIONS_REQUEST: frozenset(
        {SaslState.HANDSHAKE_REQUEST, SaslState.AUTHENTICATE, SaslState.AUTHENTICATE_RAW, SaslState.FAILED}),
    SaslState.HANDSHAKE_REQUEST: frozenset({SaslState.AUTHENTICATE, SaslState.AUTHENTICATE_RAW, SaslState.FAILED}),
    SaslState.AUTHENTICATE: frozenset({SaslState.COMPLETE, SaslState.FAILED}),
    SaslState.AUTHENTICATE_RAW: frozenset({SaslState.COMPLETE, SaslState.FAILED}),
    SaslState.COMPLETE: frozenset(),
    SaslState.FAILED: frozenset(),
}


class IllegalSaslTransition(Exception):
    pass


@dataclass
class AuthStep:
    """What the connection does with one frame received before authentication completed."""

    reply: bytes | None = None       # a whole frame to send now
    dispatch: bool = False           # hand the request to the ordinary handlers (ApiVersions)
    close_reason: str | None = None  # then close the connection


class SaslAuthenticator:
    def __init__(self, credentials: CredentialStore, supports: Callable[[int, int], bool], log=None) -> None:
        """``supports(api_key, version)``: whether kafkaemu implements that API version (the registry's)."""
        self.credentials = credentials
        self._supports = supports
        self.state = SaslState.HANDSHAKE_OR_VERSIONS_REQUEST
        self.mechanism: str | None = None
        self.username: str | None = None
        self._server = None
        self.log = log or get_logger("kafkaemu.auth")

    @property
    def complete(self) -> bool:
        return self.state is SaslState.COMPLETE

    def _move(self, state: SaslState) -> None:
        if state not in _NEXT[self.state]:
            raise IllegalSaslTransition(f"{self.state.value} -> {state.value}")
        self.state = state

    def _fail(self, reason: str, reply: bytes | None = None) -> AuthStep:
        self._move(SaslState.FAILED)
        return AuthStep(reply=reply, close_reason=reason)

    # -- input ---------------------------------------------------------------------------
    def receive(self, data: bytes) -> AuthStep:
        if self.state is SaslState.AUTHENTICATE_RAW:
            return self._raw_token(data)
        if self.state not in (SaslState.HANDSHAKE_OR_VERSIONS_REQUEST, SaslState.HANDSHAKE_REQUEST,
                              SaslState.AUTHENTICATE):
            raise IllegalSaslTransition(f"frame received in state {self.state.value}")
        try:
            api_key, api_version, correlation_id = envelope.peek_request(data)
        except envelope.RequestDecodeError:
            return self._fail(f"request of {len(data)} bytes during SASL authentication")
        if self.state is SaslState.AUTHENTICATE:
            if api_key != ApiKey.SASL_AUTHENTICATE:
                return self._fail(f"Unexpected Kafka request of type {api_key} during SASL authentication.")
            return self._authenticate(data, api_version, correlation_id)
        if api_key == ApiKey.API_VERSIONS:
            if self.state is not SaslState.HANDSHAKE_OR_VERSIONS_REQUEST:
                return self._fail(f"Unexpected ApiVersions request received during SASL authentication "
                                  f"state {self.state.value}")
            if self._supports(ApiKey.API_VERSIONS, api_version):  # else it is answered and may be retried
                self._move(SaslState.HANDSHAKE_REQUEST)
            return AuthStep(dispatch=True)
        if api_key == ApiKey.SASL_HANDSHAKE:
            return self._handshake(data, api_version, correlation_id)
        return self._fail(f"Unexpected Kafka request of type {api_key} during SASL handshake.")

    def _handshake(self, data: bytes, version: int, correlation_id: int) -> AuthStep:
        req = self._decode(data, ApiKey.SASL_HANDSHAKE, version)
        if req is None:
            return self._fail(f"cannot decode SaslHandshake v{version}")
        enabled = list(self.credentials.mechanisms)
        if req.mechanism not in enabled:
            self.log.info("sasl_unsupported_mechanism", mechanism=req.mechanism, enabled=enabled)
            reply = envelope.encode_response(ApiKey.SASL_HANDSHAKE, version, correlation_id,
                           {"error_code": ErrorCode.UNSUPPORTED_SASL_MECHANISM, "mechanisms": enabled})
            return self._fail(f"Unsupported SASL mechanism {req.mechanism}", reply)
        self.mechanism = req.mechanism
        self._server = self.credentials.new_server(req.mechanism)
        self._move(SaslState.AUTHENTICATE if version >= 1 else SaslState.AUTHENTICATE_RAW)
        return AuthStep(reply=envelope.encode_response(ApiKey.SASL_HANDSHAKE, version, correlation_id,
                                     {"error_code": ErrorCode.NONE, "mechanisms": enabled}))

    def _authenticate(self, data: bytes, version: int, correlation_id: int) -> AuthStep:
        req = self._decode(data, ApiKey.SASL_AUTHENTICATE, version)
        if req is None:
            return self._fail(f"cannot decode SaslAuthenticate v{version}")
        try:
            token = self._server.evaluate(req.auth_bytes or b"")
        except AuthenticationFailed as exc:
            message = exc.client_message or generic_failure_message(self.mechanism)
            self._log_failure(exc)
            reply = envelope.encode_response(ApiKey.SASL_AUTHENTICATE, version, correlation_id,
                           {"error_code": ErrorCode.SASL_AUTHENTICATION_FAILED, "error_message": message})
            return self._fail(message, reply)
        self._after_token()
        return AuthStep(reply=envelope.encode_response(ApiKey.SASL_AUTHENTICATE, version, correlation_id,
                                     {"error_code": ErrorCode.NONE, "auth_bytes": token, "session_lifetime_ms": 0}))

    def _raw_token(self, data: bytes) -> AuthStep:
        try:
            token = self._server.evaluate(data)
        except AuthenticationFailed as exc:
            self._log_failure(exc)
            return self._fail(exc.client_message or generic_failure_message(self.mechanism))
        self._after_token()
        return AuthStep(reply=envelope.frame(token))

    def _after_token(self) -> None:
        if self._server.complete:
            self.username = self._server.username
            self._move(SaslState.COMPLETE)
            self.log.info("sasl_authenticated", user=self.username, mechanism=self.mechanism)

    @property
    def principal(self) -> str:
        """The authenticated principal: the SASL user, or a delegation token's owner."""
        return getattr(self._server, "principal", None) or f"User:{self.username}"

    def _decode(self, data: bytes, api_key: int, version: int):
        if not self._supports(api_key, version):
            return None
        try:
            return envelope.decode_request(data)[1]
        except envelope.RequestDecodeError:
            return None

    def _log_failure(self, exc: AuthenticationFailed) -> None:
        self.log.info("sasl_authentication_failed", user=getattr(self._server, "username", None),
                      mechanism=self.mechanism, detail=exc.detail)
