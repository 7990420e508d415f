"""Share groups' (KIP-932) broker settings (group.share.*), as Kafka 4.4's GroupCoordinatorConfig
and ShareGroupConfig declare them and check them at start (``CHECKS``). The group configs share.*
default to them, within their min/max settings (core/group_configs.py)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..settings import bounded, setting


def _within(name: str) -> tuple[tuple[str, str, str], ...]:
    """ShareGroupConfig's checks of a setting with min/max settings, in its words."""
    return ((name, ">=", f"min_{name}"), (f"max_{name}", ">=", name))


@dataclass
class ShareSettings:
    """Share groups' settings, each with its Kafka name (``group.share.*``)."""
    session_timeout_ms: int = setting(45000, "group.share.session.timeout.ms",
                                      "session timeout of share group members", min=1)
    min_session_timeout_ms: int = setting(45000, "group.share.min.session.timeout.ms",
                                          "smallest share.session.timeout.ms a group may set", min=1)
    max_session_timeout_ms: int = setting(60000, "group.share.max.session.timeout.ms",
                                          "largest share.session.timeout.ms a group may set", min=1)
    heartbeat_interval_ms: int = setting(5000, "group.share.heartbeat.interval.ms",
                                         "heartbeat interval given to share group members", min=1)
    min_heartbeat_interval_ms: int = setting(5000, "group.share.min.heartbeat.interval.ms",
                                             "smallest share.heartbeat.interval.ms a group may set", min=1)
    max_heartbeat_interval_ms: int = setting(15000, "group.share.max.heartbeat.interval.ms",
                                             "largest share.heartbeat.interval.ms a group may set", min=1)
    max_size: int = setting(200, "group.share.max.size", "most members of a share group", min=1, max=1000)
    record_lock_duration_ms: int = setting(30000, "group.share.record.lock.duration.ms",
                                           "how long a share consumer holds the records it acquired", min=1000,
                                           max=3600000)
    min_record_lock_duration_ms: int = setting(15000, "group.share.min.record.lock.duration.ms",
                                               "smallest share.record.lock.duration.ms a group may set", min=1000,
                                               max=30000)
    max_record_lock_duration_ms: int = setting(60000, "group.share.max.record.lock.duration.ms",
                                               "largest share.record.lock.duration.ms a group may set", min=30000,
                                               max=3600000)
    delivery_count_limit: int = setting(5, "group.share.delivery.count.limit",
                                        "deliveries of a record before it is archived", min=2, max=10)
    min_delivery_count_limit: int = setting(2, "group.share.min.delivery.count.limit",
                                            "smallest share.delivery.count.limit a group may set", min=2, max=5)
    max_delivery_count_limit: int = setting(10, "group.share.max.delivery.count.limit",
                                            "largest share.delivery.count.limit a group may set", min=5, max=25)
    partition_max_record_locks: int = setting(2000, "group.share.partition.max.record.locks",
                                              "most records of a share partition acquired at once", min=100,
                                              max=10000)
    min_partition_max_record_locks: int = setting(100, "group.share.min.partition.max.record.locks",
                                                  "smallest share.partition.max.record.locks a group may set",
                                                  min=100, max=2000)
    max_partition_max_record_locks: int = setting(4000, "group.share.max.partition.max.record.locks",
                                                  "largest share.partition.max.record.locks a group may set",
                                                  min=2000, max=10000)
    # accepted and reported; kafkaemu has one assignor, assigns in the heartbeat, keeps share state itself
    max_share_sessions: int = setting(2000, "group.share.max.share.sessions", "share sessions a broker keeps",
                                      min=1, flag=False)
    assignors: tuple[str, ...] = setting(("simple",), "group.share.assignors", "the share assignor", metavar="LIST",
                                         flag=False)
    assignment_interval_ms: int = setting(1000, "group.share.assignment.interval.ms",
                                          "the interval between assignment updates", min=0, flag=False)
    min_assignment_interval_ms: int = setting(0, "group.share.min.assignment.interval.ms",
                                              "smallest share.assignment.interval.ms", min=0, flag=False)
    max_assignment_interval_ms: int = setting(15000, "group.share.max.assignment.interval.ms",
                                              "largest share.assignment.interval.ms", min=0, flag=False)
    assignor_offload_enable: bool = setting(True, "group.share.assignor.offload.enable",
                                            "assign on a background thread", flag=False)
    initialize_retry_interval_ms: int = setting(30000, "group.share.initialize.retry.interval.ms",
                                                "how soon initializing share state is tried again", min=1, flag=False)
    persister_class_name: str = setting("org.apache.kafka.server.share.persister.DefaultStatePersister",
                                        "group.share.persister.class.name", "the share state persister",
                                        metavar="CLASS", flag=False)
    dlq_manager_class_name: str = setting("org.apache.kafka.server.share.dlq.DefaultShareGroupDLQManager",
                                          "group.share.dlq.manager.class.name", "the dead-letter queue manager",
                                          metavar="CLASS", flag=False)

    CHECKS: ClassVar[tuple] = (*bounded("heartbeat_interval_ms"), *bounded("session_timeout_ms"),
                               ("heartbeat_interval_ms", "<", "session_timeout_ms"),
                               *bounded("assignment_interval_ms"),
                               *_within("record_lock_duration_ms"), *_within("delivery_count_limit"),
                               *_within("partition_max_record_locks"))
