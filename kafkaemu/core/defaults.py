"""The defaults of the coordinators' settings, as Kafka 4.3's GroupCoordinatorConfig and
TransactionStateManagerConfig declare theirs (``*_DEFAULT`` constants): the settings classes
(``core/settings.py``) and ``BrokerConfig`` both take them from here, so reading a configuration
creates none of the settings classes (they come with the coordinators that use them)."""

INT32_MAX = 2**31 - 1

# classic groups and committed offsets (group.*, offsets.*)
OFFSETS_TOPIC_NUM_PARTITIONS = 50
GROUP_MIN_SESSION_TIMEOUT_MS = 6000
GROUP_MAX_SESSION_TIMEOUT_MS = 1800000
GROUP_INITIAL_REBALANCE_DELAY_MS = 150  # Kafka's is 3000 (docs/groups.md)
GROUP_MAX_SIZE = INT32_MAX
NEW_MEMBER_JOIN_TIMEOUT_MS = 5 * 60 * 1000  # a constant in Kafka, not a setting
OFFSET_METADATA_MAX_BYTES = 4096
OFFSETS_RETENTION_MS = 7 * 24 * 60 * 60 * 1000
OFFSETS_RETENTION_CHECK_INTERVAL_MS = 600000

# KIP-848 consumer groups (group.consumer.*)
CONSUMER_SESSION_TIMEOUT_MS = 45000
CONSUMER_HEARTBEAT_INTERVAL_MS = 5000
CONSUMER_MAX_SIZE = INT32_MAX
CONSUMER_ASSIGNORS = ("uniform", "range")
# online migration between classic and consumer groups: bidirectional, upgrade, downgrade, disabled
CONSUMER_MIGRATION_POLICY = "bidirectional"
# how old a regex subscription's resolution may grow before a heartbeat resolves it again
# (matters while authorization is on: regex_resolution.py)
CONSUMER_REGEX_REFRESH_INTERVAL_MS = 10 * 60 * 1000

# share groups, KIP-932 (group.share.*)
SHARE_SESSION_TIMEOUT_MS = 45000
SHARE_HEARTBEAT_INTERVAL_MS = 5000
SHARE_MAX_SIZE = 200
SHARE_RECORD_LOCK_DURATION_MS = 30000
SHARE_DELIVERY_COUNT_LIMIT = 5
SHARE_PARTITION_MAX_RECORD_LOCKS = 2000
SHARE_AUTO_OFFSET_RESET = "latest"
SHARE_ISOLATION_LEVEL = "read_uncommitted"

# streams groups, KIP-1071 (group.streams.*)
STREAMS_SESSION_TIMEOUT_MS = 45000
STREAMS_HEARTBEAT_INTERVAL_MS = 5000
STREAMS_NUM_STANDBY_REPLICAS = 0
STREAMS_MAX_SIZE = INT32_MAX
# Kafka 4.4's internal group.streams.task.offset.interval.ms and group.streams.acceptable.recovery.lag,
# answered in every heartbeat (the lag from v1, as an int64)
STREAMS_TASK_OFFSET_INTERVAL_MS = 60000
STREAMS_ACCEPTABLE_RECOVERY_LAG = 10000
# the bounds of the group configs streams.session.timeout.ms, streams.heartbeat.interval.ms and
# streams.num.standby.replicas (group.streams.min.* / max.*)
STREAMS_MIN_SESSION_TIMEOUT_MS = 45000
STREAMS_MAX_SESSION_TIMEOUT_MS = 60000
STREAMS_MIN_HEARTBEAT_INTERVAL_MS = 5000
STREAMS_MAX_HEARTBEAT_INTERVAL_MS = 15000
STREAMS_MAX_STANDBY_REPLICAS = 2

# the transaction coordinator (transaction.*, transactional.id.*)
TRANSACTION_STATE_LOG_NUM_PARTITIONS = 50
TRANSACTION_MAX_TIMEOUT_MS = 900000
TRANSACTIONAL_ID_EXPIRATION_MS = 604800000
TRANSACTION_ABORT_TIMED_OUT_INTERVAL_MS = 10000
TRANSACTION_REMOVE_EXPIRED_INTERVAL_MS = 3600000
TRANSACTION_PARTITION_VERIFICATION_ENABLE = True
# the finalized transaction.version feature: 2 (a new Kafka 4.x cluster) offers transactions V2
TRANSACTION_VERSION = 2
