"""Broker configuration: every setting kafkaemu reads, held once with its default, its Kafka name,
its help text and its bounds. The group and transaction coordinators declare their own settings
(``core/*/settings.py``, as Kafka's GroupCoordinatorConfig and its siblings do); ``BrokerConfig``
composes those classes as fields (``config.consumer.session_timeout_ms``) beside its own, and the
core never imports this module.

Everything else is derived from the fields: the ``kafkaemu serve`` flags (``--num-partitions``;
a composed setting's flag is its Kafka name, ``--group-consumer-session-timeout-ms``), the
``--override NAME=VALUE`` names (Kafka's, e.g. ``num.partitions``), the keyword names
(``BrokerConfig(group_consumer_session_timeout_ms=...)``: a Kafka name with underscores) and
``KafkaEmulator``'s subprocess arguments (``to_argv``). ``validate()`` checks a whole configuration
for the command line and for ``KafkaEmulator`` alike.
"""
from __future__ import annotations

import dataclasses
import os
import socket
import typing
from dataclasses import dataclass, field, fields

from .core.classic.settings import ClassicSettings
from .core.consumer.settings import ConsumerSettings
from .broker_properties import beyond_nodes, check, derived_settings, kafka_defined, listener_problems
from .core.features import parse_levels
from .core.offsets.settings import OffsetsSettings
from .core.settings import INT32_MAX, INT64_MAX, setting
from .core.settings import problems as failed_checks
from .core.share.settings import ShareSettings
from .core.streams.settings import StreamsSettings
from .core.transactions.settings import TransactionSettings

# broker settings that are the default of a topic config (Kafka's LogConfig synonyms)
TOPIC_DEFAULTS = {"log_retention_ms": "retention.ms", "log_retention_bytes": "retention.bytes",
                  "log_segment_bytes": "segment.bytes", "log_roll_ms": "segment.ms",
                  "log_cleanup_policy": "cleanup.policy", "log_cleaner_delete_retention_ms": "delete.retention.ms",
                  "log_index_interval_bytes": "index.interval.bytes"}
# metric.reporters: Kafka's default reporter (nothing to emulate), and kafkaemu's client telemetry
# receiver, which plays a Kafka reporter implementing ClientTelemetry (KIP-714): with it the broker
# advertises GetTelemetrySubscriptions and PushTelemetry, as Kafka's DefaultApiVersionManager does
JMX_REPORTER = "org.apache.kafka.common.metrics.JmxReporter"
CLIENT_TELEMETRY_REPORTER = "kafkaemu.telemetry.ClientTelemetryReceiver"
METRIC_REPORTERS = (JMX_REPORTER, CLIENT_TELEMETRY_REPORTER)
WILDCARD_HOSTS = ("0.0.0.0", "::", "")


def composed(settings_class):
    """A BrokerConfig field holding a coordinator's settings class (its own fields are the settings)."""
    return field(default_factory=settings_class, metadata={"composed": True})


