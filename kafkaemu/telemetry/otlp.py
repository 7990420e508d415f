"""The metrics a client pushes (KIP-714): an OTLP ``MetricsData`` protobuf, compressed with the
codec the request names, decoded (with opentelemetry-proto's generated classes) into plain values:
the resource's attributes and, per metric, its kind, unit and data points (attributes, value or
histogram count/sum, time in ms)."""
from __future__ import annotations

from google.protobuf.message import DecodeError
from opentelemetry.proto.metrics.v1 import metrics_pb2

from ..storage import compression


class PayloadError(ValueError):
    """The payload does not decompress or is not an OTLP MetricsData."""


def _any_value(v):
    kind = v.WhichOneof("value")
    if kind is None:
        return None
    if kind == "array_value":
        return [_any_value(x) for x in v.array_value.values]
    if kind == "kvlist_value":
        return {kv.key: _any_value(kv.value) for kv in v.kvlist_value.values}
    if kind == "bytes_value":
        return v.bytes_value.hex()
    return getattr(v, kind)


def _attributes(kvs) -> dict:
    return {kv.key: _any_value(kv.value) for kv in kvs}


def _number(point) -> float | int | None:
    kind = point.WhichOneof("value")
    return None if kind is None else getattr(point, kind)


def _points(metric) -> tuple[str, list[dict]]:
    kind = metric.WhichOneof("data")
    if kind in ("gauge", "sum"):
        data = getattr(metric, kind)
        return kind, [{"attributes": _attributes(p.attributes), "value": _number(p),
                       "time_ms": p.time_unix_nano // 1_000_000} for p in data.data_points]
    if kind in ("histogram", "exponential_histogram", "summary"):
        data = getattr(metric, kind)
        return kind, [{"attributes": _attributes(p.attributes), "count": p.count, "sum": p.sum,
                       "time_ms": p.time_unix_nano // 1_000_000} for p in data.data_points]
    return kind or "empty", []


def decode(payload: bytes, compression_type: int, max_bytes: int) -> dict:
    """``{"resource": {...}, "metrics": [{"name", "kind", "unit", "points"}]}``."""
    try:
        raw = compression.decompress(compression_type, payload, max_bytes * 16) if compression_type else payload
    except Exception as exc:
        raise PayloadError(f"the metrics do not decompress as codec {compression_type}: {exc}") from None
    data = metrics_pb2.MetricsData()
    try:
        data.ParseFromString(bytes(raw))
    except DecodeError as exc:
        raise PayloadError(f"the metrics are not an OTLP MetricsData: {exc}") from None
    resource: dict = {}
    metrics = []
    for rm in data.resource_metrics:
        resource.update(_attributes(rm.resource.attributes))
        for sm in rm.scope_metrics:
            for metric in sm.metrics:
                kind, points = _points(metric)
                metrics.append({"name": metric.name, "kind": kind, "unit": metric.unit, "points": points})
    return {"resource": resource, "metrics": metrics}
