"""How ``kafkaemu serve --help`` groups its options: the common ones first, in the order a new user
reaches for them, then one section per area. A flag's section is found from its name (and its Kafka
name), never from where the setting is defined, so a new setting lands in its area by being named
as Kafka names it; one that matches no area is listed under "other settings" rather than lost."""
from __future__ import annotations

# The common options, in this order, in argparse's own first section (where -h is).
COMMON = ("--host", "--port", "--config", "--override", "--data-dir", "--control-port", "--schema-registry-port",
          "--manual-clock", "--nodes", "--num-partitions", "--no-auto-create-topics", "--advertised-host",
          "--log-format", "--log-level", "--print-config")

# (title, flag prefixes, Kafka name prefixes), in the order --help lists them; the longest prefix
# that matches the flag or its Kafka name picks the area ("--group-consumer-" over "--group-").
AREAS: tuple[tuple[str, tuple[str, ...], tuple[str, ...]], ...] = (
    ("listeners, nodes and the cluster",
     ("--listener", "--advertised-listener", "--node-", "--cluster-", "--process-roles", "--controller",
      "--inter-broker", "--broker-"),
     ("listeners", "advertised.listeners", "listener.", "node.", "process.roles", "controller.", "broker.",
      "inter.broker.", "cluster.")),
    ("topics, the log and storage",
     ("--log-", "--num-", "--default-replication-factor", "--message-max-bytes", "--fetch-max-bytes",
      "--max-uncompressed", "--data-dir-", "--min-insync", "--replica-", "--unclean-", "--compression-",
      "--segment-"),
     ("log.", "num.", "default.replication.factor", "message.max.bytes", "fetch.max.bytes", "min.insync.",
      "replica.", "unclean.", "compression.", "auto.create.topics.", "delete.topic.")),
    ("classic groups and committed offsets",
     ("--group-", "--offset-", "--offsets-"), ("group.", "offset.", "offsets.")),
    ("consumer groups (KIP-848)", ("--group-consumer-",), ("group.consumer.",)),
    ("share groups (KIP-932)", ("--group-share-", "--share-"), ("group.share.", "share.")),
    ("streams groups (KIP-1071)", ("--group-streams-",), ("group.streams.",)),
    ("transactions and features",
     ("--transaction", "--feature", "--producer-id"), ("transaction.", "transactional.", "producer.id.")),
    ("security: SASL, TLS, ACLs, delegation tokens",
     ("--sasl-", "--tls-", "--ssl-", "--authorizer", "--super-users", "--allow-everyone", "--delegation-token-",
      "--connection-failed-authentication", "--principal-"),
     ("sasl.", "ssl.", "authorizer.", "super.users", "allow.everyone", "delegation.token.", "principal.",
      "connection.failed.authentication")),
    ("quotas, metrics and client telemetry", ("--quota-", "--telemetry-", "--client-quota", "--metric"),
     ("quota.", "telemetry.", "client.quota.", "metric.", "metrics.")),
    ("connections and requests", ("--socket-", "--connections-", "--connection-", "--max-connection", "--queued-"),
     ("socket.", "connections.", "connection.", "max.connection", "queued.")),
    ("the control API", ("--control-",), ()),
    ("the schema registry", ("--schema-registry-",), ()),
)
OTHER = "other settings"


def _prefixes_longest_first() -> tuple[tuple[str, bool, str], ...]:
    """Every (prefix, of the Kafka name?, title), longest first (a Kafka name's prefix counted as long
    as the flag's "--" form); among equally long ones, AREAS' order, which decides a tie."""
    prefixes = [(prefix, kafka, title) for title, flag_prefixes, kafka_prefixes in AREAS
                for kafka, group in ((False, flag_prefixes), (True, kafka_prefixes)) for prefix in group]
    return tuple(sorted(prefixes, key=lambda p: -(len(p[0]) + 2 * p[1])))   # sorted() keeps ties in order


_PREFIXES = _prefixes_longest_first()


def area_of(flag: str, kafka_name: str | None = None) -> str | None:
    """The section a flag belongs to: None for the common ones, else an area's title (or OTHER)."""
    if flag in COMMON:
        return None
    for prefix, kafka, title in _PREFIXES:
        if (kafka_name or "").startswith(prefix) if kafka else flag.startswith(prefix):
            return title
    return OTHER


def section_order() -> list[str]:
    return [title for title, _, _ in AREAS] + [OTHER]
