"""Group configs (config resources of type GROUP, 32; Kafka's GroupConfig) over the wire: set with
IncrementalAlterConfigs / AlterConfigs, read with DescribeConfigs, before or after the group
exists. What they are, their defaults (the kinds' broker settings) and their checks are the
core's (core/group_configs.py); an unknown name, a bad value or a heartbeat interval not below its
session timeout is INVALID_CONFIG with Kafka's message."""
from __future__ import annotations

from ..core.group_configs import GROUP_CONFIGS
from ..protocol.errors import ErrorCode
from ..storage.topic_config import BOOLEAN, DEFAULT_CONFIG, INT, LIST, LONG, STRING

GROUP = 32
DYNAMIC_GROUP_CONFIG = 8
SET, DELETE = 0, 1
TYPES = {"INT": INT, "LONG": LONG, "BOOLEAN": BOOLEAN, "STRING": STRING, "LIST": LIST}


def alter_group_configs(ctx, resource, changes, replace_all: bool, validate_only: bool) -> dict:
    result = {"error_code": ErrorCode.NONE, "error_message": None,
              "resource_type": resource.resource_type, "resource_name": resource.resource_name}
    if not resource.resource_name:
        result["error_code"], result["error_message"] = ErrorCode.INVALID_REQUEST, "Group name must not be empty."
        return result
    configs = ctx.group_configs
    wanted = {} if replace_all else configs.overrides(resource.resource_name)
    for name, op, value in changes:
        if op == SET:
            wanted[name] = value if value is not None else ""
        elif op == DELETE:
            wanted.pop(name, None)
        else:
            result["error_code"] = ErrorCode.INVALID_CONFIG
            result["error_message"] = f"Config value append/subtract is not allowed for config key {name}"
            return result
    unknown = next((name for name, _, _ in changes if name not in GROUP_CONFIGS), None)
    message = f"Unknown group config name: {unknown}" if unknown else configs.problem(wanted)
    if message:
        result["error_code"], result["error_message"] = ErrorCode.INVALID_CONFIG, message
    elif not validate_only:
        configs.replace(resource.resource_name, wanted)
    return result


def describe_group_configs(ctx, resource, keys) -> list[tuple[str, str, int, int]]:
    """(name, value, source, type) of every group config of the group."""
    return [(name, value, DYNAMIC_GROUP_CONFIG if set_here else DEFAULT_CONFIG, TYPES[typ])
            for name, value, set_here, typ in ctx.group_configs.describe(resource.resource_name)
            if keys is None or name in keys]

