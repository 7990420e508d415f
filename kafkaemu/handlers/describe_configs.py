"""DescribeConfigs (key 32), v0-v4.

Topics (resource type 2) report every topic config with its effective value: set on the topic
(DYNAMIC_TOPIC_CONFIG), the broker's default (STATIC_BROKER_CONFIG: ``log.retention.ms`` and the
other topic defaults kafkaemu takes) or Kafka's default (DEFAULT_CONFIG). Brokers (type 4, name "" or this
node's id) report the settings kafkaemu has. Broker loggers (type 8) answer an empty list.
configuration_keys filters; synonyms list the entry itself; documentation is null.
"""
from ..protocol.errors import ErrorCode
from ..storage.topic_config import (BOOLEAN, DEFAULT_CONFIG, INT, LIST, LONG, SHORT, STATIC_BROKER_CONFIG,
                                    topic_config_entries)
from ..protocol.api_keys import ApiKey
from .authorization import DESCRIBE_CONFIGS, GROUP as GROUP_RESOURCE, TOPIC as TOPIC_RESOURCE, authorize, authorize_cluster
from .group_configs import GROUP, describe_group_configs
from .registry import registry

TOPIC, BROKER, BROKER_LOGGER = 2, 4, 8


def broker_configs(ctx) -> dict[str, tuple[str, int]]:
    c = ctx.config
    return {
        "broker.id": (str(ctx.config.node_id), INT),
        "node.id": (str(ctx.config.node_id), INT),
        "auto.create.topics.enable": (str(c.auto_create_topics).lower(), BOOLEAN),
        "num.partitions": (str(c.num_partitions), INT),
        "default.replication.factor": (str(c.default_replication_factor), INT),
        "message.max.bytes": (str(c.message_max_bytes), INT),
        "socket.request.max.bytes": (str(c.socket_request_max_bytes), INT),
        "offsets.topic.num.partitions": (str(c.offsets_topic_num_partitions), INT),
        "offsets.topic.replication.factor": ("1", INT),
        "offsets.retention.minutes": (str(c.offsets_retention_minutes), INT),
        "offset.metadata.max.bytes": (str(c.offset_metadata_max_bytes), INT),
        "group.initial.rebalance.delay.ms": (str(c.group_initial_rebalance_delay_ms), INT),
        "group.min.session.timeout.ms": (str(c.group_min_session_timeout_ms), INT),
        "group.max.session.timeout.ms": (str(c.group_max_session_timeout_ms), INT),
        "group.max.size": (str(c.group_max_size), INT),
        "log.retention.ms": (str(c.log_retention_ms), LONG),
        "log.retention.bytes": (str(c.log_retention_bytes), LONG),
        "log.segment.bytes": (str(c.log_segment_bytes), INT),
        "log.roll.ms": (str(c.log_roll_ms), LONG),
        "log.cleanup.policy": (",".join(c.log_cleanup_policy), LIST),
        "log.cleaner.delete.retention.ms": (str(c.log_cleaner_delete_retention_ms), LONG),
        "log.index.interval.bytes": (str(c.log_index_interval_bytes), INT),
        "min.insync.replicas": ("1", INT),
        "transaction.state.log.replication.factor": ("1", SHORT),
    }


@registry.register(ApiKey.DESCRIBE_CONFIGS, 0, 4)
def describe_configs(ctx, req):
    return {"results": [_describe(ctx, r, req.include_synonyms) for r in req.resources]}


def _entry(ctx, name, value, source, typ, synonyms):
    return {"name": name, "value": value, "read_only": False, "is_default": source == DEFAULT_CONFIG,
            "config_source": source, "is_sensitive": False, "config_type": typ, "documentation": None,
            "synonyms": [{"name": name, "value": value, "source": source}] if synonyms else []}


def _describe(ctx, res, synonyms):
    out = {"error_code": ErrorCode.NONE, "error_message": None, "resource_type": res.resource_type,
           "resource_name": res.resource_name, "configs": []}
    keys = None if res.configuration_keys is None else set(res.configuration_keys)
    if res.resource_type == TOPIC and not authorize(ctx, DESCRIBE_CONFIGS, TOPIC_RESOURCE, res.resource_name):
        out["error_code"] = ErrorCode.TOPIC_AUTHORIZATION_FAILED
        return out
    if res.resource_type in (BROKER, BROKER_LOGGER) and not authorize_cluster(ctx, DESCRIBE_CONFIGS):
        out["error_code"] = ErrorCode.CLUSTER_AUTHORIZATION_FAILED
        return out
    if res.resource_type == GROUP and not authorize(ctx, DESCRIBE_CONFIGS, GROUP_RESOURCE, res.resource_name):
        out["error_code"] = ErrorCode.GROUP_AUTHORIZATION_FAILED
        return out
    if res.resource_type == TOPIC:
        topic = ctx.store.get(res.resource_name)
        if topic is None:
            out["error_code"] = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
            out["error_message"] = f"Topic {res.resource_name} does not exist."
            return out
        for name, value, source, typ in topic_config_entries(topic.configs, topic.defaults):
            if keys is None or name in keys:
                out["configs"].append(_entry(ctx, name, value, source, typ, synonyms))
    elif res.resource_type == BROKER:
        if res.resource_name not in ("", str(ctx.config.node_id)) and not (
                res.resource_name.isdigit() and int(res.resource_name) in ctx.placement.listeners):
            out["error_code"] = ErrorCode.INVALID_REQUEST
            out["error_message"] = f"Unexpected broker id, expected {ctx.config.node_id} or empty string, " \
                                   f"but received {res.resource_name}"
            return out
        for name, (value, typ) in sorted(broker_configs(ctx).items()):
            if keys is None or name in keys:
                out["configs"].append(_entry(ctx, name, value, STATIC_BROKER_CONFIG, typ, synonyms))
    elif res.resource_type == GROUP:
        for name, value, source, typ in describe_group_configs(ctx, res, keys):
            out["configs"].append(_entry(ctx, name, value, source, typ, synonyms))
    elif res.resource_type != BROKER_LOGGER:
        out["error_code"] = ErrorCode.INVALID_REQUEST
        out["error_message"] = f"Unsupported resource type {res.resource_type}"
    return out
