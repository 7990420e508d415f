"""Broker configuration: every setting kafkaemu reads, held once with its default, its Kafka name,
its help text and its bounds. The coordinators' settings take their defaults from the core
(``core/defaults.py``, as Kafka's GroupCoordinatorConfig declares its own); the core never imports this.

Everything else is derived from the fields below: the ``kafkaemu serve`` flags (``--num-partitions``),
the ``--override NAME=VALUE`` names (Kafka's, e.g. ``num.partitions``), the values the broker passes
to the core's ``*Settings``, and ``KafkaEmulator``'s subprocess arguments (``to_argv``). ``validate()``
checks a whole configuration for the command line and for ``KafkaEmulator`` alike.
"""
from __future__ import annotations

import os
import socket
import typing
from dataclasses import InitVar, dataclass, field, fields

from .config_streams import StreamsGroupConfig, streams_problems
from .core import defaults
from .core.defaults import INT32_MAX
from .core.features import parse_levels

# broker settings that are the default of a topic config (Kafka's LogConfig synonyms)
TOPIC_DEFAULTS = {"log_retention_ms": "retention.ms", "log_retention_bytes": "retention.bytes",
                  "log_segment_bytes": "segment.bytes", "log_roll_ms": "segment.ms",
                  "log_cleanup_policy": "cleanup.policy", "log_cleaner_delete_retention_ms": "delete.retention.ms",
                  "log_index_interval_bytes": "index.interval.bytes"}
INT64_MAX = 2**63 - 1
# metric.reporters: Kafka's default reporter (nothing to emulate), and kafkaemu's client telemetry
# receiver, which plays a Kafka reporter implementing ClientTelemetry (KIP-714): with it the broker
# advertises GetTelemetrySubscriptions and PushTelemetry, as Kafka's DefaultApiVersionManager does
JMX_REPORTER = "org.apache.kafka.common.metrics.JmxReporter"
CLIENT_TELEMETRY_REPORTER = "kafkaemu.telemetry.ClientTelemetryReceiver"
METRIC_REPORTERS = (JMX_REPORTER, CLIENT_TELEMETRY_REPORTER)
WILDCARD_HOSTS = ("0.0.0.0", "::", "")


def setting(default, help: str, *, kafka: str | None = None, flag: str | None = None, metavar: str | None = None,
            min: int | None = None, max: int = INT32_MAX):
    """A BrokerConfig field. ``kafka``: the Kafka broker setting it is (and its ``--override`` name);
    ``flag``: the command-line flag when it is not ``--`` + the field name; ``min``/``max``: bounds of
    an integer (Kafka's INT settings stop at 2**31-1, its LONG ones take ``max=INT64_MAX``)."""
    meta = {"help": help, "kafka": kafka, "flag": flag, "metavar": metavar, "min": min, "max": max}
    if isinstance(default, dict):
        return field(default_factory=dict, metadata=meta)
    return field(default=default, metadata=meta)


