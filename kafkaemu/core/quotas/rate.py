"""Kafka's quota measurement: a ``Rate`` over a ``SampledStat`` of ``samples`` windows of
``window_ms`` each (``quota.window.num`` = 11, ``quota.window.size.seconds`` = 1), and
``QuotaUtils.throttleTime``: how long the client must wait for the rate to fall back to the
bound. Same arithmetic as org.apache.kafka.common.metrics.stats.{SampledStat,Rate}."""
from __future__ import annotations

import math


class _Sample:
    __slots__ = ("value", "event_count", "last_window_ms")

    def __init__(self, now_ms: int) -> None:
        self.value = 0.0
        self.event_count = 0
        self.last_window_ms = now_ms

    def reset(self, now_ms: int) -> None:
        self.value = 0.0
        self.event_count = 0
        self.last_window_ms = now_ms


class Rate:
    """Per second rate of what is recorded, measured over the retained samples."""

    def __init__(self, samples: int = 11, window_ms: int = 1000) -> None:
        self.samples_n = samples
        self.window_ms = window_ms
        self.samples: list[_Sample] = []
        self.current = 0

    def _current(self, now_ms: int) -> _Sample:
        if not self.samples:
            self.samples.append(_Sample(now_ms))
        return self.samples[self.current]

    def record(self, value: float, now_ms: int) -> None:
        sample = self._current(now_ms)
        if now_ms - sample.last_window_ms >= self.window_ms:   # the sample is complete
            previous_end = sample.last_window_ms + self.window_ms
            start = now_ms - ((now_ms - previous_end) % self.window_ms)
            self.current = (self.current + 1) % self.samples_n
            if self.current >= len(self.samples):
                sample = _Sample(start)
                self.samples.append(sample)
            else:
                sample = self.samples[self.current]
                sample.reset(start)
        sample.value += value
        sample.event_count += 1

    def _purge(self, now_ms: int) -> None:
        expire_age = self.samples_n * self.window_ms
        for sample in self.samples:
            if now_ms - sample.last_window_ms >= expire_age:
                sample.reset(now_ms)

    def window_size_ms(self, now_ms: int) -> int:
        self._purge(now_ms)
        if not self.samples:
            self.samples.append(_Sample(now_ms))
        oldest = min(self.samples, key=lambda s: s.last_window_ms)
        elapsed = now_ms - oldest.last_window_ms
        full_windows = elapsed // self.window_ms
        if full_windows < self.samples_n - 1:
            elapsed += (self.samples_n - 1 - full_windows) * self.window_ms
        return max(elapsed, 1)

    def measure(self, now_ms: int) -> float:
        """The rate per second at ``now_ms``."""
        self._purge(now_ms)
        total = sum(s.value for s in self.samples)
        return total / (self.window_size_ms(now_ms) / 1000.0)


def throttle_time_ms(rate: Rate, value: float, bound: float, now_ms: int) -> int:
    """QuotaUtils.throttleTime: (value - bound) / bound over the rate's precise window."""
    difference = value - bound
    return int(java_round(difference / bound * rate.window_size_ms(now_ms)))


def java_round(x: float) -> int:
    """Math.round: halves round up."""
    return math.floor(x + 0.5)
