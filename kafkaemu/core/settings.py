"""The group coordinator's settings: its part of BrokerConfig (whose defaults these are)."""
from __future__ import annotations

from dataclasses import dataclass

from ..config import DEFAULTS


@dataclass(frozen=True)
class ConsumerSettings:
    """The KIP-848 consumer group settings (group.consumer.*)."""
    session_timeout_ms: int = DEFAULTS.group_consumer_session_timeout_ms
    heartbeat_interval_ms: int = DEFAULTS.group_consumer_heartbeat_interval_ms
    max_size: int = DEFAULTS.group_consumer_max_size
    assignors: tuple[str, ...] = DEFAULTS.group_consumer_assignors

    @classmethod
    def from_config(cls, config) -> "ConsumerSettings":
        return cls(
            session_timeout_ms=config.group_consumer_session_timeout_ms,
            heartbeat_interval_ms=config.group_consumer_heartbeat_interval_ms,
            max_size=config.group_consumer_max_size,
            assignors=tuple(config.group_consumer_assignors),
        )


@dataclass(frozen=True)
class CoordinatorSettings:
    offsets_topic_num_partitions: int = DEFAULTS.offsets_topic_num_partitions
    min_session_timeout_ms: int = DEFAULTS.group_min_session_timeout_ms
    max_session_timeout_ms: int = DEFAULTS.group_max_session_timeout_ms
    initial_rebalance_delay_ms: int = DEFAULTS.group_initial_rebalance_delay_ms
    max_group_size: int = DEFAULTS.group_max_size
    new_member_join_timeout_ms: int = 5 * 60 * 1000  # a constant in Kafka, not a setting
    offset_metadata_max_bytes: int = DEFAULTS.offset_metadata_max_bytes
    offsets_retention_ms: int = DEFAULTS.offsets_retention_minutes * 60 * 1000
    offsets_retention_check_interval_ms: int = DEFAULTS.offsets_retention_check_interval_ms
    consumer: ConsumerSettings = ConsumerSettings()

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
        )


@dataclass(frozen=True)
class TransactionSettings:
    """The transaction coordinator's settings (transaction.*, transactional.id.*)."""
    state_log_num_partitions: int = DEFAULTS.transaction_state_log_num_partitions
    max_timeout_ms: int = DEFAULTS.transaction_max_timeout_ms
    transactional_id_expiration_ms: int = DEFAULTS.transactional_id_expiration_ms
    abort_timed_out_transactions_interval_ms: int = DEFAULTS.transaction_abort_timed_out_transaction_cleanup_interval_ms
    remove_expired_transactional_ids_interval_ms: int = \
        DEFAULTS.transaction_remove_expired_transaction_cleanup_interval_ms
    partition_verification_enable: bool = DEFAULTS.transaction_partition_verification_enable

    @classmethod
    def from_config(cls, config) -> "TransactionSettings":
        return cls(
            state_log_num_partitions=config.transaction_state_log_num_partitions,
            max_timeout_ms=config.transaction_max_timeout_ms,
            transactional_id_expiration_ms=config.transactional_id_expiration_ms,
            abort_timed_out_transactions_interval_ms=config.transaction_abort_timed_out_transaction_cleanup_interval_ms,
            remove_expired_transactional_ids_interval_ms=config.transaction_remove_expired_transaction_cleanup_interval_ms,
            partition_verification_enable=config.transaction_partition_verification_enable,
        )