@dataclass(init=False)
class BrokerConfig:
    """Every setting of a broker with its default; ``validate()`` checks them. Made with keyword
    settings by name (``num_partitions=3``, ``group_consumer_session_timeout_ms=30000``, or a whole
    ``consumer=ConsumerSettings(...)``) and ``extra={Kafka name: value}``; a text value (a command
    line's, a properties file's) becomes the setting's type."""
    # -- listeners
    host: str = setting("127.0.0.1", None, "address to listen on")
    port: int = setting(9092, None, "port of the first node; 0 picks free ports", min=0, max=65535)
    advertised_host: str | None = setting(
        None, None, "host name given to clients in Metadata and FindCoordinator (default: --host; with a "
              "wildcard --host such as 0.0.0.0, this machine's host name)")
    node_id: int = setting(0, "node.id", "id of the first node", min=0)
    nodes: int = setting(
        1, None, "emulate a cluster of N nodes listening on PORT, PORT+1, ... (free ports with "
                 "--port 0)", min=1, max=1024)
    cluster_id: str = setting("kafkaemu-cluster-0000", None, "cluster id given to clients")
    # -- topics and the log
    auto_create_topics: bool = setting(
        True, "auto.create.topics.enable", "don't create topics on first use, answer "
                                           "UNKNOWN_TOPIC_OR_PARTITION")
    num_partitions: int = setting(1, "num.partitions", "partitions of auto-created topics", min=1)
    default_replication_factor: int = setting(
        1, "default.replication.factor", "replication factor reported for topics created without one", min=1, max=32767)
    socket_request_max_bytes: int = setting(
        100 * 1024 * 1024, "socket.request.max.bytes", "largest request accepted", min=1)
    message_max_bytes: int = setting(1048588, "message.max.bytes", "largest record batch accepted", min=0)
    fetch_max_bytes: int = setting(57671680, "fetch.max.bytes", "most bytes one Fetch response carries", min=0)
    max_uncompressed_batch_bytes: int = setting(
        32 * 1024 * 1024, None, "most bytes one record batch may decompress to (kafkaemu's own bound: a larger one "
                          "is refused with MESSAGE_TOO_LARGE, so a compression bomb costs at most this)", min=1)
    data_dir: str | None = setting(
        None, "log.dir", "keep logs and __consumer_offsets here across restarts (default: memory)", metavar="DIR")
    data_dir_tail_cache_bytes: int = setting(
        64 * 1024 * 1024, None, "with a data dir, the most bytes of recent batches also kept in memory, over all "
                          "partitions (4 MiB each at most; older reads go to the files)", min=0)
    log_retention_check_interval_ms: int = setting(
        300000, "log.retention.check.interval.ms", "how often retention deletes old batches", min=1, max=INT64_MAX)
    log_cleaner_backoff_ms: int = setting(
        15000, "log.cleaner.backoff.ms", "how often compacted topics are cleaned", min=0, max=INT64_MAX)
    # defaults of topics that do not set their own (TOPIC_DEFAULTS: the topic config each one is)
    log_retention_ms: int = setting(
        604800000, "log.retention.ms", "topics' default retention.ms (-1: keep forever)", min=-1, max=INT64_MAX)
    log_retention_bytes: int = setting(
        -1, "log.retention.bytes", "topics' default retention.bytes, per partition (-1: no limit)",
        min=-1, max=INT64_MAX)
    log_segment_bytes: int = setting(1073741824, "log.segment.bytes", "topics' default segment.bytes", min=14)
    log_roll_ms: int = setting(604800000, "log.roll.ms", "topics' default segment.ms", min=1, max=INT64_MAX)
    log_cleanup_policy: tuple[str, ...] = setting(
        ("delete",), "log.cleanup.policy", "topics' default cleanup.policy (delete, compact)", metavar="LIST")
    log_cleaner_delete_retention_ms: int = setting(
        86400000, "log.cleaner.delete.retention.ms", "topics' default delete.retention.ms", min=0, max=INT64_MAX)
    log_index_interval_bytes: int = setting(
        4096, "log.index.interval.bytes", "topics' default index.interval.bytes", min=0)
    # -- the group and transaction coordinators' settings, as each declares its own (core/*/settings.py)
    offsets: OffsetsSettings = composed(OffsetsSettings)
    classic: ClassicSettings = composed(ClassicSettings)
    consumer: ConsumerSettings = composed(ConsumerSettings)
    share: ShareSettings = composed(ShareSettings)
    streams: StreamsSettings = composed(StreamsSettings)
    transactions: TransactionSettings = composed(TransactionSettings)
    finalized_features: tuple[str, ...] = setting(
        (), None, "finalize features at these levels instead of a new Kafka 4.3 cluster's, as kafka-storage format "
            "--feature does (e.g. transaction.version=1 for Transactions V1)", flag="--feature",
        metavar="NAME=LEVEL,...")
    # -- security, off by default: SASL when users or mechanisms are given, TLS when a certificate is
    sasl_users: dict[str, str] = setting({}, None, "enable SASL and add a user (repeatable)", flag="--sasl-user",
                                         metavar="NAME:PASSWORD")
    sasl_mechanisms: tuple[str, ...] = setting(
        (), "sasl.enabled.mechanisms", "SASL mechanisms to enable (default with users: "
                                       "PLAIN,SCRAM-SHA-256,SCRAM-SHA-512)", metavar="LIST")
    tls_cert: str | None = setting(None, None, "serve TLS with this PEM certificate chain", metavar="FILE")
    tls_key: str | None = setting(
        None, None, "PEM private key for --tls-cert (default: read from the certificate file)", metavar="FILE")
    tls_key_password: str | None = setting(None, "ssl.key.password", "password of an encrypted --tls-key")
    tls_client_auth: str = setting(
        "none", "ssl.client.auth", "ask TLS clients for a certificate: none, requested or required "
                                   "(its subject becomes the principal)")
    tls_ca: str | None = setting(
        None, "ssl.truststore.location", "PEM CA certificates that client certificates are checked "
                                         "against", metavar="FILE")
    ssl_principal_mapping_rules: str = setting(
        "DEFAULT", "ssl.principal.mapping.rules", "how a client certificate's subject becomes a "
                                                  "principal name (Kafka's rules)", metavar="RULES")
    connections_max_idle_ms: int = setting(
        600000, "connections.max.idle.ms", "close connections idle this long (negative: never)", min=-1, max=INT64_MAX)
    quota_window_num: int = setting(
        11, "quota.window.num", "samples a client quota's rate is measured over", min=1, max=2 ** 31 - 1)
    quota_window_size_seconds: int = setting(
        1, "quota.window.size.seconds", "time span of each client quota sample", min=1, max=2 ** 31 - 1)
    metric_reporters: tuple[str, ...] = setting(
        (JMX_REPORTER,), "metric.reporters", "metrics reporter classes, as Kafka's: naming "
        f"{CLIENT_TELEMETRY_REPORTER} (kafkaemu's client telemetry receiver, like a Kafka reporter implementing "
        "ClientTelemetry) turns client telemetry on and advertises GetTelemetrySubscriptions and PushTelemetry",
        metavar="LIST")
    telemetry_max_bytes: int = setting(
        1048576, "telemetry.max.bytes", "the largest client telemetry push accepted (KIP-714)", min=1, max=2 ** 31 - 1)
    connection_failed_authentication_delay_ms: int = setting(
        100, "connection.failed.authentication.delay.ms", "delay before closing a connection that "
                                                          "failed to authenticate (clients read the "
                                                          "error first)", min=0)
    delegation_token_secret_key: str | None = setting(
        None, "delegation.token.secret.key", "enable delegation tokens, signed with this secret",
        metavar="SECRET")
    delegation_token_max_lifetime_ms: int = setting(
        604800000, "delegation.token.max.lifetime.ms", "the longest a delegation token lives", min=1, max=INT64_MAX)
    delegation_token_expiry_time_ms: int = setting(
        86400000, "delegation.token.expiry.time.ms", "how long a delegation token lives until renewed",
        min=1, max=INT64_MAX)
    # -- authorization (docs/security.md), off by default
    authorizer: bool = setting(False, None, "enforce ACLs with Kafka's StandardAuthorizer semantics (as "
                                      "authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer)")
    authorizer_class_name: str | None = setting(
        None, "authorizer.class.name", "Kafka's authorizer setting: StandardAuthorizer's class name "
                                       "switches ACLs on (as --authorizer)", metavar="CLASS")
    super_users: str | None = setting(
        None, "super.users", "principals allowed everything, separated by ';' (User:admin;User:ops)", metavar="LIST")
    allow_everyone_if_no_acl_found: bool = setting(
        False, "allow.everyone.if.no.acl.found", "allow requests on resources that have no ACL")
    # -- test control (docs/control.md)
    manual_clock: bool = setting(
        False, None, "start a manual clock that moves only when the control API advances or sets it")
    control_port: int = setting(-1, None, "serve the HTTP control API on this port (0: a free port, printed at start; "
                                    "-1: off)", min=-1, max=65535)
    control_host: str = setting("127.0.0.1", None, "address the control API listens on")
    control_token: str | None = setting(None, None, "require this bearer token on every control API call")
    control_allow_remote: bool = setting(False, None, "let peers other than loopback use the control API")
    control_idle_timeout_ms: int = setting(60000, None, "close control API connections with no request under way this "
                                                  "long (idle, or a request still arriving)", min=1)
    # -- the built-in schema registry (docs/schema-registry.md)
    schema_registry_port: int = setting(-1, None, "serve Confluent Schema Registry's REST API on this port (0: a free "
                                            "port, printed at start; -1: off)", min=-1, max=65535)
    schema_registry_host: str = setting("127.0.0.1", None, "address the schema registry listens on")
    # -- Kafka's other broker settings (num.network.threads, offsets.topic.replication.factor, ...): by
    # their Kafka names as given, checked and reported as Kafka does (broker_properties.py)
    kafka_settings: dict[str, str] = field(default_factory=dict, metadata={"kafka_settings": True})

    def __init__(self, *, extra: dict | None = None, **values) -> None:
        """``values``: settings by name; ``extra``: settings by their Kafka names, as ``--override``
        takes them ({"num.partitions": 3}), applied last: a name kafkaemu acts on sets its setting,
        another name Kafka defines goes to ``kafka_settings``, and ``listeners``,
        ``advertised.listeners`` and the retention and roll synonyms set kafkaemu's own settings
        that are not given by name."""
        named = dict(values)
        kafka_only = {}
        for kafka_name, value in (extra or {}).items():
            s = KAFKA_NAMES.get(kafka_name.strip())
            if s is not None:
                named[s.name] = value
            elif kafka_defined(kafka_name.strip()):
                kafka_only[kafka_name.strip()] = _kafka_text(value)
            else:
                setting_named(kafka_name)   # refused, with a suggestion
        kafka_only = {**named.pop("kafka_settings", {}), **kafka_only}
        for name, value in derived_settings(kafka_only).items():
            named.setdefault(name, value)
        for f in fields(BrokerConfig):
            if f.metadata.get("kafka_settings"):
                setattr(self, f.name, kafka_only)
            elif f.metadata.get("composed"):
                base = named.pop(f.name, None) or f.default_factory()
                own = {s.field: s.coerce(named.pop(s.name)) for s in COMPOSED[f.name] if s.name in named}
                setattr(self, f.name, dataclasses.replace(base, **own) if own else base)
            elif f.name in named:
                setattr(self, f.name, SETTINGS[f.name].coerce(named.pop(f.name)))
            else:
                setattr(self, f.name, f.default_factory() if callable(f.default_factory) else f.default)
        if named:
            raise TypeError(f"BrokerConfig() got an unexpected keyword argument {next(iter(named))!r}")
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
        return [arg for s in SETTINGS.values() for arg in s.argv(s.get(self))] + \
            [f"--override={name}={value}" for name, value in self.kafka_settings.items()]

    def as_dict(self) -> dict[str, typing.Any]:
        """Every setting's value by name (what ``--print-config`` prints), Kafka's others by their names."""
        return {**{s.name: s.get(self) for s in SETTINGS.values()}, "kafka_settings": dict(self.kafka_settings)}

    # -- validation ---------------------------------------------------------------------------
    def errors(self, label=lambda s: s.name) -> list[str]:
        """Everything wrong with these settings, one sentence each; ``label(setting)`` names a
        setting (the command line names flags). Creates ``data_dir`` if it is missing."""
        problems = []

        def name(field_name: str) -> str:
            return label(SETTINGS[field_name])

        for s in SETTINGS.values():
            value = s.get(self)
            if s.kind == "int" and (problem := s.out_of_bounds(value)):
                problems.append(f"{label(s)} {problem}")
            elif s.choices and value not in s.choices:
                problems.append(f"{label(s)} takes {', '.join(s.choices[:-1])} or {s.choices[-1]}, got {value}")
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
        for f in fields(self):   # the relations the coordinators' config classes require, in Kafka's words
            if f.metadata.get("composed"):
                problems += failed_checks(getattr(self, f.name), lambda kafka: label(KAFKA_NAMES[kafka]))
        assignors = self.consumer.assignors
        if assignors != ConsumerSettings().assignors:   # the default is known good
            from .core.consumer.assignors import ASSIGNORS
            unknown = [a for a in assignors if a not in ASSIGNORS]
            if unknown or not assignors:
                problems.append(f"{name('group_consumer_assignors')} must name assignors among "
                                f"{', '.join(ASSIGNORS)}, got {','.join(assignors) or 'none'}")
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
        for kafka_name, text in self.kafka_settings.items():   # Kafka's own checks of the rest
            if problem := check(kafka_name, text) or beyond_nodes(kafka_name, text, self.nodes):
                problems.append(problem)
        problems += listener_problems(self.kafka_settings, self.security_protocol)
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
    """One setting as the command line, ``--override`` and keyword arguments see it: a BrokerConfig
    field, or a field of a settings class BrokerConfig composes (``group``: that composed field)."""
    name: str
    kind: str  # int, bool, str, optional (str or None), list (comma separated), pairs (repeated NAME:VALUE)
    default: typing.Any
    help: str
    kafka: str | None
    flag: str | None   # None: no command-line flag (given by its Kafka name only)
    metavar: str | None
    min: int | None
    max: int
    choices: tuple[str, ...] | None = None
    group: str | None = None
    field: str = ""

    def get(self, config: BrokerConfig):
        return getattr(getattr(config, self.group), self.field) if self.group else getattr(config, self.name)

    def coerce(self, value):
        """A value given in Python or as text (a command line's, a properties file's) as the setting's type."""
        if isinstance(value, str) and self.kind not in ("str", "optional"):
            return self.parse(value, label=self.name)
        if self.kind == "list" and isinstance(value, list):
            return tuple(value)
        if self.choices and isinstance(value, str):
            return value.strip().lower()
        return value

    def parse(self, text, label: str | None = None):
        """The field's value from command-line text (a list of texts for ``pairs``); ``label``
        names the setting in the error (default: its flag)."""
        label = label or self.flag or self.kafka
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
        if self.choices:
            return text.strip().lower()
        return text

    def out_of_bounds(self, value) -> str | None:
        if not isinstance(value, int) or isinstance(value, bool):
            return f"{value!r} is not an integer"
        if (self.min is not None and value < self.min) or value > self.max:
            if self.min is None:
                return f"must be at most {self.max}, got {value}"
            if self.max in (INT32_MAX, INT64_MAX):
                return f"must be at least {self.min}, got {value}"
            return f"must be from {self.min} to {self.max}, got {value}"
        return None

    def argv(self, value) -> list[str]:
        """Command-line arguments that give this setting ``value`` (none for the default)."""
        if value == self.default:
            return []
        flag = self.flag or "--override"
        if self.flag is None:   # by its Kafka name
            text = ",".join(value) if self.kind == "list" else str(value).lower() if self.kind == "bool" else value
            return [f"--override={self.kafka}={'' if text is None else text}"]
        if self.kind == "bool":
            return [flag]
        if self.kind == "pairs":
            return [f"{flag}={key}:{item}" for key, item in value.items()]
        if self.kind == "list":
            return [f"{flag}={','.join(value)}"]
        return [f"{flag}={value}"]


