"""BROKER config resources as a Kafka 4.4 broker describes and alters them (ConfigHelper,
DynamicBrokerConfig): each config with its value, its source (a node's own dynamic config
DYNAMIC_BROKER_CONFIG, the cluster's dynamic default DYNAMIC_DEFAULT_BROKER_CONFIG, a value
kafkaemu starts with that is not Kafka's default STATIC_BROKER_CONFIG, else DEFAULT_CONFIG),
read-only unless Kafka updates it dynamically, sensitive values hidden, and synonyms (the config
at every level it is set, highest first). The resource named "" is the cluster default: only
the dynamic defaults set. Altering a read-only config, an unknown one or a bad value is
INVALID_REQUEST, as Kafka's ConfigAdminManager answers."""
from __future__ import annotations

from ..config import KAFKA_NAMES
from ..core.group_configs import config_text
from ..kafka_configs import KAFKA_BROKER_CONFIGS
from ..protocol.errors import ErrorCode
from ..storage.topic_config import (BOOLEAN, DEFAULT_CONFIG, DYNAMIC_TOPIC_CONFIG, INT, LIST, LONG, SHORT,
                                    STATIC_BROKER_CONFIG, STRING, TOPIC_CONFIG_DEFAULTS)
from .describe_log_dirs import log_dir

PASSWORD = 9
DYNAMIC_BROKER_CONFIG, DYNAMIC_DEFAULT_BROKER_CONFIG = 2, 3
SET, DELETE = 0, 1
R, W = False, True   # read-only, or updated dynamically

# Kafka's DescribeConfigs ConfigType of each ConfigDef type
CONFIG_TYPES = {"BOOLEAN": BOOLEAN, "STRING": STRING, "INT": INT, "SHORT": SHORT, "LONG": LONG, "DOUBLE": 6,
                "LIST": LIST, "CLASS": 8, "PASSWORD": PASSWORD}
# name -> (Kafka 4.4's default, type, dynamic) of every broker config Kafka describes (its internal
# ones are not); a default of None: Kafka has none
BROKER_CONFIGS: dict[str, tuple[str | None, int, bool]] = {
    name: (default, CONFIG_TYPES[typ], dynamic)
    for name, (typ, default, _low, _high, _choices, dynamic, internal) in KAFKA_BROKER_CONFIGS.items() if not internal}
# null in Kafka's ConfigDef, the hours synonyms (168) standing in: described by the ms they come to
BROKER_CONFIGS["log.retention.ms"] = ("604800000", LONG, True)
BROKER_CONFIGS["log.roll.ms"] = ("604800000", LONG, True)
CONTROLLER = "CONTROLLER"


def static_values(ctx, node_id: int) -> dict[str, str | None]:
    """The value of every broker config as the node started with it."""
    out: dict[str, str | None] = {"offsets.topic.replication.factor": "1",
                                  "transaction.state.log.replication.factor": "1",
                                  "transaction.state.log.min.isr": "1", "min.insync.replicas": "1",
                                  "share.coordinator.state.topic.replication.factor": "1",
                                  "share.coordinator.state.topic.min.isr": "1"}
    out.update((name, value) for name, value in ctx.config.kafka_settings.items() if name in BROKER_CONFIGS)
    for name in BROKER_CONFIGS:
        s = KAFKA_NAMES.get(name)
        if s is not None:
            out[name] = config_text(s.get(ctx.config))
    host, port = ctx.placement.listeners.get(node_id, (ctx.config.advertised, 0))
    listener = ctx.config.security_protocol
    controller = ctx.config.node_id
    out.update({
        "node.id": str(node_id), "broker.id": str(node_id),
        "advertised.listeners": f"{listener}://{host}:{port}",
        "listeners": f"{listener}://{ctx.config.host}:{port}",
        "listener.security.protocol.map": f"{listener}:{listener},{CONTROLLER}:{listener}",
        "controller.listener.names": CONTROLLER,
        "process.roles": "broker,controller" if node_id == controller else "broker",
        "log.dirs": log_dir(ctx, node_id),
    })
    return out


