"""Clocks the server injects into the broker: the real one, and a manual one tests advance."""
from __future__ import annotations

import threading
import time


class SystemClock:
    manual = False

    def now_ms(self) -> int:
        return int(time.time() * 1000)


class ManualClock:
    """Starts at the real time (record timestamps stay plausible) and moves only when told."""

    manual = True

    def __init__(self, start_ms: int | None = None) -> None:
        self._now = int(time.time() * 1000) if start_ms is None else start_ms
        self._lock = threading.Lock()

    def now_ms(self) -> int:
        return self._now

    def advance(self, ms: int) -> int:
        with self._lock:
            self._now += ms
            return self._now

    def set(self, now_ms: int) -> int:
        with self._lock:
            self._now = now_ms
            return self._now
