"""Field-by-field comparison of two normalised answers."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from .maps import map_keys

# Lists matched on a key rather than on position: the ones Kafka's message definitions declare maps
# (maps.py), and these, which Kafka answers in an order of its own making without declaring them maps.
# (api key or None for any, list path pattern) -> (key fields, why). A path then reads
# "configs[retention.ms].value".
KEYED = {
    (None, r"(.*\.)?configs"): (("name",), "a config resource's entries, one per config name, in the order of "
                                           "Kafka's config map"),
    (2, r"topics\.\d+\.partitions"): (("partition_index",), "ListOffsets: a topic's partitions in the order of the "
                                                             "map Kafka's replica manager collects them in"),
    (None, r"groups"): (("group_id",), "described groups in the order of their __consumer_offsets partitions (Kafka's "
                                       "group coordinator answers shard by shard)"),
    (37, r"results"): (("name",), "CreatePartitions: Kafka's controller answers the topics it refused (in a HashSet's "
                                  "order) before the ones it changed (ControllerApis.createPartitions)"),
    (8, r"topics"): (("name",), "OffsetCommit: Kafka answers the topics it refused before the ones its coordinator "
                               "wrote (KafkaApis.handleOffsetCommitRequest)"),
    (None, r"groups\[[^]]+\]\.members"): (("member_id",), "a group's members in the order of the member "
                                                         "hash map of Kafka's group (member ids are random)"),
}


def _keyed(api_key: int | None, path: str) -> tuple[str, ...] | None:
    declared = map_keys().get(api_key, {}).get(re.sub(r"(\.\d+|\[[^]]*\])(?=\.|$)", "", path))
    if declared:
        return declared
    return next((keys for (api, pattern), (keys, _) in KEYED.items()
                 if api in (None, api_key) and re.fullmatch(pattern, path)), None)


def _key(item: dict, keys: tuple[str, ...]) -> str:
    return ",".join(str(item.get(k)) for k in keys)


@dataclass(frozen=True)
class Difference:
    path: str
    kafka: Any
    kafkaemu: Any


@dataclass
class Comparison:
    fields: int = 0
    differences: list[Difference] = field(default_factory=list)


def _short(value: Any) -> Any:
    if isinstance(value, (bytes, bytearray)) and len(value) > 48:
        return f"<{len(value)} bytes {bytes(value[:24]).hex()}...>"
    if isinstance(value, list):
        return f"<list of {len(value)}>"
    if isinstance(value, dict):
        return "<struct>"
    return value


def compare(kafka: Any, kafkaemu: Any, api_key: int | None = None, path: str = "",
            into: Comparison | None = None) -> Comparison:
    """Every leaf field of ``kafka`` compared with the same field of ``kafkaemu``; a list's length is a
    field too, and items are compared pairwise up to the shorter length (or matched on their key)."""
    result = into if into is not None else Comparison()
    if isinstance(kafka, dict) and isinstance(kafkaemu, dict):
        for key in kafka.keys() | kafkaemu.keys():
            sub = f"{path}.{key}" if path else key
            if key not in kafka or key not in kafkaemu:
                result.fields += 1
                result.differences.append(Difference(sub, _short(kafka.get(key, "<absent>")),
                                                     _short(kafkaemu.get(key, "<absent>"))))
            else:
                compare(kafka[key], kafkaemu[key], api_key, sub, result)
        return result
    if isinstance(kafka, list) and isinstance(kafkaemu, list):
        keys = _keyed(api_key, path)
        if keys and all(isinstance(i, dict) for i in kafka + kafkaemu):
            by_key = [{f"{path}[{_key(item, keys)}]": item for item in side} for side in (kafka, kafkaemu)]
            for name in sorted(by_key[0].keys() | by_key[1].keys()):
                if name not in by_key[0] or name not in by_key[1]:
                    result.fields += 1
                    result.differences.append(Difference(name, "<absent>" if name not in by_key[0] else "<present>",
                                                         "<absent>" if name not in by_key[1] else "<present>"))
                else:
                    compare(by_key[0][name], by_key[1][name], api_key, name, result)
            return result
        result.fields += 1
        if len(kafka) != len(kafkaemu):
            result.differences.append(Difference(f"{path}.length", len(kafka), len(kafkaemu)))
        for i, (a, b) in enumerate(zip(kafka, kafkaemu)):
            compare(a, b, api_key, f"{path}.{i}", result)
        return result
    result.fields += 1
    if kafka != kafkaemu:
        result.differences.append(Difference(path, _short(kafka), _short(kafkaemu)))
    return result
