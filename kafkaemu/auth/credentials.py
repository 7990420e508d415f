"""The broker's users: plain passwords for PLAIN, SCRAM credentials per user and mechanism.

Kafka keeps SCRAM credentials (salt, iterations, StoredKey, ServerKey) per user and mechanism
rather than passwords; kafkaemu derives them from the configured passwords (``--sasl-user``) with a
random salt, and AlterUserScramCredentials adds, replaces or removes them over the wire (Kafka's
ScramControlManager rules). A change applies to the next authentication; ``on_change`` is told
(the data directory keeps the credentials)."""
from __future__ import annotations

import base64
import hashlib
from typing import Callable, Mapping

import time

from .oauthbearer import OAuthBearerServer
from .plain import PlainServer
from .scram import HASHES, MIN_ITERATIONS, ScramCredential, ScramServer, _hmac, make_credential

PLAIN = "PLAIN"
OAUTHBEARER = "OAUTHBEARER"
SUPPORTED_MECHANISMS = (PLAIN, *HASHES, OAUTHBEARER)
SCRAM_TYPES = {1: "SCRAM-SHA-256", 2: "SCRAM-SHA-512"}   # Kafka's ScramMechanism type codes
SCRAM_CODES = {name: code for code, name in SCRAM_TYPES.items()}
MAX_ITERATIONS = 16384   # ScramControlManager.MAX_ITERATIONS


def parse_mechanisms(names) -> tuple[str, ...]:
    """Validate mechanism names (a comma-separated string or an iterable); keeps the given order."""
    if isinstance(names, str):
        names = [n for n in names.split(",")]
    result = tuple(n.strip().upper() for n in names if n.strip())
    unknown = [n for n in result if n not in SUPPORTED_MECHANISMS]
    if unknown:
        raise ValueError(f"unsupported SASL mechanism(s) {', '.join(unknown)}; "
                         f"kafkaemu supports {', '.join(SUPPORTED_MECHANISMS)}")
    return result


class CredentialStore:
    def __init__(self, users: Mapping[str, str], mechanisms: tuple[str, ...] = ()) -> None:
        self.mechanisms = parse_mechanisms(mechanisms)
        self._passwords = dict(users)
        # every SCRAM mechanism keeps credentials (they can be managed while the listener offers none)
        self._scram: dict[str, dict[str, ScramCredential]] = {
            mechanism: {user: make_credential(password, mechanism) for user, password in self._passwords.items()}
            for mechanism in HASHES
        }
        self.seed_json = self.scram_to_json()   # the --sasl-user users (a control reset goes back to them)
        self.on_change: Callable[[], None] | None = None
        self.now_ms: Callable[[], int] = lambda: int(time.time() * 1000)   # the server sets its clock
        self.tokens = None   # DelegationTokens, when the broker has them

    def new_server(self, mechanism: str):
        """A fresh server-side exchange for one connection (the mechanism must be enabled)."""
        if mechanism == PLAIN:
            return PlainServer(self._passwords)
        if mechanism == OAUTHBEARER:   # Kafka's unsecured-token validator (no validator class configured)
            return OAuthBearerServer(self.now_ms)
        return ScramServer(mechanism, self._scram[mechanism], tokens=self.tokens)

    # -- SCRAM credentials (DescribeUserScramCredentials, AlterUserScramCredentials) ------------
    def scram_users(self) -> list[str]:
        return sorted({user for by_user in self._scram.values() for user in by_user})

    def scram_info(self, user: str) -> list[tuple[int, int]]:
        """(mechanism code, iterations) of each credential the user has."""
        return [(SCRAM_CODES[mechanism], by_user[user].iterations)
                for mechanism, by_user in self._scram.items() if user in by_user]

    def has_scram(self, user: str, mechanism: str) -> bool:
        return user in self._scram[mechanism]

    def set_scram(self, user: str, mechanism: str, salt: bytes, salted_password: bytes, iterations: int) -> None:
        hash_name = HASHES[mechanism]
        client_key = _hmac(salted_password, b"Client Key", hash_name)
        self._scram[mechanism][user] = ScramCredential(bytes(salt), iterations,
                                                       hashlib.new(hash_name, client_key).digest(),
                                                       _hmac(salted_password, b"Server Key", hash_name))

    def delete_scram(self, user: str, mechanism: str) -> None:
        del self._scram[mechanism][user]

    def changed(self) -> None:
        if self.on_change is not None:
            self.on_change()

    # -- the data directory ---------------------------------------------------------------
    def scram_to_json(self) -> dict:
        b64 = lambda data: base64.b64encode(data).decode()  # noqa: E731
        return {mechanism: {user: {"salt": b64(c.salt), "iterations": c.iterations, "stored_key": b64(c.stored_key),
                                   "server_key": b64(c.server_key)} for user, c in by_user.items()}
                for mechanism, by_user in self._scram.items()}

    def replace_scram_json(self, data: dict) -> None:
        """Every SCRAM credential swapped for ``data``'s (a snapshot restored, a reset)."""
        for by_user in self._scram.values():
            by_user.clear()
        self.load_scram_json(data)
        self.changed()

    def load_scram_json(self, data: dict) -> None:
        """Credentials a previous run stored replace those seeded for the same user and mechanism."""
        for mechanism, by_user in data.items():
            for user, c in by_user.items():
                self._scram[mechanism][user] = ScramCredential(
                    base64.b64decode(c["salt"]), int(c["iterations"]), base64.b64decode(c["stored_key"]),
                    base64.b64decode(c["server_key"]))


__all__ = ["CredentialStore", "MAX_ITERATIONS", "MIN_ITERATIONS", "SCRAM_TYPES", "SUPPORTED_MECHANISMS",
           "parse_mechanisms"]
