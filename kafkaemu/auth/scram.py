"""SCRAM-SHA-256 / SCRAM-SHA-512 server side (RFC 5802, RFC 7677), as Kafka's ScramSaslServer.

The exchange is two client messages:
  client-first  ``n,[a=authzid],n=user,r=cnonce[,ext]``  -> ``r=cnonce+snonce,s=salt,i=iterations``
  client-final  ``c=biws,r=nonce[,ext],p=proof``          -> ``v=server-signature``
The server keeps only StoredKey = H(HMAC(SaltedPassword, "Client Key")) and
ServerKey = HMAC(SaltedPassword, "Server Key"); it checks that H(proof XOR ClientSignature)
equals StoredKey. Like Kafka: only gs2 header "n" (no channel binding), the password is used
without SASLprep, extensions are ignored, an unknown user fails at the first message, and a
bad proof gets the generic failure message.
"""
from __future__ import annotations

import base64
import hashlib
import hmac
import re
import secrets
from dataclasses import dataclass
from typing import Callable, Mapping

from .errors import AuthenticationFailed
from .principal import TokenPrincipal

HASHES = {"SCRAM-SHA-256": "sha256", "SCRAM-SHA-512": "sha512"}
MIN_ITERATIONS = 4096  # Kafka's minimum for both mechanisms (and its default)

# Kafka's ScramMessages grammar (ASCII only, as there).
_SASLNAME = r"(?:[\x01-\x2B\x2D-\x3C\x3E-\x7F]|=2C|=3D)+"
_VALUE = r"[\x01-\x2B\x2D-\x7F]+"
_PRINTABLE = r"[\x21-\x2B\x2D-\x7E]+"
_BASE64 = r"(?:[a-zA-Z0-9/+]{4})*(?:[a-zA-Z0-9/+]{3}=|[a-zA-Z0-9/+]{2}==)?"
_EXTENSIONS = rf"(?:,[a-zA-Z]+={_VALUE})*"
_CLIENT_FIRST = re.compile(
    rf"n,(?:a=(?P<authzid>{_SASLNAME}))?,(?P<bare>(?:m={_VALUE},)?n=(?P<saslname>{_SASLNAME}),"
    rf"r=(?P<nonce>{_PRINTABLE}){_EXTENSIONS})")
_TOKENAUTH = re.compile(r",tokenauth=true(?:,|$)", re.I)
_CLIENT_FINAL = re.compile(
    rf"(?P<without_proof>c=(?P<channel>{_BASE64}),r=(?P<nonce>{_PRINTABLE}){_EXTENSIONS}),p=(?P<proof>{_BASE64})")


@dataclass(frozen=True)
class ScramCredential:
    salt: bytes
    iterations: int
    stored_key: bytes
    server_key: bytes


def _hmac(key: bytes, msg: bytes, hash_name: str) -> bytes:
    return hmac.new(key, msg, hash_name).digest()


def salted_password(password: str, salt: bytes, iterations: int, hash_name: str) -> bytes:
    return hashlib.pbkdf2_hmac(hash_name, password.encode("utf-8"), salt, iterations)


def make_credential(password: str, mechanism: str, *, salt: bytes | None = None,
                    iterations: int = MIN_ITERATIONS) -> ScramCredential:
    hash_name = HASHES[mechanism]
    salt = salt if salt is not None else secrets.token_bytes(32)
    salted = salted_password(password, salt, iterations, hash_name)
    client_key = _hmac(salted, b"Client Key", hash_name)
    return ScramCredential(salt, iterations, hashlib.new(hash_name, client_key).digest(),
                           _hmac(salted, b"Server Key", hash_name))


def _username(saslname: str) -> str:
    return saslname.replace("=2C", ",").replace("=3D", "=")


def _new_nonce() -> str:
    return secrets.token_urlsafe(24)


class ScramServer:
    def __init__(self, mechanism: str, credentials: Mapping[str, ScramCredential],
                 nonce: Callable[[], str] = _new_nonce, tokens=None) -> None:
        self.mechanism = mechanism
        self._tokens = tokens   # DelegationTokens, for clients authenticating with a token (tokenauth=true)
        self.principal: str | None = None   # set for a token: its owner
        self._hash = HASHES[mechanism]
        self._credentials = credentials
        self._nonce = nonce
        self._step = "client-first"
        self._credential: ScramCredential | None = None
        self._auth_prefix = b""
        self._server_nonce = ""
        self.complete = False
        self.username: str | None = None

    def evaluate(self, token: bytes) -> bytes:
        try:
            message = token.decode("utf-8")
        except UnicodeDecodeError:
            raise AuthenticationFailed("SCRAM message is not UTF-8") from None
        if self._step == "client-first":
            return self._client_first(message)
        if self._step == "client-final":
            return self._client_final(message)
        raise AuthenticationFailed(f"unexpected SCRAM message in step {self._step}")

    def _client_first(self, message: str) -> bytes:
        self._step = "failed"
        match = _CLIENT_FIRST.fullmatch(message)
        if match is None:
            raise AuthenticationFailed(f"Invalid SCRAM client first message format: {message}")
        username = self.username = _username(match["saslname"])  # for the log; trusted once ``complete``
        if _TOKENAUTH.search(match["bare"]):
            found = self._tokens.scram_credential(username, self.mechanism) if self._tokens is not None else None
            if found is None:
                raise AuthenticationFailed(f"Token Authentication failed: Invalid tokenId : {username}")
            credential, owner = found
            self.principal = TokenPrincipal(owner)
        else:
            credential = self._credentials.get(username)
        if credential is None:
            raise AuthenticationFailed(f"unknown user {username!r}")
        if match["authzid"] and match["authzid"] != username:
            raise AuthenticationFailed(
                "authorization id differs from user name",
                "Authentication failed: Client requested an authorization id that is different from username")
        nonce = match["nonce"] + self._nonce()
        server_first = f"r={nonce},s={base64.b64encode(credential.salt).decode()},i={credential.iterations}"
        self._credential, self._server_nonce = credential, nonce
        self._auth_prefix = f"{match['bare']},{server_first},".encode()
        self._step = "client-final"
        return server_first.encode()

    def _client_final(self, message: str) -> bytes:
        self._step = "failed"
        match = _CLIENT_FINAL.fullmatch(message)
        if match is None:
            raise AuthenticationFailed(f"Invalid SCRAM client final message format: {message}")
        if match["nonce"] != self._server_nonce:
            raise AuthenticationFailed("Invalid client nonce in the final client message.")
        credential = self._credential
        auth_message = self._auth_prefix + match["without_proof"].encode()
        client_signature = _hmac(credential.stored_key, auth_message, self._hash)
        proof = base64.b64decode(match["proof"])
        if len(proof) != len(client_signature):
            raise AuthenticationFailed("Invalid client credentials")
        client_key = bytes(a ^ b for a, b in zip(proof, client_signature))
        if not hmac.compare_digest(hashlib.new(self._hash, client_key).digest(), credential.stored_key):
            raise AuthenticationFailed("Invalid client credentials")
        server_signature = _hmac(credential.server_key, auth_message, self._hash)
        self._step = "done"
        self.complete = True
        return b"v=" + base64.b64encode(server_signature)
