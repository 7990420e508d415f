"""The coordinators' settings, as Kafka's GroupCoordinatorConfig and TransactionStateManagerConfig
hold theirs, with the defaults of ``core/defaults.py`` (which ``BrokerConfig`` takes too): the broker
passes the configured values in (``from_config`` reads them by name) when it builds a coordinator. The
core imports nothing from ``kafkaemu.config``."""
from __future__ import annotations

from dataclasses import dataclass

from . import defaults


@dataclass(frozen=True)
class ConsumerSettings:
    """The KIP-848 consumer group settings (group.consumer.*)."""
    session_timeout_ms: int = defaults.CONSUMER_SESSION_TIMEOUT_MS
    heartbeat_interval_ms: int = defaults.CONSUMER_HEARTBEAT_INTERVAL_MS
    max_size: int = defaults.CONSUMER_MAX_SIZE
    assignors: tuple[str, ...] = defaults.CONSUMER_ASSIGNORS
    migration_policy: str = defaults.CONSUMER_MIGRATION_POLICY
    regex_refresh_interval_ms: int = defaults.CONSUMER_REGEX_REFRESH_INTERVAL_MS

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
    session_timeout_ms: int = defaults.SHARE_SESSION_TIMEOUT_MS
    heartbeat_interval_ms: int = defaults.SHARE_HEARTBEAT_INTERVAL_MS
    max_size: int = defaults.SHARE_MAX_SIZE
    record_lock_duration_ms: int = defaults.SHARE_RECORD_LOCK_DURATION_MS
    delivery_count_limit: int = defaults.SHARE_DELIVERY_COUNT_LIMIT
    partition_max_record_locks: int = defaults.SHARE_PARTITION_MAX_RECORD_LOCKS
    auto_offset_reset: str = defaults.SHARE_AUTO_OFFSET_RESET
    isolation_level: str = defaults.SHARE_ISOLATION_LEVEL


@dataclass(frozen=True)
class StreamsSettings:
    """Streams group (KIP-1071) settings, Kafka 4.3's broker defaults (group.streams.*); the group
    configs streams.* default to them."""
    session_timeout_ms: int = defaults.STREAMS_SESSION_TIMEOUT_MS
    heartbeat_interval_ms: int = defaults.STREAMS_HEARTBEAT_INTERVAL_MS
    num_standby_replicas: int = defaults.STREAMS_NUM_STANDBY_REPLICAS
    max_size: int = defaults.STREAMS_MAX_SIZE
    min_session_timeout_ms: int = defaults.STREAMS_MIN_SESSION_TIMEOUT_MS
    max_session_timeout_ms: int = defaults.STREAMS_MAX_SESSION_TIMEOUT_MS
    min_heartbeat_interval_ms: int = defaults.STREAMS_MIN_HEARTBEAT_INTERVAL_MS
    max_heartbeat_interval_ms: int = defaults.STREAMS_MAX_HEARTBEAT_INTERVAL_MS
    max_standby_replicas: int = defaults.STREAMS_MAX_STANDBY_REPLICAS

    @classmethod
    def from_config(cls, config) -> "StreamsSettings":
        return cls(**{f: getattr(config, "group_streams_" + f) for f in cls.__dataclass_fields__})


@dataclass(frozen=True)
class CoordinatorSettings:
    offsets_topic_num_partitions: int = defaults.OFFSETS_TOPIC_NUM_PARTITIONS
    min_session_timeout_ms: int = defaults.GROUP_MIN_SESSION_TIMEOUT_MS
    max_session_timeout_ms: int = defaults.GROUP_MAX_SESSION_TIMEOUT_MS
    initial_rebalance_delay_ms: int = defaults.GROUP_INITIAL_REBALANCE_DELAY_MS
    max_group_size: int = defaults.GROUP_MAX_SIZE
    new_member_join_timeout_ms: int = defaults.NEW_MEMBER_JOIN_TIMEOUT_MS
    offset_metadata_max_bytes: int = defaults.OFFSET_METADATA_MAX_BYTES
    offsets_retention_ms: int = defaults.OFFSETS_RETENTION_MS
    offsets_retention_check_interval_ms: int = defaults.OFFSETS_RETENTION_CHECK_INTERVAL_MS
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
    state_log_num_partitions: int = defaults.TRANSACTION_STATE_LOG_NUM_PARTITIONS
    max_timeout_ms: int = defaults.TRANSACTION_MAX_TIMEOUT_MS
    transactional_id_expiration_ms: int = defaults.TRANSACTIONAL_ID_EXPIRATION_MS
    abort_timed_out_transactions_interval_ms: int = defaults.TRANSACTION_ABORT_TIMED_OUT_INTERVAL_MS
    remove_expired_transactional_ids_interval_ms: int = defaults.TRANSACTION_REMOVE_EXPIRED_INTERVAL_MS
    partition_verification_enable: bool = defaults.TRANSACTION_PARTITION_VERIFICATION_ENABLE
    transaction_version: int = defaults.TRANSACTION_VERSION

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
