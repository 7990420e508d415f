"""The broker's clock: read it; move the manual clock forward (every timer due by then fires)."""
from __future__ import annotations

import time

from ..params import MAX_DURATION_MS, MAX_TIMESTAMP_MS, ControlError, bad, duration_ms, timestamp_ms
from ..table import Cli, P, Py, op
from .base import ControlBase, log


class ClockOps(ControlBase):
    @op("GET", "/api/clock", py=Py("now_ms", lambda: {}, result="now_ms"), cli=[Cli("clock"), Cli("clock show")])
    def clock_get(self) -> dict:
        """The broker's time and whether it is the manual clock."""
        now = self._now()
        return {"now_ms": now, "manual": bool(self.clock.manual),
                "iso": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now / 1000)) + f".{now % 1000:03d}Z"}

    def _manual_clock(self):
        if not self.clock.manual:
            raise ControlError(409, "the emulator runs on the system clock; start it with --manual-clock "
                                    "(KafkaEmulator(manual_clock=True)) to move time")
        return self.clock

    def _check_reachable(self, name: str, target_ms: int) -> None:
        if target_ms > MAX_TIMESTAMP_MS:
            raise bad(f"{name}: the clock cannot go past the end of the year 9999 ({MAX_TIMESTAMP_MS} ms)")

    @op("POST", "/api/clock/advance",
        ms=P(duration_ms, required=True, help="how far (ms, or 30s, 5m, 1h30m; at most 100 years)"),
        py=Py("advance_clock", lambda ms: {"ms": ms}, result="now_ms"), cli=Cli("clock advance", "ms"))
    def clock_advance(self, ms: int) -> dict:
        """Move the manual clock forward; every timer due by then fires (session timeouts, delays...).
        A periodic check that missed several of its periods (a long advance) runs once, at the
        last of them, as a real timer after a pause would."""
        clock = self._manual_clock()
        self._check_reachable("clock_advance", clock.now_ms() + ms)
        clock.advance(ms)
        self._tick()
        log.info("clock_advanced", ms=ms)
        return self.clock_get()

    @op("POST", "/api/clock/set", now_ms=P(timestamp_ms, required=True,
                                            help="ms since the epoch or an ISO 8601 time, not before now"),
        py=Py("set_clock", lambda when: {"now_ms": when}, result="now_ms"), cli=Cli("clock set", "now_ms"))
    def clock_set(self, now_ms: int) -> dict:
        """Set the manual clock to a later time (time never runs backwards for the broker), at
        most 100 years ahead."""
        clock = self._manual_clock()
        if now_ms < clock.now_ms():
            raise ControlError(409, f"now_ms {now_ms} is before the clock's {clock.now_ms()}; time only moves forward "
                                    f"(restore a snapshot to go back)")
        if now_ms - clock.now_ms() > MAX_DURATION_MS:
            raise bad(f"clock_set: {now_ms} is more than 100 years ({MAX_DURATION_MS} ms) ahead of the clock's "
                      f"{clock.now_ms()}")
        clock.set(now_ms)
        self._tick()
        return self.clock_get()
