"""Kafka's ClientMetricsManager: CLIENT_METRICS subscriptions, the client instances that ask for
theirs (GetTelemetrySubscriptions) and push metrics (PushTelemetry), with its checks: a request
before the push interval is THROTTLING_QUOTA_EXCEEDED, a stale subscription id
UNKNOWN_SUBSCRIPTION_ID, an unknown codec UNSUPPORTED_COMPRESSION_TYPE, a payload over
``telemetry.max.bytes`` TELEMETRY_TOO_LARGE, anything after a terminating push INVALID_REQUEST.
Where Kafka hands the metrics to a receiver plugin, kafkaemu decodes them and keeps each client's
latest values (``clients``) for the control API and the web page."""
from __future__ import annotations

import base64
import os
import struct
from collections import OrderedDict
from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:
    from .subscriptions import Subscription

SUPPORTED_COMPRESSION = (4, 3, 1, 2)   # ZSTD, LZ4, GZIP, SNAPPY: the order Kafka offers them
KNOWN_COMPRESSION = (0, 1, 2, 3, 4)
ZERO_UUID = bytes(16)
RESERVED = (ZERO_UUID, bytes(15) + b"\x01")
CACHE_MAX = 16384                      # client instances kept (Kafka's cache size)
MIN_EXPIRY_MS = 60_000


def uuid_text(raw: bytes) -> str:
    """Kafka's Uuid.toString: URL-safe base64 without padding."""
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def _java_hash(raw: bytes) -> int:
    most, least = struct.unpack(">qq", raw)
    h = most ^ least
    return ((h >> 32) ^ h) & 0xFFFFFFFF


def _int32(value: int) -> int:
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value >= 1 << 31 else value


class ClientInstance:
    def __init__(self, instance_id: bytes, client: dict, version: int, subscriptions) -> None:
        self.instance_id = instance_id
        self.client = client
        self.version = version
        from .subscriptions import ALL_METRICS, DEFAULT_INTERVAL_MS   # with the first client instance
        interval, metrics, everything = DEFAULT_INTERVAL_MS, set(), False
        for sub in subscriptions:
            if sub.matches(client):
                everything = everything or ALL_METRICS in sub.metrics
                metrics |= sub.metrics
                interval = min(interval, sub.interval_ms)
        self.metrics = sorted({ALL_METRICS} if everything else metrics)
        self.push_interval_ms = interval
        import crc32c   # on first use: a default start imports nothing heavy
        text = (str(self.metrics) + str(interval)).encode()
        self.subscription_id = _int32(crc32c.crc32c(text) ^ _java_hash(instance_id))
        self.last_get_ms = self.last_push_ms = -(1 << 62)
        self.terminating = False
        self.last_seen_ms = 0

    def may_get(self, now_ms: int) -> bool:
        if now_ms - max(self.last_get_ms, self.last_push_ms) >= self.push_interval_ms:
            self.last_get_ms = now_ms
            return True
        return False

    def may_push(self, now_ms: int) -> bool:
        # a push right after a GetTelemetrySubscriptions is accepted early (clients add jitter)
        accept = self.last_get_ms > self.last_push_ms or \
            now_ms - max(self.last_get_ms, self.last_push_ms) >= self.push_interval_ms
        if accept:
            self.last_push_ms = now_ms
        return accept


