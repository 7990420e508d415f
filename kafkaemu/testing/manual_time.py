"""Letting time run on a manual clock until something holds, so a test needs no arithmetic about
which delays and timeouts must pass first (``KafkaEmulator.advance_until`` and
``advance_until_group``)."""
from __future__ import annotations

import time
from typing import Any, Callable

from ..control.params import AwaitTimeout, duration_ms


def advance_until(emulator, condition: Callable[[], Any], step: int | str, limit: int | str, settle: float,
                  what: str = "the condition", current: Callable[[], str] | None = None):
    """Advance ``emulator``'s manual clock by ``step`` until ``condition()`` is truthy, and return
    that value. After each step the condition is polled for up to ``settle`` seconds of real time,
    so that clients can answer what the step started (a rebalance's JoinGroup and SyncGroup, a
    delayed reply) before time moves on. AwaitTimeout once the clock has moved ``limit``."""
    step_ms, limit_ms = duration_ms("step", step), duration_ms("limit", limit)
    if step_ms <= 0:
        raise ValueError("step must be at least 1 ms")
    advanced = 0
    while True:
        deadline = time.monotonic() + settle
        while True:
            result = condition()
            if result:
                return result
            if time.monotonic() >= deadline:
                break
            time.sleep(0.01)
        if advanced >= limit_ms:
            seen = f"; now: {current()}" if current is not None else ""
            raise AwaitTimeout(f"{what} did not hold after advancing the clock {advanced} ms{seen}",
                               advanced_ms=advanced)
        emulator.advance_clock(step_ms)
        advanced += step_ms


def advance_until_group(emulator, group: str, step: int | str, limit: int | str, settle: float, **wanted) -> dict:
    """``advance_until`` for a group condition (KafkaEmulator.await_group's); returns the group."""
    seen: list = [None]

    def holds():
        try:
            return emulator.control("await_group", group=group, timeout_ms=int(settle * 1000),
                                    **{k: v for k, v in wanted.items() if v is not None and v is not False})["current"]
        except AwaitTimeout as exc:
            seen[0] = exc.details.get("current")
            return None

    wanted_text = ", ".join(f"{k} {v}" for k, v in wanted.items() if v is not None and v is not False)
    return advance_until(emulator, holds, step, limit, 0, f"group {group!r}: {wanted_text}",
                         lambda: _describe_group(seen[0]))


def _describe_group(group: dict) -> str:
    from ..control.operations.awaits import describe_group   # the control plane, when an await fails
    return describe_group(group)
