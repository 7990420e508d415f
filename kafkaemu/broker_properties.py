"""Kafka's broker configuration as Kafka takes it: every name Apache Kafka 4.4 defines
(``kafka_configs.py``, derived from its jars), a ``server.properties`` file, the ``KAFKA_*``
environment variables of its container image, and the listeners.

kafkaemu acts on the settings ``BrokerConfig`` has a field for (``--override`` names). Every other
name Kafka defines, such as ``num.network.threads``, ``socket.send.buffer.bytes`` or
``offsets.topic.replication.factor``, is accepted, checked as Kafka's ConfigDef checks it (its type
and range; a replication factor or min.isr beyond the nodes kafkaemu runs is refused, since no
topic could be made with it) and reported by DescribeConfigs; ``BrokerConfig.kafka_settings``
keeps them by name. A few are translated into kafkaemu's own settings: ``listeners`` and
``advertised.listeners`` (host, port, advertised host; their security protocol must be the one
kafkaemu serves) and the retention and roll synonyms in hours or minutes."""
from __future__ import annotations

import re
from typing import Mapping

INT32 = (-2**31, 2**31 - 1)
INT64 = (-2**63, 2**63 - 1)
SHORT = (-2**15, 2**15 - 1)
# per-listener settings (listener.name.sasl_ssl.plain.sasl.jaas.config): Kafka takes any config behind the prefix
LISTENER_PREFIX = r"listener\.name\.[a-z0-9_-]+\."   # compiled with its first use (re caches it), not at import
# Kafka's container image (docker/resources/common-scripts): these KAFKA_* variables configure the JVM
IMAGE_EXCLUDES = frozenset({"KAFKA_VERSION", "KAFKA_HEAP_OPT", "KAFKA_LOG4J_OPTS", "KAFKA_OPTS", "KAFKA_JMX_OPTS",
                            "KAFKA_JVM_PERFORMANCE_OPTS", "KAFKA_GC_LOG_OPTS", "KAFKA_LOG4J_ROOT_LOGLEVEL",
                            "KAFKA_LOG4J_LOGGERS", "KAFKA_TOOLS_LOG4J_LOGLEVEL"})
_SINGLE_UNDERSCORE = r"[^_]_[^_]"   # compiled with the first KAFKA_* variable (re's cache keeps it)
# the synonyms Kafka resolves into the ms settings, highest priority first after the ms one itself
SYNONYMS = {"log.retention.ms": (("log.retention.minutes", 60000), ("log.retention.hours", 3600000)),
            "log.roll.ms": (("log.roll.hours", 3600000),)}
# Names Kafka 4.4 does not define, yet takes without complaint (it ignores a config it does not
# know) and that test brokers are commonly given: confluent-kafka-python's suite sets the first,
# Kafka 3 compose files the ZooKeeper ones. Accepted and ignored, as Kafka does; any other unknown
# name is refused as a likely typo.
IGNORED_BY_KAFKA = frozenset({"offsets.topic.min.isr", "zookeeper.connect", "zookeeper.connection.timeout.ms",
                              "zookeeper.session.timeout.ms"})
REPLICATION = ("offsets.topic.replication.factor", "transaction.state.log.replication.factor",
               "share.coordinator.state.topic.replication.factor")
MIN_ISR = ("min.insync.replicas", "transaction.state.log.min.isr", "share.coordinator.state.topic.min.isr")


def definitions() -> dict[str, tuple]:
    from .kafka_configs import KAFKA_BROKER_CONFIGS
    return KAFKA_BROKER_CONFIGS


def kafka_defined(name: str) -> bool:
    """Whether Apache Kafka 4.4 defines this broker config (or takes it behind a listener prefix),
    or is one of the few it ignores that test brokers are given (``IGNORED_BY_KAFKA``)."""
    return name in definitions() or bool(re.match(LISTENER_PREFIX, name, re.I)) or name in IGNORED_BY_KAFKA


def check(name: str, text: str) -> str | None:
    """What Kafka's ConfigDef says of this value for a config it defines, in its words, or None."""
    row = definitions().get(name)
    if row is None:
        return None
    typ, _default, low, high, choices, _dynamic, _internal = row
    value: object = text.strip()
    if typ in ("INT", "LONG", "SHORT"):
        try:
            value = int(text.strip())
        except ValueError:
            return f"Invalid value {text} for configuration {name}: Not a number of type {typ}"
        lo, hi = {"INT": INT32, "LONG": INT64, "SHORT": SHORT}[typ]
        if not lo <= value <= hi:
            return f"Invalid value {text} for configuration {name}: Not a number of type {typ}"
    elif typ == "DOUBLE":
        try:
            value = float(text.strip())
        except ValueError:
            return f"Invalid value {text} for configuration {name}: Not a number of type DOUBLE"
    elif typ == "BOOLEAN":
        if text.strip().lower() not in ("true", "false"):
            return f"Invalid value {text} for configuration {name}: Expected value to be either true or false"
    if low is not None and value < low:
        return f"Invalid value {text} for configuration {name}: Value must be at least {low}"
    if high is not None and value > high:
        return f"Invalid value {text} for configuration {name}: Value must be no more than {high}"
    if choices:
        items = [i.strip() for i in text.split(",") if i.strip()] if typ == "LIST" else [text.strip()]
        folded = {c.lower(): c for c in choices}
        bad = [i for i in items if i not in choices and i.lower() not in folded]
        if bad:
            return (f"Invalid value {text} for configuration {name}: String must be one of: "
                    f"{', '.join(choices)}")
    return None