@dataclass
class BrokerConfig(StreamsGroupConfig):
    """Every setting of a broker with its default (group.streams.*: StreamsGroupConfig); ``validate()`` checks them."""
    # -- listeners
    host: str = setting("127.0.0.1", "address to listen on")
    port: int = setting(9092, "port of the first node; 0 picks free ports", min=0, max=65535)
    advertised_host: str | None = setting(
        None, "host name given to clients in Metadata and FindCoordinator (default: --host; with a "
              "wildcard --host such as 0.0.0.0, this machine's host name)")
    node_id: int = setting(0, "id of the first node", kafka="node.id", min=0)
    nodes: int = setting(1, "emulate a cluster of N nodes listening on PORT, PORT+1, ... (free ports with --port 0)",
                         min=1, max=1024)
    cluster_id: str = setting("kafkaemu-cluster-0000", "cluster id given to clients")
    # -- topics and the log
    auto_create_topics: bool = setting(True, "don't create topics on first use, answer UNKNOWN_TOPIC_OR_PARTITION",
                                       kafka="auto.create.topics.enable")  # help says what the flag does
    num_partitions: int = setting(1, "partitions of auto-created topics", kafka="num.partitions", min=1)
    default_replication_factor: int = setting(1, "replication factor reported for topics created without one",
                                              kafka="default.replication.factor", min=1, max=32767)
    socket_request_max_bytes: int = setting(100 * 1024 * 1024, "largest request accepted",
                                            kafka="socket.request.max.bytes", min=1)
    message_max_bytes: int = setting(1048588, "largest record batch accepted", kafka="message.max.bytes", min=0)
    fetch_max_bytes: int = setting(57671680, "most bytes one Fetch response carries", kafka="fetch.max.bytes", min=0)
    max_uncompressed_batch_bytes: int = setting(
        32 * 1024 * 1024, "most bytes one record batch may decompress to (kafkaemu's own bound: a larger one "
                          "is refused with MESSAGE_TOO_LARGE, so a compression bomb costs at most this)", min=1)
    data_dir: str | None = setting(None, "keep logs and __consumer_offsets here across restarts (default: memory)",
                                   kafka="log.dir", metavar="DIR")
    data_dir_tail_cache_bytes: int = setting(
        64 * 1024 * 1024, "with a data dir, the most bytes of recent batches also kept in memory, over all "
                          "partitions (4 MiB each at most; older reads go to the files)", min=0)
    log_retention_check_interval_ms: int = setting(300000, "how often retention deletes old batches",
                                                   kafka="log.retention.check.interval.ms", min=1, max=INT64_MAX)
    log_cleaner_backoff_ms: int = setting(15000, "how often compacted topics are cleaned",
                                          kafka="log.cleaner.backoff.ms", min=0, max=INT64_MAX)
    # defaults of topics that do not set their own (TOPIC_DEFAULTS: the topic config each one is)
    log_retention_ms: int = setting(604800000, "topics' default retention.ms (-1: keep forever)",
                                    kafka="log.retention.ms", min=-1, max=INT64_MAX)
    log_retention_bytes: int = setting(-1, "topics' default retention.bytes, per partition (-1: no limit)",
                                       kafka="log.retention.bytes", min=-1, max=INT64_MAX)
    log_segment_bytes: int = setting(1073741824, "topics' default segment.bytes", kafka="log.segment.bytes", min=14)
    log_roll_ms: int = setting(604800000, "topics' default segment.ms", kafka="log.roll.ms", min=1, max=INT64_MAX)
    log_cleanup_policy: tuple[str, ...] = setting(("delete",), "topics' default cleanup.policy (delete, compact)",
                                                  kafka="log.cleanup.policy", metavar="LIST")
    log_cleaner_delete_retention_ms: int = setting(86400000, "topics' default delete.retention.ms",
                                                   kafka="log.cleaner.delete.retention.ms", min=0, max=INT64_MAX)
    log_index_interval_bytes: int = setting(4096, "topics' default index.interval.bytes",
                                            kafka="log.index.interval.bytes", min=0)
    # -- classic consumer groups and offsets (defaults: the group coordinator's, core/defaults.py)
    offsets_topic_num_partitions: int = setting(
        defaults.OFFSETS_TOPIC_NUM_PARTITIONS, "partitions of __consumer_offsets",
        kafka="offsets.topic.num.partitions", min=1)
    group_min_session_timeout_ms: int = setting(
        defaults.GROUP_MIN_SESSION_TIMEOUT_MS, "smallest session timeout a member may ask for",
        kafka="group.min.session.timeout.ms", min=0)
    group_max_session_timeout_ms: int = setting(
        defaults.GROUP_MAX_SESSION_TIMEOUT_MS, "largest session timeout a member may ask for",
        kafka="group.max.session.timeout.ms", min=0)
    group_initial_rebalance_delay_ms: int = setting(
        defaults.GROUP_INITIAL_REBALANCE_DELAY_MS, "how long an empty group waits for more members "
                                                   "(Kafka's default is 3000; see docs/groups.md)",
        kafka="group.initial.rebalance.delay.ms", min=0)
    group_max_size: int = setting(
        defaults.GROUP_MAX_SIZE, "most members of a classic group", kafka="group.max.size", min=1)
    offset_metadata_max_bytes: int = setting(
        defaults.OFFSET_METADATA_MAX_BYTES, "longest metadata of a committed offset",
        kafka="offset.metadata.max.bytes", min=0)
    offsets_retention_minutes: int = setting(
        defaults.OFFSETS_RETENTION_MS // 60000, "how long committed offsets of an empty group are kept",
        kafka="offsets.retention.minutes", min=1)
    offsets_retention_check_interval_ms: int = setting(
        defaults.OFFSETS_RETENTION_CHECK_INTERVAL_MS, "how often expired offsets are removed",
        kafka="offsets.retention.check.interval.ms", min=1, max=INT64_MAX)
    # -- consumer groups of the KIP-848 protocol
    group_consumer_session_timeout_ms: int = setting(
        defaults.CONSUMER_SESSION_TIMEOUT_MS, "session timeout of KIP-848 consumer group members",
        kafka="group.consumer.session.timeout.ms", min=1)
    group_consumer_heartbeat_interval_ms: int = setting(
        defaults.CONSUMER_HEARTBEAT_INTERVAL_MS, "heartbeat interval given to KIP-848 members",
        kafka="group.consumer.heartbeat.interval.ms", min=1)
    group_consumer_max_size: int = setting(
        defaults.CONSUMER_MAX_SIZE, "most members of a KIP-848 consumer group", kafka="group.consumer.max.size", min=1)
    group_consumer_assignors: tuple[str, ...] = setting(
        defaults.CONSUMER_ASSIGNORS, "server-side assignors, the first is the default",
        kafka="group.consumer.assignors", metavar="LIST")
    group_consumer_migration_policy: str = setting(
        defaults.CONSUMER_MIGRATION_POLICY, "online migration between classic and consumer groups: bidirectional, "
                                            "upgrade (classic to consumer only), downgrade or disabled",
        kafka="group.consumer.migration.policy", metavar="POLICY")
    group_consumer_regex_refresh_interval_ms: int = setting(
        defaults.CONSUMER_REGEX_REFRESH_INTERVAL_MS, "how often a KIP-848 group's regex subscriptions are "
                                                     "resolved again (with authorization on: ACL changes show then)",
        kafka="group.consumer.regex.refresh.interval.ms", min=10000)
    # -- transactions (defaults: the transaction coordinator's, core/defaults.py)
    transaction_state_log_num_partitions: int = setting(
        defaults.TRANSACTION_STATE_LOG_NUM_PARTITIONS, "partitions of __transaction_state",
        kafka="transaction.state.log.num.partitions", min=1)
    transaction_max_timeout_ms: int = setting(
        defaults.TRANSACTION_MAX_TIMEOUT_MS, "largest transaction timeout a producer may ask for",
        kafka="transaction.max.timeout.ms", min=1)
    transactional_id_expiration_ms: int = setting(
        defaults.TRANSACTIONAL_ID_EXPIRATION_MS, "how long a transactional id without transactions is kept",
        kafka="transactional.id.expiration.ms", min=1)
    transaction_abort_timed_out_transaction_cleanup_interval_ms: int = setting(
        defaults.TRANSACTION_ABORT_TIMED_OUT_INTERVAL_MS, "how often transactions open past their timeout are aborted",
        kafka="transaction.abort.timed.out.transaction.cleanup.interval.ms", min=1)
    transaction_remove_expired_transaction_cleanup_interval_ms: int = setting(
        defaults.TRANSACTION_REMOVE_EXPIRED_INTERVAL_MS, "how often expired transactional ids are removed",
        kafka="transaction.remove.expired.transaction.cleanup.interval.ms", min=1)
    finalized_features: tuple[str, ...] = setting(
        (), "finalize features at these levels instead of a new Kafka 4.3 cluster's, as kafka-storage format "
            "--feature does (e.g. transaction.version=1 for Transactions V1)", flag="--feature",
        metavar="NAME=LEVEL,...")
    transaction_partition_verification_enable: bool = setting(
        defaults.TRANSACTION_PARTITION_VERIFICATION_ENABLE,
        "don't check that a transactional produce or offset commit goes to a partition of the transaction (KIP-890)",
        kafka="transaction.partition.verification.enable")
    transaction_version: int = setting(
        defaults.TRANSACTION_VERSION, "the finalized transaction.version feature: 2 (a new Kafka 4.x cluster) lets "
                                      "clients use transactions V2 (KIP-890 part 2: an epoch bump per transaction, "
                                      "partitions added by the produce itself); 0 or 1 keeps them on V1", min=0, max=2)
    # -- security, off by default: SASL when users or mechanisms are given, TLS when a certificate is
    sasl_users: dict[str, str] = setting({}, "enable SASL and add a user (repeatable)", flag="--sasl-user",
                                         metavar="NAME:PASSWORD")
    sasl_mechanisms: tuple[str, ...] = setting((), "SASL mechanisms to enable (default with users: "
                                                   "PLAIN,SCRAM-SHA-256,SCRAM-SHA-512)",
                                               kafka="sasl.enabled.mechanisms", metavar="LIST")
    tls_cert: str | None = setting(None, "serve TLS with this PEM certificate chain", metavar="FILE")
    tls_key: str | None = setting(None, "PEM private key for --tls-cert (default: read from the certificate file)",
                                  metavar="FILE")
    tls_key_password: str | None = setting(None, "password of an encrypted --tls-key", kafka="ssl.key.password")
    tls_client_auth: str = setting("none", "ask TLS clients for a certificate: none, requested or required (its "
                                           "subject becomes the principal)", kafka="ssl.client.auth")
    tls_ca: str | None = setting(None, "PEM CA certificates that client certificates are checked against",
                                 kafka="ssl.truststore.location", metavar="FILE")
    ssl_principal_mapping_rules: str = setting("DEFAULT", "how a client certificate's subject becomes a principal "
                                                          "name (Kafka's rules)",
                                               kafka="ssl.principal.mapping.rules", metavar="RULES")
    connections_max_idle_ms: int = setting(600000, "close connections idle this long (negative: never)",
                                           kafka="connections.max.idle.ms", min=-1, max=INT64_MAX)
    quota_window_num: int = setting(11, "samples a client quota's rate is measured over",
                                    kafka="quota.window.num", min=1, max=2 ** 31 - 1)
    quota_window_size_seconds: int = setting(1, "time span of each client quota sample",
                                             kafka="quota.window.size.seconds", min=1, max=2 ** 31 - 1)
    metric_reporters: tuple[str, ...] = setting(
        (JMX_REPORTER,), "metrics reporter classes, as Kafka's: naming "
        f"{CLIENT_TELEMETRY_REPORTER} (kafkaemu's client telemetry receiver, like a Kafka reporter implementing "
        "ClientTelemetry) turns client telemetry on and advertises GetTelemetrySubscriptions and PushTelemetry",
        kafka="metric.reporters", metavar="LIST")
    telemetry_max_bytes: int = setting(1048576, "the largest client telemetry push accepted (KIP-714)",
                                       kafka="telemetry.max.bytes", min=1, max=2 ** 31 - 1)
    connection_failed_authentication_delay_ms: int = setting(
        100, "delay before closing a connection that failed to authenticate (clients read the error first)",
        kafka="connection.failed.authentication.delay.ms", min=0)
    delegation_token_secret_key: str | None = setting(
        None, "enable delegation tokens, signed with this secret", kafka="delegation.token.secret.key",
        metavar="SECRET")
    delegation_token_max_lifetime_ms: int = setting(604800000, "the longest a delegation token lives",
                                                    kafka="delegation.token.max.lifetime.ms", min=1, max=INT64_MAX)
    delegation_token_expiry_time_ms: int = setting(86400000, "how long a delegation token lives until renewed",
                                                   kafka="delegation.token.expiry.time.ms", min=1, max=INT64_MAX)
    # -- authorization (docs/security.md), off by default
    authorizer: bool = setting(False, "enforce ACLs with Kafka's StandardAuthorizer semantics (as "
                                      "authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer)")
    authorizer_class_name: str | None = setting(None, "Kafka's authorizer setting: StandardAuthorizer's class name "
                                                      "switches ACLs on (as --authorizer)",
                                                kafka="authorizer.class.name", metavar="CLASS")
    super_users: str | None = setting(None, "principals allowed everything, separated by ';' (User:admin;User:ops)",
                                      kafka="super.users", metavar="LIST")
    allow_everyone_if_no_acl_found: bool = setting(False, "allow requests on resources that have no ACL",
                                                   kafka="allow.everyone.if.no.acl.found")
    # -- test control (docs/control.md)
    manual_clock: bool = setting(False, "start a manual clock that moves only when the control API advances or sets it")
    control_port: int = setting(-1, "serve the HTTP control API on this port (0: a free port, printed at start; "
                                    "-1: off)", min=-1, max=65535)
    control_host: str = setting("127.0.0.1", "address the control API listens on")
    control_token: str | None = setting(None, "require this bearer token on every control API call")
    control_allow_remote: bool = setting(False, "let peers other than loopback use the control API")
    control_idle_timeout_ms: int = setting(60000, "close control API connections with no request under way this "
                                                  "long (idle, or a request still arriving)", min=1)
    # -- the built-in schema registry (docs/schema-registry.md)
    schema_registry_port: int = setting(-1, "serve Confluent Schema Registry's REST API on this port (0: a free "
                                            "port, printed at start; -1: off)", min=-1, max=65535)
    schema_registry_host: str = setting("127.0.0.1", "address the schema registry listens on")
    # Other settings by their Kafka names, as ``--override`` takes them: {"num.partitions": 3}.
    extra: InitVar[dict | None] = None

    def __post_init__(self, extra: dict | None) -> None:
        for name, value in (extra or {}).items():
            setattr(self, setting_named(name).name, value)
        for s in SETTINGS.values():  # strings (as on a command line) become the field's type
            value = getattr(self, s.name)
            if isinstance(value, str) and s.kind not in ("str", "optional"):
                setattr(self, s.name, s.parse(value, label=s.name))
            elif s.kind == "list" and isinstance(value, list):
                setattr(self, s.name, tuple(value))
        self.sasl_mechanisms = tuple(m.upper() for m in self.sasl_mechanisms)

    # -- derived ------------------------------------------------------------------------------
    @property
    def client_telemetry(self) -> bool:
        """Whether client telemetry is on (Kafka's ClientMetricsManager.isTelemetryExporterConfigured)."""
        return CLIENT_TELEMETRY_REPORTER in self.metric_reporters

    @property
    def advertised(self) -> str:
        """What clients are told to connect to. A wildcard address is no address to connect to, so
        then the machine's host name (Kafka advertises its host name for a listener without host)."""
        if self.advertised_host:
            return self.advertised_host
        return socket.gethostname() if self.host in WILDCARD_HOSTS else self.host

    @property
    def enabled_sasl_mechanisms(self) -> tuple[str, ...]:
        if self.sasl_mechanisms:
            return tuple(self.sasl_mechanisms)
        return ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512") if self.sasl_users else ()

    @property
    def security_protocol(self) -> str:
        """The listeners' protocol as clients name it: PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL."""
        sasl, tls = bool(self.enabled_sasl_mechanisms), bool(self.tls_cert)
        return {(False, False): "PLAINTEXT", (False, True): "SSL",
                (True, False): "SASL_PLAINTEXT", (True, True): "SASL_SSL"}[(sasl, tls)]

    @property
    def topic_defaults(self) -> dict[str, str]:
        """The topic configs whose broker default differs from Kafka's, by topic config name."""
        from .storage.topic_config import TOPIC_CONFIG_DEFAULTS
        out = {}
        for field_name, topic_name in TOPIC_DEFAULTS.items():
            value = getattr(self, field_name)
            text = ",".join(value) if isinstance(value, tuple) else str(value)
            if text != TOPIC_CONFIG_DEFAULTS[topic_name][0]:
                out[topic_name] = text
        return out

    @property
    def authorization_enabled(self) -> bool:
        return self.authorizer or bool(self.authorizer_class_name and self.authorizer_class_name.strip())

    def to_argv(self) -> list[str]:
        """``kafkaemu serve`` arguments for every setting that differs from its default."""
        return [arg for s in SETTINGS.values() for arg in s.argv(getattr(self, s.name))]

    # -- validation ---------------------------------------------------------------------------
    def errors(self, label=lambda s: s.name) -> list[str]:
        """Everything wrong with these settings, one sentence each; ``label(setting)`` names a
        setting (the command line names flags). Creates ``data_dir`` if it is missing."""
        problems = []

        def name(field_name: str) -> str:
            return label(SETTINGS[field_name])

        for s in SETTINGS.values():
            if s.kind == "int" and (problem := s.out_of_bounds(getattr(self, s.name))):
                problems.append(f"{label(s)} {problem}")
        if any(problem.endswith(" is not an integer") for problem in problems):
            return problems  # the checks below compare numbers
        if self.port and self.port + self.nodes - 1 > 65535 >= self.port:
            problems.append(f"{name('port')} {self.port} with {name('nodes')} {self.nodes} needs ports up to "
                            f"{self.port + self.nodes - 1}, beyond 65535")
        if self.control_port > 0 and self.port and self.port <= self.control_port < self.port + self.nodes:
            problems.append(f"{name('control_port')} {self.control_port} is a Kafka listener's port; the control API "
                            f"needs its own")
        if self.schema_registry_port > 0 and (
                self.port and self.port <= self.schema_registry_port < self.port + self.nodes
                or self.schema_registry_port == self.control_port):
            problems.append(f"{name('schema_registry_port')} {self.schema_registry_port} is taken by a Kafka listener "
                            f"or the control API; the schema registry needs its own")
        if self.control_token is not None and not self.control_token.strip():
            problems.append(f"{name('control_token')} must not be empty")
        if self.node_id + self.nodes - 1 > INT32_MAX:
            problems.append(f"{name('node_id')} {self.node_id} with {name('nodes')} {self.nodes} needs node ids "
                            f"beyond {INT32_MAX}")
        if self.group_min_session_timeout_ms > self.group_max_session_timeout_ms:
            problems.append(f"{name('group_min_session_timeout_ms')} {self.group_min_session_timeout_ms} is above "
                            f"{name('group_max_session_timeout_ms')} {self.group_max_session_timeout_ms}")
        if self.group_consumer_heartbeat_interval_ms >= self.group_consumer_session_timeout_ms:
            problems.append(f"{name('group_consumer_heartbeat_interval_ms')} "
                            f"{self.group_consumer_heartbeat_interval_ms} must be below "
                            f"{name('group_consumer_session_timeout_ms')} {self.group_consumer_session_timeout_ms}")
        problems += streams_problems(self, name)
        if tuple(self.group_consumer_assignors) != tuple(defaults.CONSUMER_ASSIGNORS):   # the core's default is known
            from .core.consumer.assignors import ASSIGNORS
            unknown = [a for a in self.group_consumer_assignors if a not in ASSIGNORS]
            if unknown or not self.group_consumer_assignors:
                problems.append(f"{name('group_consumer_assignors')} must name assignors among "
                                f"{', '.join(ASSIGNORS)}, got {','.join(self.group_consumer_assignors) or 'none'}")
        from .storage.topic_config import validate_topic_config
        for field_name, topic_name in TOPIC_DEFAULTS.items():   # the topics' own check
            value = getattr(self, field_name)
            problem = validate_topic_config(topic_name, ",".join(value) if isinstance(value, tuple) else str(value))
            if problem:
                problems.append(f"{name(field_name)}: {problem}")
        if unknown := [r for r in self.metric_reporters if r not in METRIC_REPORTERS]:
            problems.append(f"{name('metric_reporters')}: no metrics reporter {', '.join(unknown)} in kafkaemu; "
                            f"it has {', '.join(METRIC_REPORTERS)}")
        if self.sasl_mechanisms:
            from .auth.credentials import SUPPORTED_MECHANISMS
            if unknown := [m for m in self.sasl_mechanisms if m not in SUPPORTED_MECHANISMS]:
                problems.append(f"unsupported SASL mechanism(s) {', '.join(unknown)}; kafkaemu supports "
                                f"{', '.join(SUPPORTED_MECHANISMS)}")
        try:
            parse_levels(self.finalized_features)
        except ValueError as exc:
            problems.append(f"{name('finalized_features')}: {exc}")
        if any(not user for user in self.sasl_users):
            problems.append(f"{name('sasl_users')} needs a user name")
        if self.group_consumer_migration_policy not in ("bidirectional", "upgrade", "downgrade", "disabled"):
            problems.append(f"{name('group_consumer_migration_policy')} takes bidirectional, upgrade, downgrade or "
                            f"disabled, got {self.group_consumer_migration_policy}")
        if self.tls_client_auth not in ("none", "requested", "required"):
            problems.append(f"{name('tls_client_auth')} takes none, requested or required, got {self.tls_client_auth}")
        elif self.tls_client_auth != "none" and not self.tls_ca:
            problems.append(f"{name('tls_client_auth')} {self.tls_client_auth} needs {name('tls_ca')}")
        try:
            from .auth.principal import PrincipalMapper
            PrincipalMapper(self.ssl_principal_mapping_rules)
        except ValueError as exc:
            problems.append(f"{name('ssl_principal_mapping_rules')}: {exc}")
        for key in ("tls_key", "tls_key_password", "tls_ca"):
            if getattr(self, key) is not None and not self.tls_cert:
                problems.append(f"{name(key)} needs {name('tls_cert')}")
        unreadable = [f"cannot read {name(key)} {path}: {problem}" for key in ("tls_cert", "tls_key", "tls_ca")
                      if (path := getattr(self, key, None)) is not None and (problem := _unreadable(path))]
        problems += unreadable
        if self.tls_cert and not unreadable:
            from .tls import server_ssl_context  # ssl is loaded only when TLS is asked for
            try:
                server_ssl_context(self.tls_cert, self.tls_key, self.tls_key_password, self.tls_client_auth,
                                   self.tls_ca)
            except ValueError as exc:
                problems.append(str(exc))
        problems += _authorizer_problems(self, name)
        if self.data_dir is not None and (problem := _unusable_dir(self.data_dir)):
            problems.append(f"cannot use {name('data_dir')} {self.data_dir}: {problem}")
        return problems

    def validate(self, label=lambda s: s.name) -> "BrokerConfig":
        """Raise ValueError with every problem on one line; return self when there is none."""
        problems = self.errors(label)
        if problems:
            raise ValueError("; ".join(problems))
        return self


