"""KIP-848 consumer groups' broker settings (group.consumer.*), as Kafka 4.4's
GroupCoordinatorConfig declares them and checks them at start (``CHECKS``)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..settings import INT32_MAX, bounded, setting

MIGRATION_POLICIES = ("bidirectional", "upgrade", "downgrade", "disabled")


@dataclass
class ConsumerSettings:
    """KIP-848 consumer groups' settings, each with its Kafka name (``group.consumer.*``)."""
    session_timeout_ms: int = setting(45000, "group.consumer.session.timeout.ms",
                                      "session timeout of KIP-848 consumer group members", min=1)
    min_session_timeout_ms: int = setting(45000, "group.consumer.min.session.timeout.ms",
                                          "smallest consumer.session.timeout.ms a group may set", min=1)
    max_session_timeout_ms: int = setting(60000, "group.consumer.max.session.timeout.ms",
                                          "largest consumer.session.timeout.ms a group may set", min=1)
    heartbeat_interval_ms: int = setting(5000, "group.consumer.heartbeat.interval.ms",
                                         "heartbeat interval given to KIP-848 members", min=1)
    min_heartbeat_interval_ms: int = setting(5000, "group.consumer.min.heartbeat.interval.ms",
                                             "smallest consumer.heartbeat.interval.ms a group may set", min=1)
    max_heartbeat_interval_ms: int = setting(15000, "group.consumer.max.heartbeat.interval.ms",
                                             "largest consumer.heartbeat.interval.ms a group may set", min=1)
    max_size: int = setting(INT32_MAX, "group.consumer.max.size", "most members of a KIP-848 consumer group", min=1)
    assignors: tuple[str, ...] = setting(("uniform", "range"), "group.consumer.assignors",
                                         "server-side assignors, the first is the default", metavar="LIST")
    migration_policy: str = setting(
        "bidirectional", "group.consumer.migration.policy",
        "online migration between classic and consumer groups: bidirectional, upgrade (classic to consumer only), "
        "downgrade or disabled", metavar="POLICY", choices=MIGRATION_POLICIES)
    regex_refresh_interval_ms: int = setting(
        10 * 60 * 1000, "group.consumer.regex.refresh.interval.ms",
        "how often a KIP-848 group's regex subscriptions are resolved again (with authorization on: ACL changes "
        "show then)", min=10000)
    # kafkaemu computes an assignment in the heartbeat that needs it: these are accepted and reported
    assignment_interval_ms: int = setting(1000, "group.consumer.assignment.interval.ms",
                                          "the interval between assignment updates", min=0, flag=False)
    min_assignment_interval_ms: int = setting(0, "group.consumer.min.assignment.interval.ms",
                                              "smallest consumer.assignment.interval.ms", min=0, flag=False)
    max_assignment_interval_ms: int = setting(15000, "group.consumer.max.assignment.interval.ms",
                                              "largest consumer.assignment.interval.ms", min=0, flag=False)
    assignor_offload_enable: bool = setting(True, "group.consumer.assignor.offload.enable",
                                            "assign on a background thread", flag=False)

    CHECKS: ClassVar[tuple] = (*bounded("heartbeat_interval_ms"), *bounded("session_timeout_ms"),
                               ("heartbeat_interval_ms", "<", "session_timeout_ms"),
                               *bounded("assignment_interval_ms"))

    @property
    def upgrade_enabled(self) -> bool:
        return self.migration_policy in ("bidirectional", "upgrade")

    @property
    def downgrade_enabled(self) -> bool:
        return self.migration_policy in ("bidirectional", "downgrade")