# the annotations as written (the modules' are strings): evaluating them costs a start more
_KINDS = {"int": "int", "bool": "bool", "str": "str", "str | None": "optional", "tuple[str, ...]": "list",
          "dict[str, str]": "pairs"}


def _setting(f, group: str | None = None) -> Setting:
    meta = f.metadata
    default = f.default_factory() if callable(f.default_factory) else f.default
    kind = _KINDS[f.type]
    # a composed setting is named by its Kafka name (group.consumer.session.timeout.ms: group_consumer_...)
    name = (meta["kafka"] or f.name).replace(".", "_") if group else f.name
    flag = meta["flag"]
    if flag is None:
        flag = ("--no-" if kind == "bool" and default else "--") + name.replace("_", "-")
    return Setting(name, kind, default, meta["help"], meta["kafka"], flag or None, meta["metavar"], meta["min"],
                   meta["max"], meta.get("choices"), group, f.name)


def _settings() -> tuple[dict[str, Setting], dict[str, list[Setting]]]:
    result, composed_settings = {}, {}
    for f in fields(BrokerConfig):
        if f.metadata.get("kafka_settings"):
            continue
        if f.metadata.get("composed"):
            composed_settings[f.name] = [_setting(g, f.name) for g in fields(f.default_factory)]
            result.update((s.name, s) for s in composed_settings[f.name])
        else:
            result[f.name] = _setting(f)
    return result, composed_settings


SETTINGS, COMPOSED = _settings()
KAFKA_NAMES: dict[str, Setting] = {s.kafka: s for s in SETTINGS.values() if s.kafka}
DEFAULTS = BrokerConfig()


def _kafka_text(value) -> str:
    """A value given in Python as Kafka's properties write it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return ",".join(str(v) for v in value)
    return str(value).strip()


def setting_named(kafka_name: str) -> Setting:
    """The setting a Kafka name (an ``--override`` name) stands for; ValueError for one kafkaemu
    does not act on (``kafka_defined`` tells whether Kafka defines it: then it is accepted all the
    same, as ``extra``), naming the closest name Kafka or kafkaemu has."""
    s = KAFKA_NAMES.get(kafka_name.strip())
    if s is None:
        import difflib
        from .kafka_configs import KAFKA_BROKER_CONFIGS
        close = difflib.get_close_matches(kafka_name, [*KAFKA_NAMES, *KAFKA_BROKER_CONFIGS], n=1)
        hint = f" (did you mean {close[0]}?)" if close else " (kafkaemu serve --help lists the settings)"
        raise ValueError(f"unknown setting {kafka_name!r}{hint}")
    return s