def _authorizer_problems(config: BrokerConfig, name) -> list[str]:
    problems = []
    cls = (config.authorizer_class_name or "").strip()
    if not cls and not config.super_users:
        return problems
    from .auth.authorizer import KAFKA_AUTHORIZER_CLASS, parse_super_users
    if cls and cls != KAFKA_AUTHORIZER_CLASS:
        problems.append(f"{name('authorizer_class_name')} {cls} is not available; kafkaemu implements "
                        f"{KAFKA_AUTHORIZER_CLASS}")
    if config.super_users:
        try:
            parse_super_users(config.super_users)
        except ValueError as exc:
            problems.append(f"{name('super_users')}: {exc}")
    return problems


def _unreadable(path: str) -> str | None:
    try:
        with open(path, "rb"):
            return None
    except OSError as exc:
        return exc.strerror or str(exc)


def _unusable_dir(path: str) -> str | None:
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as exc:
        return exc.strerror or str(exc)
    if not os.access(path, os.W_OK | os.X_OK):
        return "not writable"
    return None


# -- the settings, derived from the fields -------------------------------------------------------
@dataclass(frozen=True)
class Setting:
    """One BrokerConfig field as the command line and ``--override`` see it."""
    name: str
    kind: str  # int, bool, str, optional (str or None), list (comma separated), pairs (repeated NAME:VALUE)
    default: typing.Any
    help: str
    kafka: str | None
    flag: str
    metavar: str | None
    min: int | None
    max: int

    def parse(self, text, label: str | None = None):
        """The field's value from command-line text (a list of texts for ``pairs``); ``label``
        names the setting in the error (default: its flag)."""
        label = label or self.flag
        if self.kind == "int":
            try:
                return int(text)
            except ValueError:
                raise ValueError(f"{label} takes an integer, got {text!r}") from None
        if self.kind == "bool":
            if text.strip().lower() in ("true", "false"):
                return text.strip().lower() == "true"
            raise ValueError(f"{label} takes true or false, got {text!r}")
        if self.kind == "list":
            return tuple(item.strip() for item in text.split(",") if item.strip())
        if self.kind == "pairs":
            pairs = {}
            for item in [text] if isinstance(text, str) else text:
                key, sep, value = item.partition(":")
                if not sep or not key.strip():
                    raise ValueError(f"{label} takes {self.metavar}, got {item!r}")
                pairs[key.strip()] = value
            return pairs
        return text

    def out_of_bounds(self, value) -> str | None:
        if not isinstance(value, int) or isinstance(value, bool):
            return f"{value!r} is not an integer"
        if (self.min is not None and value < self.min) or value > self.max:
            if self.max in (INT32_MAX, INT64_MAX):
                return f"must be at least {self.min}, got {value}"
            return f"must be from {self.min} to {self.max}, got {value}"
        return None

    def argv(self, value) -> list[str]:
        """Command-line arguments that give this setting ``value`` (none for the default)."""
        if value == self.default:
            return []
        if self.kind == "bool":
            return [self.flag]
        if self.kind == "pairs":
            return [f"{self.flag}={key}:{item}" for key, item in value.items()]
        if self.kind == "list":
            return [f"{self.flag}={','.join(value)}"]
        return [f"{self.flag}={value}"]


