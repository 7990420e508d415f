"""Fault injection for tests: rules that make chosen requests fail, lag or drop their connection.

A rule matches an API key (and optionally a client id). When it fires, the request is still
processed (as when a real broker's answer is lost or fails late), then its reply is:
- ``drop_connection``: never sent, and the connection is closed;
- ``error_code``: sent with every ``error_code`` field in it replaced (top-level and per
  partition/member), so e.g. OffsetCommit answers COORDINATOR_NOT_AVAILABLE for each partition;
- ``delay_ms``: sent that much later (on the broker's clock, so a manual clock controls it).
``times`` limits how often a rule fires (None: until removed).

APIs and errors are given by number or by name: ``api_key_of("Heartbeat") == 12`` (the names
``kafkaemu apis`` prints, any case), ``error_code_of("NOT_COORDINATOR") == 16`` (Kafka's error
names, ``kafkaemu errors`` lists them).
"""
from __future__ import annotations

import difflib
import itertools
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
    close = difflib.get_close_matches(word, names, n=1, cutoff=0.6)
    return f"; did you mean {close[0]}?" if close else ""


@dataclass
class FaultRule:
    api_key: int
    error_code: int | None = None
    delay_ms: int = 0
    drop_connection: bool = False
    client_id: str | None = None
    times: int | None = 1
    fired: int = 0


class Faults:
    def __init__(self) -> None:
        self.rules: list[FaultRule] = []
        self._ids = itertools.count()

    def add(self, rule: FaultRule) -> FaultRule:
        self.rules.append(rule)
        return rule

    def clear(self) -> None:
        self.rules.clear()

    def take(self, api_key: int, client_id: str | None) -> FaultRule | None:
        """The first live rule matching this request, counting it as fired."""
        for rule in self.rules:
            if rule.api_key == api_key and rule.client_id in (None, client_id):
                rule.fired += 1
                if rule.times is not None and rule.fired >= rule.times:
                    self.rules.remove(rule)
                return rule
        return None

    def next_timer_key(self) -> str:
        return f"fault-delay-{next(self._ids)}"


def replace_error_codes(response, code: int):
    """A copy of ``response`` with every ``error_code`` field set to ``code``."""
    if isinstance(response, dict):
        return {k: (code if k == "error_code" else replace_error_codes(v, code)) for k, v in response.items()}
    if isinstance(response, list):
        return [replace_error_codes(v, code) for v in response]
    return response