def beyond_nodes(name: str, text: str, nodes: int) -> str | None:
    """A replication factor or min.isr more than the nodes there are: no topic could be made (or
    written with acks=all) with it, so a one-node kafkaemu refuses it at start."""
    if name in REPLICATION + MIN_ISR and check(name, text) is None and int(text) > nodes:
        return (f"{name} {int(text)} is more than the {nodes} node(s) kafkaemu runs (--nodes); give "
                f"{name}=1, or --nodes {int(text)}")
    return None


def read_properties(path: str) -> dict[str, str]:
    """A Java properties file (``server.properties``), as Kafka reads it."""
    import javaproperties
    with open(path, encoding="utf-8") as f:
        return dict(javaproperties.load(f))


def from_environment(environ: Mapping[str, str]) -> dict[str, str]:
    """The settings Kafka's container image makes of ``KAFKA_*`` variables: the prefix dropped, a
    single underscore a dot, three a dash, two an underscore, lower case (its ConvertKey)."""
    out = {}
    for key, value in environ.items():
        if key.startswith("KAFKA_") and key not in IMAGE_EXCLUDES:
            dotted = re.sub(_SINGLE_UNDERSCORE, lambda m: m.group(0).replace("_", "."), key[len("KAFKA_"):])
            out[dotted.replace("___", "-").replace("__", "_").lower()] = value
    return out


def parse_listeners(text: str) -> list[tuple[str, str, int]]:
    """``NAME://host:port`` entries as (listener name, host, port); ValueError for a malformed one."""
    out = []
    for entry in (e.strip() for e in text.split(",") if e.strip()):
        m = re.fullmatch(r"([A-Za-z0-9_-]+)://(\[[^\]]*\]|[^:/]*):(-?\d+)", entry)
        if m is None:
            raise ValueError(f"listener {entry!r} is not NAME://HOST:PORT")
        out.append((m.group(1).upper(), m.group(2).strip("[]"), int(m.group(3))))
    return out


def protocol_map(settings: Mapping[str, str]) -> dict[str, str]:
    """listener.security.protocol.map as a dict; without it, Kafka's default (each protocol names itself)."""
    text = settings.get("listener.security.protocol.map")
    if not text:
        return {p: p for p in ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")}
    pairs = (item.split(":", 1) for item in text.split(",") if ":" in item)
    return {name.strip().upper(): protocol.strip().upper() for name, protocol in pairs}


def client_listeners(settings: Mapping[str, str], key: str) -> list[tuple[str, str, int]]:
    """The listeners of ``key`` that serve clients: not the controller's (controller.listener.names)."""
    controllers = {n.strip().upper() for n in settings.get("controller.listener.names", "").split(",") if n.strip()}
    return [entry for entry in parse_listeners(settings.get(key, "")) if entry[0] not in controllers]


def derived_settings(settings: Mapping[str, str]) -> dict[str, object]:
    """kafkaemu's own settings these Kafka settings stand for: ``host`` and ``port`` from the first
    client listener, ``advertised_host`` from advertised.listeners, the ms forms of the retention
    and roll synonyms (when the ms setting itself is not given)."""
    out: dict[str, object] = {}
    try:   # a malformed one is listener_problems' to report
        listeners = client_listeners(settings, "listeners") if settings.get("listeners") else []
        advertised = client_listeners(settings, "advertised.listeners") if settings.get("advertised.listeners") else []
    except ValueError:
        listeners = advertised = []
    if listeners:
        _, host, port = listeners[0]
        out["host"], out["port"] = host or "0.0.0.0", port
    if advertised and advertised[0][1]:
        out["advertised_host"] = advertised[0][1]
    for ms_name, synonyms in SYNONYMS.items():
        for name, factor in synonyms:
            if name in settings and check(name, settings[name]) is None:
                out[ms_name.replace(".", "_")] = int(settings[name]) * factor
                break
    return out


def listener_problems(settings: Mapping[str, str], protocol: str) -> list[str]:
    """The listeners' problems: malformed, or a client listener whose security protocol is not the
    one kafkaemu serves (from its SASL and TLS settings)."""
    problems = []
    mapping = protocol_map(settings)
    for key in ("listeners", "advertised.listeners"):
        if not settings.get(key):
            continue
        try:
            entries = client_listeners(settings, key)
        except ValueError as exc:
            problems.append(f"{key}: {exc}")
            continue
        for name, _host, _port in entries[:1]:
            wanted = mapping.get(name)
            if wanted is None:
                problems.append(f"{key}: listener {name} is not in listener.security.protocol.map")
            elif wanted != protocol:
                problems.append(f"{key}: listener {name} is {wanted}, but kafkaemu serves {protocol} with these "
                                f"settings (SASL: --sasl-user / sasl.enabled.mechanisms; TLS: --tls-cert)")
    return problems