def _settings() -> dict[str, Setting]:
    # the annotations as written (this module's are strings): evaluating them costs a start more
    kinds = {"int": "int", "bool": "bool", "str": "str", "str | None": "optional", "tuple[str, ...]": "list",
             "dict[str, str]": "pairs"}
    result = {}
    for f in fields(BrokerConfig):
        meta = f.metadata
        default = f.default_factory() if callable(f.default_factory) else f.default
        kind = kinds[f.type]
        flag = meta["flag"] or ("--no-" if kind == "bool" and default else "--") + f.name.replace("_", "-")
        result[f.name] = Setting(f.name, kind, default, meta["help"], meta["kafka"], flag, meta["metavar"],
                                 meta["min"], meta["max"])
    return result


SETTINGS: dict[str, Setting] = _settings()
KAFKA_NAMES: dict[str, Setting] = {s.kafka: s for s in SETTINGS.values() if s.kafka}
DEFAULTS = BrokerConfig()


def setting_named(kafka_name: str) -> Setting:
    """The setting a Kafka name (an ``--override`` name) stands for; ValueError for one kafkaemu lacks."""
    s = KAFKA_NAMES.get(kafka_name.strip())
    if s is None:
        import difflib
        close = difflib.get_close_matches(kafka_name, KAFKA_NAMES, n=1)
        hint = f" (did you mean {close[0]}?)" if close else " (kafkaemu serve --help lists the settings)"
        raise ValueError(f"unknown setting {kafka_name!r}{hint}")
    return s
