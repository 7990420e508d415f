"""The coordinators' settings with their defaults, as Kafka's GroupCoordinatorConfig and
TransactionStateManagerConfig hold theirs: ``BrokerConfig`` takes the defaults of these settings from
here, and the broker passes the configured values in (``from_config`` reads them by name). The core
imports nothing from ``kafkaemu.config``."""
from __future__ import annotations

from dataclasses import dataclass

INT32_MAX = 2**31 - 1


@dataclass(frozen=True)
class ConsumerSettings:
    """The KIP-848 consumer group settings (group.consumer.*)."""
    session_timeout_ms: int = 45000
    heartbeat_interval_ms: int = 5000
    max_size: int = INT32_MAX
    assignors: tuple[str, ...] = ("uniform", "range")
    # online migration between classic and consumer groups: bidirectional, upgrade, downgrade, disabled
    migration_policy: str = "bidirectional"
    # how old a regex subscription's resolution may grow before a heartbeat resolves it again
    # (matters while authorization is on: regex_resolution.py)
    regex_refresh_interval_ms: int = 10 * 60 * 1000

    @property
    def upgrade_enabled(self) -> bool:
        return self.migration_policy in ("bidirectional", "upgrade")

    @property
    def downgrade_enabled(self) -> bool:
        return self.migration_policy in ("bidirectional", "downgrade")

    @classmethod
    def from_config(cls, config) -> "ConsumerSettings":
        return cls(
            session_timeout_ms=config.group_consumer_session_timeout_ms,
            heartbeat_interval_ms=config.group_consumer_heartbeat_interval_ms,
            max_size=config.group_consumer_max_size,
            assignors=tuple(config.group_consumer_assignors),
            migration_policy=config.group_consumer_migration_policy,
            regex_refresh_interval_ms=config.group_consumer_regex_refresh_interval_ms,
        )


@dataclass(frozen=True)
class ShareSettings:
    """Share group (KIP-932) settings, Kafka 4.3's broker defaults (group.share.*); the group configs
    share.* default to them."""
    session_timeout_ms: int = 45000
    heartbeat_interval_ms: int = 5000
    max_size: int = 200
    record_lock_duration_ms: int = 30000
    delivery_count_limit: int = 5
    partition_max_record_locks: int = 2000
    auto_offset_reset: str = "latest"
    isolation_level: str = "read_uncommitted"


@dataclass(frozen=True)
class StreamsSettings:
    """Streams group (KIP-1071) settings, Kafka 4.3's broker defaults (group.streams.*); the group
    configs streams.* default to them."""
    session_timeout_ms: int = 45000
    heartbeat_interval_ms: int = 5000
    num_standby_replicas: int = 0
    max_size: int = INT32_MAX
    # the bounds of the group configs streams.session.timeout.ms, streams.heartbeat.interval.ms and
    # streams.num.standby.replicas (group.streams.min.* / max.*)
    min_session_timeout_ms: int = 45000
    max_session_timeout_ms: int = 60000
    min_heartbeat_interval_ms: int = 5000
    max_heartbeat_interval_ms: int = 15000
    max_standby_replicas: int = 2

    @classmethod
    def from_config(cls, config) -> "StreamsSettings":
        return cls(**{f: getattr(config, "group_streams_" + f) for f in cls.__dataclass_fields__})


@dataclass(frozen=True)
class CoordinatorSettings:
    offsets_topic_num_partitions: int = 50
    min_session_timeout_ms: int = 6000
    max_session_timeout_ms: int = 1800000
    initial_rebalance_delay_ms: int = 150  # Kafka's is 3000 (docs/groups.md)
    max_group_size: int = INT32_MAX
    new_member_join_timeout_ms: int = 5 * 60 * 1000  # a constant in Kafka, not a setting
    offset_metadata_max_bytes: int = 4096
    offsets_retention_ms: int = 7 * 24 * 60 * 60 * 1000
    offsets_retention_check_interval_ms: int = 600000
    consumer: ConsumerSettings = ConsumerSettings()
    share: ShareSettings = ShareSettings()
    streams: StreamsSettings = StreamsSettings()

    @classmethod
    def from_config(cls, config) -> "CoordinatorSettings":
        return cls(
            offsets_topic_num_partitions=config.offsets_topic_num_partitions,
            min_session_timeout_ms=config.group_min_session_timeout_ms,
            max_session_timeout_ms=config.group_max_session_timeout_ms,
            initial_rebalance_delay_ms=config.group_initial_rebalance_delay_ms,
            max_group_size=config.group_max_size,
            offset_metadata_max_bytes=config.offset_metadata_max_bytes,
            offsets_retention_ms=config.offsets_retention_minutes * 60 * 1000,
            offsets_retention_check_interval_ms=config.offsets_retention_check_interval_ms,
            consumer=ConsumerSettings.from_config(config),
            streams=StreamsSettings.from_config(config),
        )


@dataclass(frozen=True)
class TransactionSettings:
    """The transaction coordinator's settings (transaction.*, transactional.id.*)."""
    state_log_num_partitions: int = 50
    max_timeout_ms: int = 900000
    transactional_id_expiration_ms: int = 604800000
    abort_timed_out_transactions_interval_ms: int = 10000
    remove_expired_transactional_ids_interval_ms: int = 3600000
    partition_verification_enable: bool = True
    # the finalized transaction.version feature: 2 (a new Kafka 4.x cluster) offers transactions V2
    transaction_version: int = 2

    @classmethod
    def from_config(cls, config) -> "TransactionSettings":
        return cls(
            state_log_num_partitions=config.transaction_state_log_num_partitions,
            max_timeout_ms=config.transaction_max_timeout_ms,
            transactional_id_expiration_ms=config.transactional_id_expiration_ms,
            abort_timed_out_transactions_interval_ms=config.transaction_abort_timed_out_transaction_cleanup_interval_ms,
            remove_expired_transactional_ids_interval_ms=config.transaction_remove_expired_transaction_cleanup_interval_ms,
            partition_verification_enable=config.transaction_partition_verification_enable,
            transaction_version=config.transaction_version,
        )
