"""Group configs (config resources of type GROUP, 32; Kafka's GroupConfig): set with
IncrementalAlterConfigs / AlterConfigs, read with DescribeConfigs, before or after the group
exists. The share-group ones tune share groups (core/share/partitions.py reads them):
share.auto.offset.reset (latest, earliest or by_duration:<ISO-8601 duration>),
share.record.lock.duration.ms (15000-60000), share.delivery.count.limit (2-10),
share.isolation.level, share.session.timeout.ms, share.heartbeat.interval.ms. Consumer groups
(KIP-848) take consumer.session.timeout.ms and consumer.heartbeat.interval.ms from their group's
configs (core/consumer/manager.py), streams groups (KIP-1071) streams.session.timeout.ms,
streams.heartbeat.interval.ms and streams.num.standby.replicas (core/streams/manager.py), each within
the broker's group.streams.min.* / max.* settings.
An unknown name, a bad value or a heartbeat interval not below its session timeout is
INVALID_CONFIG, as Kafka's GroupConfig."""
from __future__ import annotations

import re

from ..protocol.errors import ErrorCode
from ..storage.topic_config import DEFAULT_CONFIG, INT, STRING

GROUP = 32
DYNAMIC_GROUP_CONFIG = 8
SET, DELETE = 0, 1

# name -> (type, check returning an error message or None)
_DURATION = re.compile(r"by_duration:P(?:\d+D)?(?:T(?:\d+H)?(?:\d+M)?(?:\d+(?:\.\d+)?S)?)?$")


def _int_in(lo: int, hi: int):
    def check(name: str, value: str) -> str | None:
        try:
            n = int(value)
        except ValueError:
            return f"Invalid value {value} for configuration {name}: Not a number of type INT"
        if not lo <= n <= hi:
            return f"Invalid value {value} for configuration {name}: Value must be between {lo} and {hi}"
        return None
    return check


def _one_of(*allowed: str):
    def check(name: str, value: str) -> str | None:
        return None if value in allowed else f"Invalid value {value} for configuration {name}: String must be one of: " \
                                              f"{', '.join(allowed)}"
    return check


def _reset(name: str, value: str) -> str | None:
    if value in ("latest", "earliest") or _DURATION.match(value):
        return None
    return f"Invalid value {value} for configuration {name}: Invalid value for share.auto.offset.reset"


GROUP_CONFIGS = {
    "share.auto.offset.reset": (STRING, _reset),
    "share.record.lock.duration.ms": (INT, _int_in(15000, 60000)),
    "share.delivery.count.limit": (INT, _int_in(2, 10)),
    "share.isolation.level": (STRING, _one_of("read_committed", "read_uncommitted")),
    "share.session.timeout.ms": (INT, _int_in(45000, 60000)),
    "share.heartbeat.interval.ms": (INT, _int_in(5000, 15000)),
    "consumer.session.timeout.ms": (INT, _int_in(45000, 60000)),
    "consumer.heartbeat.interval.ms": (INT, _int_in(5000, 15000)),
    # within the broker's group.streams.min.* / max.* settings: _streams_bounds
    "streams.session.timeout.ms": (INT, None),
    "streams.heartbeat.interval.ms": (INT, None),
    "streams.num.standby.replicas": (INT, None),
}
STREAMS_DEFAULTS = {"streams.session.timeout.ms": "45000", "streams.heartbeat.interval.ms": "5000",
                    "streams.num.standby.replicas": "0"}
# (heartbeat interval, session timeout) pairs Kafka's GroupConfig checks
_INTERVAL_BELOW_TIMEOUT = [(f"{kind}.heartbeat.interval.ms", f"{kind}.session.timeout.ms")
                           for kind in ("consumer", "share", "streams")]


def alter_group_configs(ctx, resource, changes, replace_all: bool, validate_only: bool) -> dict:
    result = {"error_code": ErrorCode.NONE, "error_message": None,
              "resource_type": resource.resource_type, "resource_name": resource.resource_name}
    if not resource.resource_name:
        result["error_code"], result["error_message"] = ErrorCode.INVALID_REQUEST, "Group name must not be empty."
        return result
    spm = ctx.shares
    current = spm.group_configs.get(resource.resource_name, {})
    wanted = {} if replace_all else dict(current)
    for name, op, value in changes:
        spec = GROUP_CONFIGS.get(name)
        if spec is None:
            message = f"Unknown group config name: {name}"
        elif op == SET:
            check = spec[1] or _int_in(*_streams_bounds(ctx, name))
            message = check(name, value if value is not None else "")
        elif op == DELETE:
            message = None
        else:
            message = f"Config value append/subtract is not allowed for config key {name}"
        if message:
            result["error_code"], result["error_message"] = ErrorCode.INVALID_CONFIG, message
            return result
        if op == SET:
            wanted[name] = value
        else:
            wanted.pop(name, None)
    for interval, timeout in _INTERVAL_BELOW_TIMEOUT:
        if int(wanted.get(interval) or _default(ctx, interval)) >= int(wanted.get(timeout) or _default(ctx, timeout)):
            result["error_code"] = ErrorCode.INVALID_CONFIG
            result["error_message"] = f"{interval} must be less than {timeout}"
            return result
    if not validate_only:
        for name in set(current) | set(wanted):
            if current.get(name) != wanted.get(name):
                spm.set_config(resource.resource_name, name, wanted.get(name))
    return result


def describe_group_configs(ctx, resource, keys) -> list[tuple[str, str, int, int]]:
    """(name, value, source, type) of every group config of the group."""
    spm = ctx.shares
    set_here = spm.group_configs.get(resource.resource_name, {})
    out = []
    for name, (typ, _) in sorted(GROUP_CONFIGS.items()):
        if keys is not None and name not in keys:
            continue
        if name in set_here:
            out.append((name, set_here[name], DYNAMIC_GROUP_CONFIG, typ))
        else:
            out.append((name, _default(ctx, name), DEFAULT_CONFIG, typ))
    return out


def _streams_bounds(ctx, name: str) -> tuple[int, int]:
    s = ctx.groups.settings.streams
    return {"streams.session.timeout.ms": (s.min_session_timeout_ms, s.max_session_timeout_ms),
            "streams.heartbeat.interval.ms": (s.min_heartbeat_interval_ms, s.max_heartbeat_interval_ms),
            "streams.num.standby.replicas": (0, s.max_standby_replicas)}[name]


def _default(ctx, name: str) -> str:
    if name.startswith("share."):
        return ctx.shares.config("", name)
    if name.startswith("streams."):
        streams = ctx.groups.settings.streams   # the group.streams.* broker settings
        return str({"streams.session.timeout.ms": streams.session_timeout_ms,
                    "streams.heartbeat.interval.ms": streams.heartbeat_interval_ms,
                    "streams.num.standby.replicas": streams.num_standby_replicas}.get(name, STREAMS_DEFAULTS[name]))
    settings = ctx.groups.settings.consumer
    return str(settings.session_timeout_ms if name == "consumer.session.timeout.ms" else settings.heartbeat_interval_ms)
