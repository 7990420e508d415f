"""The streams group coordinator's broker settings (Kafka 4.3's group.streams.*, from its
GroupCoordinatorConfig) as a dataclass BrokerConfig extends, and the checks Kafka's
GroupCoordinatorConfig makes of them at start: each minimum not above its maximum, the session
timeout and the heartbeat interval within theirs, the standby replicas not above their maximum, the
heartbeat interval below the session timeout. The defaults are the core's (core/defaults.py)."""
from __future__ import annotations

from dataclasses import dataclass, field

from .core import defaults
from .core.defaults import INT32_MAX


def _setting(default: int, help: str, kafka: str, min: int):
    """An integer BrokerConfig field (the metadata ``config.setting`` gives one)."""
    return field(default=default, metadata={"help": help, "kafka": kafka, "flag": None, "metavar": None,
                                            "min": min, "max": INT32_MAX})


@dataclass
class StreamsGroupConfig:
    group_streams_session_timeout_ms: int = _setting(
        defaults.STREAMS_SESSION_TIMEOUT_MS, "session timeout of streams group members",
        "group.streams.session.timeout.ms", 1)
    group_streams_min_session_timeout_ms: int = _setting(
        defaults.STREAMS_MIN_SESSION_TIMEOUT_MS, "smallest streams.session.timeout.ms a group may set",
        "group.streams.min.session.timeout.ms", 1)
    group_streams_max_session_timeout_ms: int = _setting(
        defaults.STREAMS_MAX_SESSION_TIMEOUT_MS, "largest streams.session.timeout.ms a group may set",
        "group.streams.max.session.timeout.ms", 1)
    group_streams_heartbeat_interval_ms: int = _setting(
        defaults.STREAMS_HEARTBEAT_INTERVAL_MS, "heartbeat interval given to streams members",
        "group.streams.heartbeat.interval.ms", 1)
    group_streams_min_heartbeat_interval_ms: int = _setting(
        defaults.STREAMS_MIN_HEARTBEAT_INTERVAL_MS, "smallest streams.heartbeat.interval.ms a group may set",
        "group.streams.min.heartbeat.interval.ms", 1)
    group_streams_max_heartbeat_interval_ms: int = _setting(
        defaults.STREAMS_MAX_HEARTBEAT_INTERVAL_MS, "largest streams.heartbeat.interval.ms a group may set",
        "group.streams.max.heartbeat.interval.ms", 1)
    group_streams_num_standby_replicas: int = _setting(
        defaults.STREAMS_NUM_STANDBY_REPLICAS, "standby replicas of a stateful task",
        "group.streams.num.standby.replicas", 0)
    group_streams_max_standby_replicas: int = _setting(
        defaults.STREAMS_MAX_STANDBY_REPLICAS, "largest streams.num.standby.replicas a group may set",
        "group.streams.max.standby.replicas", 0)
    group_streams_max_size: int = _setting(
        defaults.STREAMS_MAX_SIZE, "most members of a streams group", "group.streams.max.size", 1)


# (setting, relation, other setting), in the order of GroupCoordinatorConfig's require()s
_CHECKS = (
    ("max_heartbeat_interval_ms", ">=", "min_heartbeat_interval_ms"),
    ("heartbeat_interval_ms", ">=", "min_heartbeat_interval_ms"),
    ("heartbeat_interval_ms", "<=", "max_heartbeat_interval_ms"),
    ("max_session_timeout_ms", ">=", "min_session_timeout_ms"),
    ("session_timeout_ms", ">=", "min_session_timeout_ms"),
    ("session_timeout_ms", "<=", "max_session_timeout_ms"),
    ("num_standby_replicas", "<=", "max_standby_replicas"),
    ("heartbeat_interval_ms", "<", "session_timeout_ms"),
)
_WORDS = {">=": "greater than or equal to", "<=": "less than or equal to", "<": "less than"}


def streams_problems(config: StreamsGroupConfig, name) -> list[str]:
    """What GroupCoordinatorConfig would refuse, in its words; ``name(field)`` labels a setting."""
    problems = []
    for a, relation, b in _CHECKS:
        x, y = getattr(config, "group_streams_" + a), getattr(config, "group_streams_" + b)
        if not (x >= y if relation == ">=" else x <= y if relation == "<=" else x < y):
            problems.append(f"{name('group_streams_' + a)} {x} must be {_WORDS[relation]} "
                            f"{name('group_streams_' + b)} {y}")
    return problems
