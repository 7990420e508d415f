"""The broker's users: plain passwords for PLAIN, SCRAM credentials derived once at start.

Kafka keeps SCRAM credentials (salt, iterations, StoredKey, ServerKey) per user and mechanism
rather than passwords; kafkaemu derives them from the configured passwords with a random salt."""
from __future__ import annotations

from typing import Mapping

from .plain import PlainServer
from .scram import HASHES, ScramCredential, ScramServer, make_credential

PLAIN = "PLAIN"
SUPPORTED_MECHANISMS = (PLAIN, *HASHES)


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
    def __init__(self, users: Mapping[str, str], mechanisms: tuple[str, ...]) -> None:
        self.mechanisms = parse_mechanisms(mechanisms)
        self._passwords = dict(users)
        self._scram: dict[str, dict[str, ScramCredential]] = {
            mechanism: {user: make_credential(password, mechanism) for user, password in self._passwords.items()}
            for mechanism in self.mechanisms if mechanism in HASHES
        }

    def new_server(self, mechanism: str):
        """A fresh server-side exchange for one connection (the mechanism must be enabled)."""
        if mechanism == PLAIN:
            return PlainServer(self._passwords)
        return ScramServer(mechanism, self._scram[mechanism])
