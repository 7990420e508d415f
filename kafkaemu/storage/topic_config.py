"""Topic-level settings, with Apache Kafka 4.4's names, defaults and config types, and validation.

Kafka 4.0 removed message.format.version, message.downconversion.enable and
message.timestamp.difference.max.ms (Kafka answers "Unknown topic config name" for them), and
message.timestamp.after.max.ms defaults to an hour since; 4.4 adds max.decompressed.message.bytes,
the remote-copy lag limits and errors.deadletterqueue.group.enable (the integration/differential
suite compares this catalogue with a Kafka 4.4 broker's).

``Topic.configs`` holds only what was set explicitly; ``effective``/``int_config`` answer the
value the data path obeys (max.message.bytes, retention.ms, retention.bytes, cleanup.policy,
message.timestamp.type, the message.timestamp bounds, compression.type).
"""
from __future__ import annotations

import re

BOOLEAN, STRING, INT, SHORT, LONG, DOUBLE, LIST = 1, 2, 3, 4, 5, 6, 7
# DescribeConfigs/CreateTopics config_source codes
DYNAMIC_TOPIC_CONFIG, STATIC_BROKER_CONFIG, DEFAULT_CONFIG = 1, 4, 5
_LONG_MAX = "9223372036854775807"
LONG_MAX = 2**63 - 1
_CODECS = {"uncompressed": 0, "gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}   # compression.type -> attribute code

# name -> (default value, DescribeConfigs config_type)
TOPIC_CONFIG_DEFAULTS: dict[str, tuple[str, int]] = {
    "cleanup.policy": ("delete", LIST),
    "compression.gzip.level": ("-1", INT),
    "compression.lz4.level": ("9", INT),
    "compression.type": ("producer", STRING),
    "compression.zstd.level": ("3", INT),
    "delete.retention.ms": ("86400000", LONG),
    "errors.deadletterqueue.group.enable": ("false", BOOLEAN),
    "file.delete.delay.ms": ("60000", LONG),
    "flush.messages": (_LONG_MAX, LONG),
    "flush.ms": (_LONG_MAX, LONG),
    "follower.replication.throttled.replicas": ("", LIST),
    "index.interval.bytes": ("4096", INT),
    "leader.replication.throttled.replicas": ("", LIST),
    "local.retention.bytes": ("-2", LONG),
    "local.retention.ms": ("-2", LONG),
    "max.compaction.lag.ms": (_LONG_MAX, LONG),
    "max.decompressed.message.bytes": ("2147483639", INT),
    "max.message.bytes": ("1048588", INT),
    "message.timestamp.after.max.ms": ("3600000", LONG),
    "message.timestamp.before.max.ms": (_LONG_MAX, LONG),
    "message.timestamp.type": ("CreateTime", STRING),
    "min.cleanable.dirty.ratio": ("0.5", DOUBLE),
    "min.compaction.lag.ms": ("0", LONG),
    "min.insync.replicas": ("1", INT),
    "preallocate": ("false", BOOLEAN),
    "remote.copy.lag.bytes": ("-1", LONG),
    "remote.copy.lag.ms": ("0", LONG),
    "remote.log.copy.disable": ("false", BOOLEAN),
    "remote.log.delete.on.disable": ("false", BOOLEAN),
    "remote.storage.enable": ("false", BOOLEAN),
    "retention.bytes": ("-1", LONG),
    "retention.ms": ("604800000", LONG),
    "segment.bytes": ("1073741824", INT),
    "segment.index.bytes": ("10485760", INT),
    "segment.jitter.ms": ("0", LONG),
    "segment.ms": ("604800000", LONG),
    "unclean.leader.election.enable": ("false", BOOLEAN),
}

_CHOICES = {
    "cleanup.policy": {"delete", "compact"},
    "compression.type": {"uncompressed", "zstd", "lz4", "snappy", "gzip", "producer"},
    "message.timestamp.type": {"CreateTime", "LogAppendTime"},
}
# Kafka's LogConfig ranges (segment.bytes: 3.9's LegacyRecord.RECORD_OVERHEAD_V0; 4.x asks 1 MiB
# of clients but keeps small segments for its own tests, as kafkaemu's users want them)
_MINIMUM = {"max.message.bytes": 0, "segment.bytes": 14, "min.insync.replicas": 1, "retention.ms": -1,
            "retention.bytes": -1, "delete.retention.ms": 0, "segment.ms": 1, "index.interval.bytes": 0,
            "segment.index.bytes": 4, "segment.jitter.ms": 0, "flush.messages": 1, "flush.ms": 0,
            "file.delete.delay.ms": 0, "min.compaction.lag.ms": 0, "max.compaction.lag.ms": 1,
            "message.timestamp.after.max.ms": 0, "message.timestamp.before.max.ms": 0,
            "local.retention.bytes": -2, "local.retention.ms": -2, "remote.copy.lag.bytes": -1}
_BETWEEN = {"min.cleanable.dirty.ratio": (0.0, 1.0)}
_AT_MOST = {"compression.zstd.level": 22, "compression.lz4.level": 17}
_LEVEL_MINIMUM = {"compression.lz4.level": 1}   # zstd's levels go far below 0
_INTEGER = re.compile(r"^[+-]?[0-9]+$")     # as Java parses them: no "1_000", no other digits
_BITS = {SHORT: 2**15, INT: 2**31, LONG: 2**63}


def validate_topic_config(name: str, value: str | None) -> str | None:
    """None when ``name=value`` is a legal topic config, else Kafka's INVALID_CONFIG message."""
    spec = TOPIC_CONFIG_DEFAULTS.get(name)
    if spec is None:
        return f"Unknown topic config name: {name}"
    if value is None:
        return None
    typ = spec[1]
    try:
        if typ in (INT, LONG, SHORT):
            if not _INTEGER.match(value.strip()):
                raise ValueError
            number = int(value.strip())
            if not -_BITS[typ] <= number < _BITS[typ]:
                raise ValueError
            if number < _MINIMUM.get(name, -2**63):
                return f"Invalid value {value} for configuration {name}: Value must be at least {_MINIMUM[name]}"
            if name == "compression.gzip.level" and not (1 <= number <= 9 or number == -1):
                return f"Invalid value {value} for configuration {name}: Value must be between 1 and 9 or equal to -1"
            if name in _AT_MOST and number < _LEVEL_MINIMUM.get(name, -2**31):
                return (f"Invalid value {value} for configuration {name}: Value must be at least "
                        f"{_LEVEL_MINIMUM[name]}")
            if number > _AT_MOST.get(name, number):
                return f"Invalid value {value} for configuration {name}: Value must be no more than {_AT_MOST[name]}"
        elif typ == DOUBLE:
            number = float(value)
            low, high = _BETWEEN.get(name, (float("-inf"), float("inf")))
            if not low <= number <= high:   # NaN fails too
                return f"Invalid value {value} for configuration {name}: Value must be between {low} and {high}"
        elif typ == BOOLEAN and value.strip().lower() not in ("true", "false"):
            raise ValueError
    except ValueError:
        kind = {INT: "int", LONG: "long", SHORT: "short", DOUBLE: "double", BOOLEAN: "boolean"}[typ]
        return f"Invalid value {value} for configuration {name}: Expected value to be a {kind}"
    choices = _CHOICES.get(name)
    if choices:
        # an empty list is legal: Kafka 4's cleanup.policy="" keeps a topic's records (neither deleted nor compacted)
        items = ([] if not value.strip() else [v.strip() for v in value.split(",")]) if typ == LIST else [value]
        bad = [v for v in items if v not in choices]
        if bad:
            return f"Invalid value {value} for configuration {name}: String must be one of: {', '.join(sorted(choices))}"
    return None


def validate_topic_configs(configs) -> str | None:
    """The one check of a whole topic config map, wherever it comes from (CreateTopics, the
    control API, a data directory; AlterConfigs checks each change with ``validate_topic_config``
    and then the result): None when Kafka would accept it, else its INVALID_CONFIG message."""
    if not isinstance(configs, dict):
        return f"topic configs must be a map of names to values, got {configs!r}"
    for name, value in configs.items():
        if not isinstance(name, str) or not isinstance(value, str):
            return f"Invalid value {value!r} for configuration {name}: topic config values are strings"
        message = validate_topic_config(name, value)
        if message:
            return message
    low, high = int_config(configs, "min.compaction.lag.ms"), int_config(configs, "max.compaction.lag.ms")
    if low > high:   # LogConfig.validateValues
        return (f"conflict topic config setting min.compaction.lag.ms ({low}) > "
                f"max.compaction.lag.ms ({high})")
    return None


def topic_config_entries(configs: dict[str, str], broker_defaults: dict[str, str] | None = None):
    """(name, effective value, config_source, config_type) for every topic config, sorted by name
    (set on the topic, else the broker's default, else Kafka's)."""
    for name, (default, typ) in sorted(TOPIC_CONFIG_DEFAULTS.items()):
        if name in configs:
            yield name, configs[name], DYNAMIC_TOPIC_CONFIG, typ
        elif broker_defaults and name in broker_defaults:
            yield name, broker_defaults[name], STATIC_BROKER_CONFIG, typ
        else:
            yield name, default, DEFAULT_CONFIG, typ


def effective(configs: dict[str, str], name: str) -> str:
    value = configs.get(name)
    if value is None:
        return TOPIC_CONFIG_DEFAULTS.get(name, ("", STRING))[0]
    return value


def int_config(configs: dict[str, str], name: str) -> int:
    return int(effective(configs, name))


def is_compacted(configs: dict[str, str]) -> bool:
    return "compact" in effective(configs, "cleanup.policy").replace(" ", "").split(",")


def is_deleting(configs: dict[str, str]) -> bool:
    return "delete" in effective(configs, "cleanup.policy").replace(" ", "").split(",")


def log_append_time(configs: dict[str, str]) -> bool:
    return effective(configs, "message.timestamp.type") == "LogAppendTime"


def timestamp_bounds(configs: dict[str, str]) -> tuple[int, int]:
    """(before, after) max ms a CreateTime record may lie from the append time, as Kafka's
    LogConfig: message.timestamp.before/after.max.ms."""
    return int_config(configs, "message.timestamp.before.max.ms"), int_config(configs, "message.timestamp.after.max.ms")


def target_codec(configs: dict[str, str], source: int) -> int:
    """The codec a batch is stored in: the topic's compression.type, or the producer's (``producer``)."""
    return _CODECS.get(effective(configs, "compression.type"), source)
