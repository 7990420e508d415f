"""BROKER_LOGGER config resources (type 8) as Kafka's: a node's loggers (``root`` and kafkaemu's
own) with their levels, DYNAMIC_BROKER_LOGGER_CONFIG, writable. IncrementalAlterConfigs SETs a
level (Kafka's log4j names; another is INVALID_CONFIG, as an unknown logger) or DELETEs it (back to
the root's; the root's own is INVALID_REQUEST, as APPEND and SUBTRACT and the non-incremental
AlterConfigs). The levels are kept and reported per node; kafkaemu's log output keeps the level
it was started with."""
from __future__ import annotations

from ..protocol.errors import ErrorCode

DYNAMIC_BROKER_LOGGER_CONFIG = 6
ROOT = "root"
LEVELS = ("OFF", "FATAL", "ERROR", "WARN", "INFO", "DEBUG", "TRACE", "ALL")
LOGGERS = (ROOT, "kafkaemu.auth", "kafkaemu.authorizer", "kafkaemu.broker", "kafkaemu.consumer_groups",
           "kafkaemu.control", "kafkaemu.coordinator", "kafkaemu.offsets_topic", "kafkaemu.server",
           "kafkaemu.share_groups", "kafkaemu.storage", "kafkaemu.timers", "kafkaemu.transactions", "kafkaemu.wire")
SET, DELETE = 0, 1


def unexpected_node(ctx, resource_name: str) -> str | None:
    if not resource_name:
        return "Broker id must not be empty"
    if resource_name != str(ctx.node_id):
        return f"Unexpected broker id, expected {ctx.node_id}, but received {resource_name}"
    return None


def logger_levels(ctx, node_id: int) -> dict[str, str]:
    set_here = ctx.broker_configs.logger_levels.get(node_id, {})
    root = set_here.get(ROOT, "INFO")
    return {name: set_here.get(name, root) for name in LOGGERS}


def describe_loggers(ctx, keys) -> list[dict]:
    return [{"name": name, "value": level, "read_only": False, "is_default": False,
             "config_source": DYNAMIC_BROKER_LOGGER_CONFIG, "is_sensitive": False, "config_type": 0,
             "documentation": None, "synonyms": []}
            for name, level in logger_levels(ctx, ctx.node_id).items() if keys is None or name in keys]


def alter_loggers(ctx, resource, changes, incremental: bool, validate_only: bool) -> dict:
    result = {"error_code": ErrorCode.NONE, "error_message": None,
              "resource_type": resource.resource_type, "resource_name": resource.resource_name}
    code, message = ErrorCode.NONE, unexpected_node(ctx, resource.resource_name)
    if message:
        code = ErrorCode.INVALID_REQUEST
    elif not incremental:
        code, message = ErrorCode.INVALID_REQUEST, "AlterConfigs is not supported for the BROKER_LOGGER resource"
    wanted = dict(ctx.broker_configs.logger_levels.get(ctx.node_id, {}))
    for name, op, value in changes if code == ErrorCode.NONE else ():
        if op not in (SET, DELETE):
            code, message = ErrorCode.INVALID_REQUEST, f"{op} operation is not allowed for the BROKER_LOGGER resource"
        elif name not in LOGGERS:
            code, message = ErrorCode.INVALID_CONFIG, f"Logger {name} does not exist!"
        elif op == DELETE and name == ROOT:
            code, message = ErrorCode.INVALID_REQUEST, f"Removing the log level of the {ROOT} logger is not allowed"
        elif op == SET and value not in LEVELS:
            code = ErrorCode.INVALID_CONFIG
            message = (f"Cannot set the log level of {name} to {value} as it is not a supported log level. "
                       f"Valid log4j levels are {', '.join(LEVELS)}")
        elif op == SET:
            wanted[name] = value
        else:
            wanted.pop(name, None)
        if code != ErrorCode.NONE:
            break
    if code != ErrorCode.NONE:
        result["error_code"], result["error_message"] = code, message
    elif not validate_only:
        ctx.broker_configs.logger_levels[ctx.node_id] = wanted
    return result