class ClientMetricsManager:
    def __init__(self, telemetry_max_bytes: int = 1 << 20,
                 on_change: Callable[[dict], None] | None = None) -> None:
        self.telemetry_max_bytes = telemetry_max_bytes
        self.on_change = on_change
        self.configs: dict[str, dict[str, str]] = {}
        self._subscriptions: dict[str, Subscription] = {}
        self.version = 0
        self.instances: OrderedDict[bytes, ClientInstance] = OrderedDict()
        self.received: OrderedDict[bytes, dict] = OrderedDict()   # instance id -> what it pushed
        self._software: OrderedDict[int, tuple[str, str]] = OrderedDict()

    # -- CLIENT_METRICS resources ------------------------------------------------------------
    def names(self) -> list[str]:
        return sorted(self.configs)

    def load(self, configs: dict[str, dict[str, str]]) -> None:
        from .subscriptions import Subscription   # with the first subscription (a start has none)
        self.configs = {name: dict(c) for name, c in configs.items() if c}
        self._subscriptions = {name: Subscription.of(name, c) for name, c in self.configs.items()}
        self.version += 1

    def replace(self, configs: dict[str, dict[str, str]]) -> None:
        """Exactly these subscriptions (a control reset or snapshot restore); client instances and
        what they pushed are forgotten."""
        self.load(configs)
        self.instances.clear()
        self.received.clear()
        if self.on_change is not None:
            self.on_change(self.configs)

    def alter(self, name: str, configs: dict[str, str], validate_only: bool = False) -> None:
        """Replace subscription ``name``'s configs (none left: the subscription is removed);
        TelemetryConfigError as Kafka's controller refuses."""
        from .subscriptions import Subscription, validate
        validate(name, configs, self.configs.get(name, {}))
        if validate_only:
            return
        if configs:
            self.configs[name] = dict(configs)
            self._subscriptions[name] = Subscription.of(name, configs)
        elif name in self.configs:
            del self.configs[name]
            del self._subscriptions[name]
        else:
            return
        self.version += 1
        if self.on_change is not None:
            self.on_change(self.configs)

    # -- clients ---------------------------------------------------------------------------
    def client_software(self, connection_id: int, name: str | None, version: str | None) -> None:
        """What ApiVersions said the client is (the client_software_* selectors)."""
        self._software[connection_id] = (name or "", version or "")
        self._software.move_to_end(connection_id)
        while len(self._software) > CACHE_MAX:
            self._software.popitem(last=False)

    def _client(self, instance_id: bytes, client_id: str | None, host: str, connection_id: int) -> dict:
        name, version = self._software.get(connection_id, ("", ""))
        return {"client_instance_id": uuid_text(instance_id), "client_id": client_id or "",
                "client_software_name": name, "client_software_version": version, "client_source_address": host,
                "client_source_port": ""}

    def _instance(self, instance_id: bytes, client: dict, now_ms: int) -> ClientInstance:
        instance = self.instances.get(instance_id)
        if instance is None or instance.version < self.version:
            instance = self.instances[instance_id] = ClientInstance(instance_id, client, self.version,
                                                                     self._subscriptions.values())
        self.instances.move_to_end(instance_id)
        instance.last_seen_ms = now_ms
        self._expire(now_ms)
        return instance

    def _expire(self, now_ms: int) -> None:
        while len(self.instances) > CACHE_MAX:
            self.instances.popitem(last=False)
        for key, instance in list(self.instances.items())[:8]:   # the least recently seen first
            if now_ms - instance.last_seen_ms >= max(MIN_EXPIRY_MS, 3 * instance.push_interval_ms):
                del self.instances[key]

    def _new_id(self) -> bytes:
        while True:
            raw = os.urandom(16)
            if raw not in RESERVED and raw not in self.instances and not uuid_text(raw).startswith("-"):
                return raw

    def get_subscriptions(self, instance_id: bytes, client_id: str | None, host: str, connection_id: int,
                          now_ms: int) -> dict:
        if instance_id == ZERO_UUID:
            instance_id = self._new_id()
        instance = self._instance(instance_id, self._client(instance_id, client_id, host, connection_id), now_ms)
        if not instance.may_get(now_ms):
            return {"error_code": "THROTTLING_QUOTA_EXCEEDED"}
        return {"error_code": "NONE", "client_instance_id": instance_id, "subscription_id": instance.subscription_id,
                "accepted_compression_types": list(SUPPORTED_COMPRESSION),
                "push_interval_ms": instance.push_interval_ms,
                "telemetry_max_bytes": self.telemetry_max_bytes, "delta_temporality": True,
                "requested_metrics": list(instance.metrics)}

    def push(self, instance_id: bytes, subscription_id: int, terminating: bool, compression_type: int,
             payload: bytes, client_id: str | None, host: str, connection_id: int, now_ms: int) -> tuple[str, str]:
        """(error name, message) of a PushTelemetry; its metrics decoded and kept when accepted."""
        if instance_id in RESERVED:
            return "INVALID_REQUEST", f"Invalid request from the client [{uuid_text(instance_id)}], invalid client " \
                                      f"instance id"
        instance = self._instance(instance_id, self._client(instance_id, client_id, host, connection_id), now_ms)
        try:
            error = self._check_push(instance, subscription_id, terminating, compression_type, payload, now_ms)
        finally:
            instance.terminating = instance.terminating or terminating
        if error is not None:
            return error
        if payload:
            from . import otlp   # protobuf, on the first push
            try:
                decoded = otlp.decode(payload, compression_type, self.telemetry_max_bytes)
            except otlp.PayloadError as exc:
                return "INVALID_RECORD", str(exc)
            self._keep(instance, decoded, terminating, now_ms)
        return "NONE", ""

    def _check_push(self, instance, subscription_id, terminating, compression_type, payload, now_ms):
        text = uuid_text(instance.instance_id)
        if instance.terminating:
            return "INVALID_REQUEST", f"Client [{text}] sent the previous request with state terminating to TRUE, " \
                                      f"can not acceptany requests after that"
        if not instance.may_push(now_ms) and not terminating:
            return "THROTTLING_QUOTA_EXCEEDED", f"Request from the client [{text}] arrived before the next push " \
                                                f"interval time"
        if subscription_id != instance.subscription_id:
            return "UNKNOWN_SUBSCRIPTION_ID", f"Unknown client subscription id for the client [{text}]"
        if compression_type not in KNOWN_COMPRESSION:
            return "UNSUPPORTED_COMPRESSION_TYPE", f"Unknown compression type [{compression_type}] is received in " \
                                                   f"telemetry request from [{text}]"
        if payload is not None and len(payload) > self.telemetry_max_bytes:
            return "TELEMETRY_TOO_LARGE", f"Telemetry request from [{text}] is larger than the maximum allowed size " \
                                          f"[{self.telemetry_max_bytes}]"
        return None

    def _keep(self, instance: ClientInstance, decoded: dict, terminating: bool, now_ms: int) -> None:
        key = instance.instance_id
        entry = self.received.get(key)
        if entry is None:
            entry = self.received[key] = {**instance.client, "pushes": 0, "metrics": {}, "resource": {}}
        self.received.move_to_end(key)
        while len(self.received) > CACHE_MAX:
            self.received.popitem(last=False)
        entry.update(pushes=entry["pushes"] + 1, last_push_ms=now_ms, terminating=terminating,
                     subscription_id=instance.subscription_id, resource=decoded["resource"] or entry["resource"])
        metrics = entry["metrics"]
        for metric in decoded["metrics"]:
            for point in metric["points"]:
                attrs = point["attributes"]
                name = metric["name"]
                label = name + ("{" + ",".join(f"{k}={v}" for k, v in sorted(attrs.items())) + "}" if attrs else "")
                kept = metrics.get(label)
                value = point.get("value", point.get("sum"))
                total = value if kept is None or metric["kind"] != "sum" or not isinstance(value, (int, float)) \
                    else (kept.get("total") or 0) + value
                metrics[label] = {"name": name, "kind": metric["kind"], "unit": metric["unit"], "attributes": attrs,
                                  "value": value, "total": total, "count": point.get("count"),
                                  "time_ms": point["time_ms"]}

    def clients(self) -> list[dict]:
        """What each client pushed, the latest first: its identity, pushes and latest metric values."""
        return [dict(entry, metrics=list(entry["metrics"].values())) for entry in reversed(self.received.values())]
