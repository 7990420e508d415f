"""Fault injection for tests: rules that make chosen requests fail, lag or drop their connection.

A rule matches an API key (and optionally a client id). When it fires, the request is still
processed (as when a real broker's answer is lost or fails late), then its reply is:
- ``drop_connection``: never sent, and the connection is closed;
- ``error_code``: sent with every ``error_code`` field in it replaced (top-level and per
  partition/member), so e.g. OffsetCommit answers COORDINATOR_NOT_AVAILABLE for each partition;
- ``delay_ms``: sent that much later (on the broker's clock, so a manual clock controls it).
``times`` limits how often a rule fires (None: until removed).
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass


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