def describe_broker(ctx, resource_name: str, keys, include_synonyms: bool) -> list[dict]:
    if resource_name == "":   # the cluster default: the dynamic defaults set
        return [_entry(name, [(value, DYNAMIC_DEFAULT_BROKER_CONFIG)], include_synonyms)
                for name, value in sorted(ctx.broker_configs.cluster.items()) if keys is None or name in keys]
    node_id = int(resource_name)
    static = static_values(ctx, node_id)
    out = []
    for name in sorted(BROKER_CONFIGS):
        if keys is not None and name not in keys:
            continue
        # ConfigHelper.createBrokerConfigEntry: the value the node has for the name itself, and the
        # levels it and its synonyms are set at (none for log.retention.ms left to log.retention.hours)
        synonyms = _broker_synonyms(ctx, name, node_id, static)
        out.append(_entry(name, [(v, s) for _, v, s in synonyms] or [(None, DEFAULT_CONFIG)], include_synonyms,
                          [n for n, _, _ in synonyms]))
    return out


def _entry(name: str, levels: list, include_synonyms: bool, names: list[str] | None = None) -> dict:
    """``levels``: (value, source) of each synonym, highest first; ``names``: theirs (else ``name``)."""
    _, typ, dynamic = BROKER_CONFIGS.get(name, (None, STRING, True))
    sensitive = typ == PASSWORD
    value, source = levels[0]
    hide = (lambda v: None) if sensitive else (lambda v: v)
    names = [name] * len(levels) if names is None else names
    synonyms = [{"name": n, "value": hide(v), "source": s} for n, (v, s) in zip(names, levels)]
    return {"name": name, "value": hide(value), "read_only": not dynamic, "is_default": source == DEFAULT_CONFIG,
            "config_source": source, "is_sensitive": sensitive, "config_type": typ, "documentation": None,
            "synonyms": synonyms if include_synonyms else []}


def alter_broker(ctx, resource, changes, replace_all: bool, validate_only: bool) -> dict:
    """``changes``: (name, operation, value). The resource named "" alters the cluster default."""
    result = {"error_code": ErrorCode.NONE, "error_message": None,
              "resource_type": resource.resource_type, "resource_name": resource.resource_name}
    name = resource.resource_name
    node_id = None if name == "" else int(name)
    dynamic = ctx.broker_configs
    current = dynamic.cluster if node_id is None else dynamic.of_node(node_id)
    wanted = {} if replace_all else dict(current)
    for config, op, value in changes:
        message = _check(config, op, value)
        if message:
            result["error_code"], result["error_message"] = ErrorCode.INVALID_REQUEST, message
            return result
        if op == SET:
            wanted[config] = value
        else:
            wanted.pop(config, None)
    if not validate_only:
        dynamic.replace(node_id, wanted)
    return result


def _check(name: str, op: int, value: str | None) -> str | None:
    spec = BROKER_CONFIGS.get(name)
    if spec is None or not spec[2]:
        return f"Cannot update these configs dynamically: Set({name})"
    if op not in (SET, DELETE):
        return f"Config value append/subtract is not allowed for config key {name}"
    if op == DELETE:
        return None
    if value is None:
        return f"Invalid value null for configuration {name}"
    typ = spec[1]
    if typ in (INT, LONG, SHORT):
        try:
            int(value)
        except ValueError:
            kind = {INT: "INT", LONG: "LONG", SHORT: "SHORT"}[typ]
            return f"Invalid value {value} for configuration {name}: Not a number of type {kind}"
    if typ == BOOLEAN and value.strip().lower() not in ("true", "false"):
        return f"Invalid value {value} for configuration {name}: Expected value to be either true or false"
    return None


# topic config -> the broker config describing names as its default: the first of Kafka 4.4's
# ServerTopicConfigSynonyms.ALL_TOPIC_CONFIG_SYNONYMS (TOPIC_CONFIG_SYNONYMS); a topic config
# missing here has no broker synonym
TOPIC_CONFIG_SYNONYMS = {
    "segment.bytes": "log.segment.bytes", "segment.ms": "log.roll.ms", "segment.jitter.ms": "log.roll.jitter.ms",
    "segment.index.bytes": "log.index.size.max.bytes", "flush.messages": "log.flush.interval.messages",
    "flush.ms": "log.flush.interval.ms", "retention.bytes": "log.retention.bytes",
    "retention.ms": "log.retention.ms", "max.message.bytes": "message.max.bytes",
    "max.decompressed.message.bytes": "max.decompressed.message.bytes",
    "index.interval.bytes": "log.index.interval.bytes",
    "delete.retention.ms": "log.cleaner.delete.retention.ms",
    "min.compaction.lag.ms": "log.cleaner.min.compaction.lag.ms",
    "max.compaction.lag.ms": "log.cleaner.max.compaction.lag.ms",
    "file.delete.delay.ms": "log.segment.delete.delay.ms",
    "min.cleanable.dirty.ratio": "log.cleaner.min.cleanable.ratio", "cleanup.policy": "log.cleanup.policy",
    "unclean.leader.election.enable": "unclean.leader.election.enable",
    "min.insync.replicas": "min.insync.replicas", "compression.type": "compression.type",
    "compression.gzip.level": "compression.gzip.level", "compression.lz4.level": "compression.lz4.level",
    "compression.zstd.level": "compression.zstd.level", "preallocate": "log.preallocate",
    "message.timestamp.type": "log.message.timestamp.type",
    "message.timestamp.before.max.ms": "log.message.timestamp.before.max.ms",
    "message.timestamp.after.max.ms": "log.message.timestamp.after.max.ms",
    "local.retention.ms": "log.local.retention.ms", "local.retention.bytes": "log.local.retention.bytes",
    "remote.copy.lag.ms": "log.remote.copy.lag.ms", "remote.copy.lag.bytes": "log.remote.copy.lag.bytes",
}


