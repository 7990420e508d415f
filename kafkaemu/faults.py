"""Fault injection for tests: rules that make chosen requests fail, lag or drop their connection.

A rule matches an API key and optionally a version range, the node the request reached, a client
id, and a topic (and partition) the request names. When it fires, the request is still processed
(as when a real broker's answer is lost or fails late), then its reply is:
- ``drop_connection``: never sent, and the connection is closed;
- ``error_code``: sent with every ``error_code`` field in it replaced (top-level and per
  partition/member), so e.g. OffsetCommit answers COORDINATOR_NOT_AVAILABLE for each partition;
  a rule scoped to a topic replaces only the error of that topic's (partition's) entries;
- ``delay_ms``: sent that much later (on the broker's clock, so a manual clock controls it).
``black_hole`` instead never handles the request nor answers it (the client times out).
``times`` limits how often a rule fires (None: until removed). The request hook, and the live
rules it consults (``Faults``), are kafkaemu.broker.intercept: this module comes with the first rule.

APIs and errors are given by number or by name: ``api_key_of("Heartbeat") == 12`` (the names
``kafkaemu apis`` prints, any case), ``error_code_of("NOT_COORDINATOR") == 16`` (Kafka's error
names, ``kafkaemu errors`` lists them).
"""
from __future__ import annotations

from dataclasses import dataclass


def api_key_of(api: int | str) -> int:
    if not isinstance(api, str):
        return int(api)
    from .protocol.catalog import catalog
    keys = {catalog().api_name(key).lower(): key for key in catalog().requests}
    key = keys.get(api.strip().lower())
    if key is None:
        raise ValueError(f"unknown API {api!r}{_did_you_mean(api, [catalog().api_name(k) for k in catalog().requests])}"
                         " (kafkaemu apis lists them)")
    return key


def error_code_of(error: int | str) -> int:
    if not isinstance(error, str):
        return int(error)
    from .protocol.errors import ErrorCode
    name = error.strip().upper()
    if name not in ErrorCode.__members__:
        raise ValueError(f"unknown error {error!r}{_did_you_mean(name, list(ErrorCode.__members__))}"
                         " (kafkaemu errors lists them)")
    return int(ErrorCode[name])


def _did_you_mean(word: str, names: list[str]) -> str:
    import difflib
    close = difflib.get_close_matches(word, names, n=1, cutoff=0.6)
    return f"; did you mean {close[0]}?" if close else ""


@dataclass
class FaultRule:
    """Which requests a rule matches (``None``: any) and what it does to them."""
    api_key: int
    error_code: int | None = None
    delay_ms: int = 0
    drop_connection: bool = False
    black_hole: bool = False          # never handled nor answered; the connection stays open
    client_id: str | None = None
    times: int | None = 1             # None: until removed
    min_version: int | None = None
    max_version: int | None = None
    node_id: int | None = None        # the node the request reached
    topic: str | None = None          # requests naming this topic; errors go to its entries only
    partition: int | None = None      # ... and to this partition's entry
    fired: int = 0
    id: int = 0

    @property
    def active(self) -> bool:
        return self.times is None or self.fired < self.times

    def matches(self, api_key: int, api_version: int, client_id: str | None, node_id: int) -> bool:
        """Whether the request's header fits (the topic scope is checked on the body)."""
        return (self.api_key == api_key and self.client_id in (None, client_id)
                and (self.min_version is None or api_version >= self.min_version)
                and (self.max_version is None or api_version <= self.max_version)
                and self.node_id in (None, node_id))


def replace_error_codes(response, code: int):
    """A copy of ``response`` with every ``error_code`` field set to ``code``."""
    if isinstance(response, dict):
        return {k: (code if k == "error_code" else replace_error_codes(v, code)) for k, v in response.items()}
    if isinstance(response, list):
        return [replace_error_codes(v, code) for v in response]
    return response
