"""Shared by AlterConfigs and IncrementalAlterConfigs: apply config changes to a topic.

Topic resources (type 2), group resources (type 32, group_configs.py), broker resources (type 4:
the dynamic broker configs, broker_configs.py; "" is the cluster default, else the node the
request reached), broker loggers (type 8, broker_loggers.py) and CLIENT_METRICS subscriptions
(type 16, client_metrics_configs.py) are alterable; other types get INVALID_REQUEST."""
from ..protocol.errors import DEFAULT_MESSAGES, ErrorCode
from ..storage.topic_config import LIST, TOPIC_CONFIG_DEFAULTS, validate_topic_config, validate_topic_configs
from .authorization import ALTER_CONFIGS, GROUP, TOPIC as TOPIC_RESOURCE, authorize, authorize_cluster
from .broker_configs import alter_broker
from .broker_loggers import alter_loggers
from .client_metrics_configs import CLIENT_METRICS, alter_client_metrics
from .group_configs import alter_group_configs

TOPIC = 2
SET, DELETE, APPEND, SUBTRACT = 0, 1, 2, 3


BROKER, BROKER_LOGGER, GROUP_CONFIG = 4, 8, 32


def denied_resource(ctx, resource) -> dict | None:
    """The response entry of a resource the principal may not ALTER_CONFIGS, or None."""
    if ctx.authorizer is None:
        return None
    kind = resource.resource_type
    if kind == TOPIC and not authorize(ctx, ALTER_CONFIGS, TOPIC_RESOURCE, resource.resource_name):
        code = ErrorCode.TOPIC_AUTHORIZATION_FAILED
    elif kind in (BROKER, BROKER_LOGGER, CLIENT_METRICS) and not authorize_cluster(ctx, ALTER_CONFIGS):
        code = ErrorCode.CLUSTER_AUTHORIZATION_FAILED
    elif kind == GROUP_CONFIG and not authorize(ctx, ALTER_CONFIGS, GROUP, resource.resource_name):
        code = ErrorCode.GROUP_AUTHORIZATION_FAILED
    else:
        return None
    # Kafka sends the error's message for a topic or group, none for the cluster
    message = None if code == ErrorCode.CLUSTER_AUTHORIZATION_FAILED else DEFAULT_MESSAGES[code]
    return {"error_code": code, "error_message": message, "resource_type": kind,
            "resource_name": resource.resource_name}


def apply_changes(ctx, resource, changes, replace_all: bool, validate_only: bool) -> dict:
    """``changes`` is a list of (name, operation, value). Returns a response entry."""
    result = {"error_code": ErrorCode.NONE, "error_message": None,
              "resource_type": resource.resource_type, "resource_name": resource.resource_name}
    if resource.resource_type == GROUP_CONFIG:
        return alter_group_configs(ctx, resource, changes, replace_all, validate_only)
    if resource.resource_type == BROKER_LOGGER:
        return alter_loggers(ctx, resource, changes, not replace_all, validate_only)
    if resource.resource_type == BROKER:
        if resource.resource_name not in ("", str(ctx.node_id)):
            result["error_code"] = ErrorCode.INVALID_REQUEST
            result["error_message"] = f"Unexpected broker id, expected {ctx.node_id}, but received " \
                                      f"{resource.resource_name}"
            return result
        return alter_broker(ctx, resource, changes, replace_all, validate_only)
    if resource.resource_type == CLIENT_METRICS:
        return alter_client_metrics(ctx, resource, changes, replace_all, validate_only)
    if resource.resource_type != TOPIC:
        result["error_code"] = ErrorCode.INVALID_REQUEST
        result["error_message"] = f"Unsupported resource type {resource.resource_type}"
        return result
    topic = ctx.store.get(resource.resource_name)
    if topic is None:
        result["error_code"] = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        result["error_message"] = f"Topic {resource.resource_name} does not exist."
        return result
    configs = {} if replace_all else dict(topic.configs)
    for name, op, value in changes:
        message = validate_topic_config(name, value if op in (SET, APPEND, SUBTRACT) else None)
        if message is None and op in (APPEND, SUBTRACT) and TOPIC_CONFIG_DEFAULTS[name][1] != LIST:
            message = f"Config value append/subtract is not allowed for config key {name}"
        if message is None and op not in (SET, DELETE, APPEND, SUBTRACT):
            message = f"Unknown config operation {op}"
        if message:
            result["error_code"], result["error_message"] = ErrorCode.INVALID_CONFIG, message
            return result
        if op == SET:
            configs[name] = value
        elif op == DELETE:
            configs.pop(name, None)
        else:
            default = topic.defaults.get(name, TOPIC_CONFIG_DEFAULTS[name][0])
            current = [v for v in configs.get(name, default).split(",") if v]
            items = [v.strip() for v in value.split(",") if v.strip()]
            merged = current + [v for v in items if v not in current] if op == APPEND \
                else [v for v in current if v not in items]
            configs[name] = ",".join(merged)
    message = validate_topic_configs(configs)
    if message:
        result["error_code"], result["error_message"] = ErrorCode.INVALID_CONFIG, message
        return result
    if not validate_only:
        ctx.store.alter_topic_configs(topic.name, configs)
    return result
