"""Broker configuration: the settings a user of a Kafka broker would expect, with CI-friendly defaults."""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class BrokerConfig:
    host: str = "127.0.0.1"
    port: int = 9092
    advertised_host: str | None = None
    node_id: int = 0
    nodes: int = 1  # node ids node_id .. node_id+nodes-1, each with its own listener (port, port+1, ...)
    cluster_id: str = "kafkaemu-cluster-0000"
    auto_create_topics: bool = True
    num_partitions: int = 1
    default_replication_factor: int = 1
    socket_request_max_bytes: int = 100 * 1024 * 1024
    message_max_bytes: int = 1048588
    data_dir: str | None = None
    # group coordinator
    offsets_topic_num_partitions: int = 50
    group_min_session_timeout_ms: int = 6000
    group_max_session_timeout_ms: int = 1800000
    group_initial_rebalance_delay_ms: int = 150  # Kafka: 3000; see docs/groups.md
    group_max_size: int = 2**31 - 1
    offset_metadata_max_bytes: int = 4096
    offsets_retention_minutes: int = 7 * 24 * 60
    offsets_retention_check_interval_ms: int = 600000
    # security, off by default: SASL when users or mechanisms are given, TLS when a certificate is
    sasl_users: dict[str, str] = field(default_factory=dict)   # user name -> password
    sasl_mechanisms: tuple[str, ...] = ()  # empty with users: PLAIN, SCRAM-SHA-256, SCRAM-SHA-512
    tls_cert: str | None = None  # PEM certificate (chain) file
    tls_key: str | None = None   # PEM private key file (default: inside tls_cert)
    tls_key_password: str | None = None
    connection_failed_authentication_delay_ms: int = 100  # as Kafka: clients read the error before the close
    extra: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        if isinstance(self.sasl_mechanisms, str):  # "PLAIN,SCRAM-SHA-256" as on the command line
            self.sasl_mechanisms = tuple(m.strip() for m in self.sasl_mechanisms.split(",") if m.strip())

    @property
    def advertised(self) -> str:
        return self.advertised_host or self.host

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
