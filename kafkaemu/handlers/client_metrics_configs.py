"""CLIENT_METRICS config resources (type 16, KIP-714 subscriptions): DescribeConfigs lists the
configs set on one, as Kafka's ConfigHelper (source CLIENT_METRICS_CONFIG, no defaults, an unknown
name answers no configs); IncrementalAlterConfigs / AlterConfigs change them with the checks of
``telemetry/subscriptions.py``; removing every config removes the subscription. Both need the
cluster's DESCRIBE_CONFIGS / ALTER_CONFIGS, as the broker resources do."""
from __future__ import annotations

from ..protocol.errors import ErrorCode
from ..telemetry.subscriptions import CLIENT_METRICS_CONFIG, LIST_CONFIGS, TelemetryConfigError, parse_list

CLIENT_METRICS = 16
SET, DELETE, APPEND, SUBTRACT = 0, 1, 2, 3


def describe_client_metrics(ctx, res, keys) -> tuple[int, str | None, list[dict]]:
    """(error, message, config entries) of one CLIENT_METRICS resource."""
    if not res.resource_name:
        return ErrorCode.INVALID_REQUEST, "Client metrics subscription name must not be empty", []
    configs = ctx.client_metrics.configs.get(res.resource_name, {})
    return ErrorCode.NONE, None, [
        {"name": name, "value": value, "read_only": False, "is_default": False, "config_source": CLIENT_METRICS_CONFIG,
         "is_sensitive": False, "config_type": 0, "documentation": None, "synonyms": []}
        for name, value in configs.items() if keys is None or name in keys]


def alter_client_metrics(ctx, resource, changes, replace_all: bool, validate_only: bool) -> dict:
    result = {"error_code": ErrorCode.NONE, "error_message": None, "resource_type": resource.resource_type,
              "resource_name": resource.resource_name}
    name = resource.resource_name
    configs = {} if replace_all else dict(ctx.client_metrics.configs.get(name, {}))
    for key, op, value in changes:
        if op == SET:
            configs[key] = value if value is not None else ""
        elif op == DELETE:
            configs.pop(key, None)
        elif op in (APPEND, SUBTRACT) and key in LIST_CONFIGS:
            current = parse_list(configs.get(key, ""))
            items = parse_list(value or "")
            merged = current + [v for v in items if v not in current] if op == APPEND \
                else [v for v in current if v not in items]
            configs[key] = ",".join(merged)
        elif op in (APPEND, SUBTRACT):
            result["error_code"] = ErrorCode.INVALID_CONFIG
            result["error_message"] = f"Config value append/subtract is not allowed for config key {key}"
            return result
        else:
            result["error_code"], result["error_message"] = ErrorCode.INVALID_REQUEST, f"Unknown config operation {op}"
            return result
    try:
        ctx.client_metrics.alter(name, configs, validate_only)
    except TelemetryConfigError as exc:
        result["error_code"], result["error_message"] = getattr(ErrorCode, exc.code), exc.message
    return result
