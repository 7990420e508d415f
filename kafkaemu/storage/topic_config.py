"""Topic-level settings the data path obeys, with Apache Kafka's defaults.

``Topic.configs`` holds only what was set explicitly; these helpers answer the effective value.
"""
from __future__ import annotations

TOPIC_DEFAULTS: dict[str, str] = {
    "cleanup.policy": "delete",
    "compression.type": "producer",
    "delete.retention.ms": "86400000",
    "max.message.bytes": "1048588",
    "message.timestamp.type": "CreateTime",
    "min.insync.replicas": "1",
    "retention.bytes": "-1",
    "retention.ms": "604800000",
    "segment.bytes": "1073741824",
    "segment.ms": "604800000",
}


def effective(configs: dict[str, str], name: str) -> str:
    value = configs.get(name)
    return TOPIC_DEFAULTS.get(name, "") if value is None else value


def int_config(configs: dict[str, str], name: str) -> int:
    return int(effective(configs, name))


def is_compacted(configs: dict[str, str]) -> bool:
    return "compact" in effective(configs, "cleanup.policy").replace(" ", "").split(",")


def is_deleting(configs: dict[str, str]) -> bool:
    return "delete" in effective(configs, "cleanup.policy").replace(" ", "").split(",")
