"""Delegation tokens, as Kafka's DelegationTokenControlManager and DelegationTokenManager.

A token is an id (a random UUID) and its HMAC-SHA512 under ``delegation.token.secret.key``; it
belongs to an owner, may be renewed by the owner and its renewers, expires at ``expiry`` (moved by
renewals, at most ``delegation.token.expiry.time.ms`` ahead) and cannot outlive ``max``. A client
authenticates with SCRAM as the token id with the base64 HMAC as password and the ``tokenauth=true``
extension; the connection's principal is then the owner, marked token-authenticated (such a
connection may not create, renew, expire or describe tokens). Tokens without a secret key are
off (DELEGATION_TOKEN_AUTH_DISABLED)."""
from __future__ import annotations

import base64
import hashlib
import hmac as hmac_lib
import uuid
from dataclasses import dataclass, field
from typing import Callable

from ..protocol.errors import ErrorCode
from .scram import HASHES, MIN_ITERATIONS, ScramCredential, make_credential


def split_principal(principal: str) -> tuple[str, str]:
    kind, _, name = principal.partition(":")
    return kind, name


@dataclass
class Token:
    token_id: str
    hmac: bytes
    owner: str
    requester: str
    renewers: list[str]
    issued: int
    expiry: int
    max: int
    credentials: dict[str, ScramCredential] = field(default_factory=dict, repr=False)

    def owner_or_renewer(self, principal: str) -> bool:
        return principal == self.owner or principal in self.renewers

    def to_json(self) -> dict:
        return {"token_id": self.token_id, "hmac": base64.b64encode(self.hmac).decode(), "owner": self.owner,
                "requester": self.requester, "renewers": self.renewers, "issued": self.issued, "expiry": self.expiry,
                "max": self.max}


class DelegationTokens:
    def __init__(self, secret_key: str | None, max_lifetime_ms: int, renew_lifetime_ms: int,
                 now_ms: Callable[[], int]) -> None:
        self.secret_key = secret_key or None
        self.max_lifetime_ms = max_lifetime_ms
        self.renew_lifetime_ms = renew_lifetime_ms
        self.now_ms = now_ms
        self.tokens: dict[str, Token] = {}
        self.on_change: Callable[[], None] | None = None

    @property
    def enabled(self) -> bool:
        return self.secret_key is not None

    def _hmac(self, token_id: str) -> bytes:
        return hmac_lib.new(self.secret_key.encode(), token_id.encode(), hashlib.sha512).digest()

    def _by_hmac(self, mac: bytes) -> Token | None:
        return next((t for t in self.tokens.values() if hmac_lib.compare_digest(t.hmac, bytes(mac))), None)

    def _add(self, token: Token) -> None:
        password = base64.b64encode(token.hmac).decode()
        token.credentials = {m: make_credential(password, m, iterations=MIN_ITERATIONS) for m in HASHES}
        self.tokens[token.token_id] = token

    def _changed(self) -> None:
        if self.on_change is not None:
            self.on_change()

    # -- the APIs ------------------------------------------------------------------------------
    def create(self, owner: str, requester: str, renewers: list[str], max_lifetime_ms: int) -> tuple[int, Token | None]:
        if not self.enabled:
            return ErrorCode.DELEGATION_TOKEN_AUTH_DISABLED, None
        if any(split_principal(r)[0] != "User" for r in renewers):
            return ErrorCode.INVALID_PRINCIPAL_TYPE, None
        now = self.now_ms()
        lifetime = min(self.max_lifetime_ms, max_lifetime_ms) if max_lifetime_ms > 0 else self.max_lifetime_ms
        max_ts = now + lifetime
        token_id = str(uuid.uuid4())
        token = Token(token_id, self._hmac(token_id), owner, requester, list(renewers), now,
                      min(max_ts, now + self.renew_lifetime_ms), max_ts)
        self._add(token)
        self._changed()
        return ErrorCode.NONE, token

    def renew(self, principal: str, mac: bytes, renew_period_ms: int) -> tuple[int, int]:
        if not self.enabled:
            return ErrorCode.DELEGATION_TOKEN_AUTH_DISABLED, -1
        token, now = self._by_hmac(mac), self.now_ms()
        if token is None:
            return ErrorCode.DELEGATION_TOKEN_NOT_FOUND, -1
        if token.max < now or token.expiry < now:
            return ErrorCode.DELEGATION_TOKEN_EXPIRED, -1
        if not token.owner_or_renewer(principal):
            return ErrorCode.DELEGATION_TOKEN_OWNER_MISMATCH, -1
        period = min(self.renew_lifetime_ms, renew_period_ms) if renew_period_ms > 0 else self.renew_lifetime_ms
        token.expiry = min(token.max, now + period)
        self._changed()
        return ErrorCode.NONE, token.expiry

    def expire(self, principal: str, mac: bytes, expiry_period_ms: int) -> tuple[int, int]:
        if not self.enabled:
            return ErrorCode.DELEGATION_TOKEN_AUTH_DISABLED, -1
        token, now = self._by_hmac(mac), self.now_ms()
        if token is None:
            return ErrorCode.DELEGATION_TOKEN_NOT_FOUND, -1
        if not token.owner_or_renewer(principal):
            return ErrorCode.DELEGATION_TOKEN_OWNER_MISMATCH, -1
        if expiry_period_ms < 0:   # at once
            del self.tokens[token.token_id]
            self._changed()
            return ErrorCode.NONE, now
        if token.max < now or token.expiry < now:
            return ErrorCode.DELEGATION_TOKEN_EXPIRED, -1
        token.expiry = min(token.max, now + expiry_period_ms)
        self._changed()
        return ErrorCode.NONE, token.expiry

    def visible(self, requester: str, owners: list[str] | None, may_describe: Callable[[Token], bool]) -> list[Token]:
        """DelegationTokenManager.filterToken: tokens of the owners asked for (all: None) that the
        requester owns or renews, or may describe (``may_describe``: the ACL checks)."""
        out = []
        for token in self.tokens.values():
            if owners is not None and not any(token.owner_or_renewer(o) for o in owners):
                continue
            if token.owner_or_renewer(requester) or may_describe(token):
                out.append(token)
        return out

    # -- SCRAM with a token ---------------------------------------------------------------------
    def scram_credential(self, token_id: str, mechanism: str) -> tuple[ScramCredential, str] | None:
        """(credential, owner) of a live token, or None (unknown or expired)."""
        token = self.tokens.get(token_id)
        if token is None or token.expiry < self.now_ms():
            return None
        return token.credentials[mechanism], token.owner

    # -- the data directory ---------------------------------------------------------------------
    def to_json(self) -> list[dict]:
        return [t.to_json() for t in self.tokens.values()]

    def replace_json(self, data: list[dict]) -> None:
        """Every token swapped for ``data``'s (a snapshot restored, a reset)."""
        self.tokens.clear()
        self.load_json(data)
        self._changed()

    def load_json(self, data: list[dict]) -> None:
        for item in data:
            self._add(Token(item["token_id"], base64.b64decode(item["hmac"]), item["owner"], item["requester"],
                            list(item["renewers"]), int(item["issued"]), int(item["expiry"]), int(item["max"])))