# DynamicBrokerConfig.brokerConfigSynonyms: the broker configs standing in for one another
_BROKER_CONFIG_SYNONYMS = {names[0]: names for names in (
    ("log.roll.ms", "log.roll.hours"), ("log.roll.jitter.ms", "log.roll.jitter.hours"),
    ("log.retention.ms", "log.retention.minutes", "log.retention.hours"),
    ("log.flush.interval.ms", "log.flush.scheduler.interval.ms"))}


def _broker_synonyms(ctx, broker_name: str, node_id: int | None = None,
                     static: dict[str, str | None] | None = None) -> list[tuple[str, str | None, int]]:
    """(name, value, source) of a broker config (a topic config's broker synonym, or one described
    itself) and the broker configs standing in for it, as ConfigHelper.configSynonyms: by source
    (dynamic node, dynamic cluster, static, ConfigDef default), each name set there in turn, dropping
    those before the config's own name (log.retention.ms has no ConfigDef default: at its default,
    log.retention.hours alone is set and dropped, so it has no synonyms)."""
    node_id = ctx.node_id if node_id is None else node_id
    names = _BROKER_CONFIG_SYNONYMS.get(broker_name, (broker_name,))
    dynamic = ctx.broker_configs
    static = static_values(ctx, node_id) if static is None else static
    out = []
    for n in names:
        if n in dynamic.of_node(node_id):
            out.append((n, dynamic.of_node(node_id)[n], DYNAMIC_BROKER_CONFIG))
    for n in names:
        if n in dynamic.cluster:
            out.append((n, dynamic.cluster[n], DYNAMIC_DEFAULT_BROKER_CONFIG))
    defaults = {n: config_text(KAFKA_BROKER_CONFIGS[n][1]) if n in KAFKA_BROKER_CONFIGS else None for n in names}
    for n in names:   # set at start-up to other than the default describing shows
        if static.get(n) is not None and static[n] != BROKER_CONFIGS.get(n, (defaults[n],))[0]:
            out.append((n, static[n], STATIC_BROKER_CONFIG))
    out += [(n, defaults[n], DEFAULT_CONFIG) for n in names if defaults[n] is not None]
    while out and out[0][0] != broker_name:
        out.pop(0)
    return out


def topic_entries(ctx, configs: dict[str, str], static: dict[str, str | None] | None = None):
    """(name, value, source, type, synonyms) of every topic config of a topic with ``configs`` set
    on it, as ConfigHelper.createTopicConfigEntry: its own value (DYNAMIC_TOPIC_CONFIG), then every
    level its broker synonym is set at (by the broker config's name); the source is the first
    synonym's, else DEFAULT_CONFIG with no synonyms. ``static``: ``static_values`` of this node,
    when the caller describes many topics (computed once, not for each synonym)."""
    static = static_values(ctx, ctx.node_id) if static is None else static
    for name, (default, typ) in sorted(TOPIC_CONFIG_DEFAULTS.items()):
        levels = [(name, configs[name], DYNAMIC_TOPIC_CONFIG)] if name in configs else []
        broker_name = TOPIC_CONFIG_SYNONYMS.get(name)
        if broker_name is not None:
            levels += _broker_synonyms(ctx, broker_name, static=static)
        _, value, source = levels[0] if levels else (name, default, DEFAULT_CONFIG)
        yield name, value, source, typ, [{"name": n, "value": v, "source": s} for n, v, s in levels]
