"""Kafka's ClientQuotaManager for one quota kind (produce bytes, fetch bytes, request time): a
``Rate`` sensor per node and metric tags (the (user, client id) the applying quota names, defaults
resolved to the client's own names; every emulated node measures its own, as every Kafka broker)
and the throttle a recorded value costs."""
from __future__ import annotations

from .entities import (CONSUMER_BYTE_RATE, PRODUCER_BYTE_RATE, REQUEST_PERCENTAGE, ClientQuotas)
from .rate import Rate, throttle_time_ms

NANOS_TO_PERCENTAGE = 100.0 / 1e9   # ClientRequestQuotaManager.NanosToPercentagePerSecond


class QuotaManager:
    def __init__(self, quotas: ClientQuotas, key: str, samples: int = 11, window_ms: int = 1000,
                 max_throttle_ms: int | None = None) -> None:
        self.quotas = quotas
        self.key = key
        self.samples = samples
        self.window_ms = window_ms
        self.max_throttle_ms = max_throttle_ms
        self.sensors: dict[tuple[int, str, str], Rate] = {}
        self.throttled: dict[tuple[int, str, str], int] = {}   # throttles given per sensor (the control API)
        self.bounds: dict[tuple[int, str, str], float] = {}    # the quota each sensor was last measured against
        self._lookups: dict[tuple[str, str], tuple] = {}
        self._version = -1

    def _quota(self, user: str, client_id: str) -> tuple:
        if self._version != self.quotas.version:
            self._lookups.clear()
            self._version = self.quotas.version
        found = self._lookups.get((user, client_id))
        if found is None:
            found = self._lookups[(user, client_id)] = self.quotas.quota_for(self.key, user, client_id)
        return found

    def record(self, user: str, client_id: str, value: float, now_ms: int, node: int = 0) -> int:
        """Record ``value`` for the client; the throttle time in ms (0 within its quota)."""
        bound, tags = self._quota(user, client_id)
        if bound is None:
            return 0
        tags = (node, *tags)
        rate = self.sensors.get(tags)
        if rate is None:
            rate = self.sensors[tags] = Rate(self.samples, self.window_ms)
        self.bounds[tags] = bound
        rate.record(value, now_ms)
        measured = rate.measure(now_ms)
        if measured <= bound:
            return 0
        throttle = throttle_time_ms(rate, measured, bound, now_ms)
        if self.max_throttle_ms is not None:
            throttle = min(throttle, self.max_throttle_ms)
        if throttle > 0:
            self.throttled[tags] = self.throttled.get(tags, 0) + 1
        return max(throttle, 0)

    def unrecord(self, user: str, client_id: str, value: float, now_ms: int, node: int = 0) -> None:
        """Take back a value recorded for a reply that was not sent (a throttled Fetch)."""
        bound, tags = self._quota(user, client_id)
        rate = self.sensors.get((node, *tags))
        if bound is not None and rate is not None:
            rate.record(-value, now_ms)

    def max_value_in_window(self, user: str, client_id: str) -> float | None:
        """getMaxValueInQuotaWindow: what the quota allows over the retained full windows."""
        bound, _ = self._quota(user, client_id)
        return None if bound is None else bound * (self.samples - 1) * self.window_ms / 1000.0

    def rates(self, now_ms: int) -> list[dict]:
        """Each sensor's measured rate and bound (the control API)."""
        out = []
        for key, rate in self.sensors.items():
            node, user, client_id = key
            out.append({"node": node, "user": user, "client_id": client_id, "rate": rate.measure(now_ms),
                        "bound": self.bounds.get(key), "throttled_responses": self.throttled.get(key, 0)})
        return out


class ClientQuotaManagers:
    """The three quota kinds a broker enforces, over one ``ClientQuotas``."""

    def __init__(self, quotas: ClientQuotas, samples: int = 11, window_seconds: int = 1) -> None:
        window_ms = window_seconds * 1000
        self.quotas = quotas
        self.produce = QuotaManager(quotas, PRODUCER_BYTE_RATE, samples, window_ms)
        self.fetch = QuotaManager(quotas, CONSUMER_BYTE_RATE, samples, window_ms)
        self.request = QuotaManager(quotas, REQUEST_PERCENTAGE, samples, window_ms, max_throttle_ms=window_ms)

    def reset(self) -> None:
        """Forget every measured rate (a control reset or snapshot restore)."""
        for manager in (self.produce, self.fetch, self.request):
            manager.sensors.clear()
            manager.throttled.clear()
            manager.bounds.clear()

    @property
    def active(self) -> bool:
        """Whether any quota is set (while none is, requests cost one check)."""
        return bool(self.quotas.entries)
