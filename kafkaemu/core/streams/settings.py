"""Streams groups' (KIP-1071) broker settings (group.streams.*), as Kafka 4.4's
GroupCoordinatorConfig declares them and checks them at start (``CHECKS``). The group configs
streams.* default to them, within their min/max settings (core/group_configs.py)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..settings import INT32_MAX, INT64_MAX, bounded, setting


@dataclass
class StreamsSettings:
    """Streams groups' settings, each with its Kafka name (``group.streams.*``)."""
    session_timeout_ms: int = setting(45000, "group.streams.session.timeout.ms",
                                      "session timeout of streams group members", min=1)
    min_session_timeout_ms: int = setting(45000, "group.streams.min.session.timeout.ms",
                                          "smallest streams.session.timeout.ms a group may set", min=1)
    max_session_timeout_ms: int = setting(60000, "group.streams.max.session.timeout.ms",
                                          "largest streams.session.timeout.ms a group may set", min=1)
    heartbeat_interval_ms: int = setting(5000, "group.streams.heartbeat.interval.ms",
                                         "heartbeat interval given to streams members", min=1)
    min_heartbeat_interval_ms: int = setting(5000, "group.streams.min.heartbeat.interval.ms",
                                             "smallest streams.heartbeat.interval.ms a group may set", min=1)
    max_heartbeat_interval_ms: int = setting(15000, "group.streams.max.heartbeat.interval.ms",
                                             "largest streams.heartbeat.interval.ms a group may set", min=1)
    num_standby_replicas: int = setting(0, "group.streams.num.standby.replicas", "standby replicas of a stateful task",
                                        min=0)
    max_standby_replicas: int = setting(2, "group.streams.max.standby.replicas",
                                        "largest streams.num.standby.replicas a group may set", min=0)
    max_size: int = setting(INT32_MAX, "group.streams.max.size", "most members of a streams group", min=1)
    # accepted and reported; kafkaemu's streams assignor does not use them
    initial_rebalance_delay_ms: int = setting(3000, "group.streams.initial.rebalance.delay.ms",
                                              "how long a new streams group waits for more members", min=0,
                                              flag=False)
    num_warmup_replicas: int = setting(2, "group.streams.num.warmup.replicas", "warm-up replicas of a task", min=0,
                                       flag=False)
    max_warmup_replicas: int = setting(20, "group.streams.max.warmup.replicas",
                                       "largest streams.num.warmup.replicas a group may set", min=0, flag=False)
    acceptable_recovery_lag: int = setting(10000, "group.streams.acceptable.recovery.lag",
                                           "the lag under which a client counts as caught up", min=0, max=INT64_MAX,
                                           flag=False)
    task_offset_interval_ms: int = setting(60000, "group.streams.task.offset.interval.ms",
                                           "how often clients report their warm-up tasks' offsets", min=1, flag=False)
    min_task_offset_interval_ms: int = setting(15000, "group.streams.min.task.offset.interval.ms",
                                               "smallest streams.task.offset.interval.ms a group may set", min=1,
                                               flag=False)
    assignors: tuple[str, ...] = setting(("sticky",), "group.streams.assignors", "the streams assignors",
                                         metavar="LIST", flag=False)
    rack_aware_assignment_tags: tuple[str, ...] = setting((), "group.streams.rack.aware.assignment.tags",
                                                          "client tags rack-aware assignment uses", metavar="LIST",
                                                          flag=False)
    topology_description_plugin_class: str | None = setting(None, "group.streams.topology.description.plugin.class",
                                                             "a plugin describing topologies", flag=False)
    assignment_interval_ms: int = setting(1000, "group.streams.assignment.interval.ms",
                                          "the interval between assignment updates", min=0, flag=False)
    min_assignment_interval_ms: int = setting(0, "group.streams.min.assignment.interval.ms",
                                              "smallest streams.assignment.interval.ms", min=0, flag=False)
    max_assignment_interval_ms: int = setting(15000, "group.streams.max.assignment.interval.ms",
                                              "largest streams.assignment.interval.ms", min=0, flag=False)
    assignor_offload_enable: bool = setting(True, "group.streams.assignor.offload.enable",
                                            "assign on a background thread", flag=False)

    # in the order of GroupCoordinatorConfig's require()s
    CHECKS: ClassVar[tuple] = (*bounded("heartbeat_interval_ms"), *bounded("session_timeout_ms"),
                               ("num_standby_replicas", "<=", "max_standby_replicas"),
                               ("heartbeat_interval_ms", "<", "session_timeout_ms"),
                               ("num_warmup_replicas", "<=", "max_warmup_replicas"),
                               ("task_offset_interval_ms", ">=", "min_task_offset_interval_ms"),
                               *bounded("assignment_interval_ms"))
