"""DescribeConfigs (key 32), v1-v4 (Kafka 4 removed the older versions, KIP-896: they close the connection), as a Kafka 4.4 broker answers.

Topics (resource type 2) report every topic config with its effective value and source: set on
the topic (DYNAMIC_TOPIC_CONFIG), else the broker config it defaults to at that config's source
(DYNAMIC_DEFAULT_BROKER_CONFIG for ``min.insync.replicas`` as a 4.x cluster, STATIC_BROKER_CONFIG
for a value kafkaemu starts with that is not Kafka's), else DEFAULT_CONFIG; synonyms list every
level (broker_configs.py). Brokers (type 4: "" for the cluster's dynamic defaults, or a node id)
report Kafka's broker configs with sources, read-only flags and synonyms (broker_configs.py);
broker loggers (type 8) the node's loggers (broker_loggers.py); groups (type 32) their group
configs (group_configs.py). configuration_keys filters; documentation is null.
"""
from ..protocol.errors import DEFAULT_MESSAGES, ErrorCode
from ..protocol.api_keys import ApiKey
from .authorization import DESCRIBE_CONFIGS, GROUP as GROUP_RESOURCE, TOPIC as TOPIC_RESOURCE, authorize, authorize_cluster
from .broker_configs import describe_broker, topic_entries
from .broker_loggers import describe_loggers, unexpected_node
from .client_metrics_configs import CLIENT_METRICS, describe_client_metrics
from .group_configs import GROUP, describe_group_configs
from .registry import registry

TOPIC, BROKER, BROKER_LOGGER = 2, 4, 8
DEFAULT_CONFIG = 5


@registry.register(ApiKey.DESCRIBE_CONFIGS, 1, 4)
def describe_configs(ctx, req):
    return {"results": [_describe(ctx, r, req.include_synonyms) for r in req.resources]}


def _entry(name, value, source, typ, synonyms):
    return {"name": name, "value": value, "read_only": False, "is_default": source == DEFAULT_CONFIG,
            "config_source": source, "is_sensitive": False, "config_type": typ, "documentation": None,
            "synonyms": synonyms}


def _describe(ctx, res, synonyms):
    # Kafka's ConfigHelper answers "" where it has no message
    out = {"error_code": ErrorCode.NONE, "error_message": "", "resource_type": res.resource_type,
           "resource_name": res.resource_name, "configs": []}
    keys = None if res.configuration_keys is None else set(res.configuration_keys)
    if res.resource_type == TOPIC and not authorize(ctx, DESCRIBE_CONFIGS, TOPIC_RESOURCE, res.resource_name):
        out["error_code"] = ErrorCode.TOPIC_AUTHORIZATION_FAILED
        out["error_message"] = DEFAULT_MESSAGES[out["error_code"]]   # ConfigHelper: error.message
        return out
    if res.resource_type in (BROKER, BROKER_LOGGER, CLIENT_METRICS) and \
            not authorize_cluster(ctx, DESCRIBE_CONFIGS):
        out["error_code"] = ErrorCode.CLUSTER_AUTHORIZATION_FAILED
        out["error_message"] = DEFAULT_MESSAGES[out["error_code"]]   # ConfigHelper: error.message
        return out
    if res.resource_type == GROUP and not authorize(ctx, DESCRIBE_CONFIGS, GROUP_RESOURCE, res.resource_name):
        out["error_code"] = ErrorCode.GROUP_AUTHORIZATION_FAILED
        out["error_message"] = DEFAULT_MESSAGES[out["error_code"]]   # ConfigHelper: error.message
        return out
    if res.resource_type == TOPIC:
        topic = ctx.store.get(res.resource_name)
        if topic is None:
            out["error_code"] = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
            return out
        for name, value, source, typ, levels in topic_entries(ctx, topic.configs):
            if keys is None or name in keys:
                out["configs"].append(_entry(name, value, source, typ, levels if synonyms else []))
    elif res.resource_type == BROKER:
        if res.resource_name not in ("", str(ctx.config.node_id)) and not (
                res.resource_name.isdigit() and int(res.resource_name) in ctx.placement.listeners):
            out["error_code"] = ErrorCode.INVALID_REQUEST
            out["error_message"] = f"Unexpected broker id, expected {ctx.config.node_id} or empty string, " \
                                   f"but received {res.resource_name}"
            return out
        out["configs"] = describe_broker(ctx, res.resource_name, keys, synonyms)
    elif res.resource_type == BROKER_LOGGER:
        message = unexpected_node(ctx, res.resource_name)
        if message:
            out["error_code"], out["error_message"] = ErrorCode.INVALID_REQUEST, message
            return out
        out["configs"] = describe_loggers(ctx, keys)
    elif res.resource_type == GROUP:
        for name, value, source, typ in describe_group_configs(ctx, res, keys):
            out["configs"].append(_entry(name, value, source, typ,
                                         [{"name": name, "value": value, "source": source}] if synonyms else []))
    elif res.resource_type == CLIENT_METRICS:
        out["error_code"], out["error_message"], out["configs"] = describe_client_metrics(ctx, res, keys)
    else:
        out["error_code"] = ErrorCode.INVALID_REQUEST
        out["error_message"] = f"Unsupported resource type {res.resource_type}"
    return out
