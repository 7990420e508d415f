"""Field-by-field comparison of two normalised answers."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

# Lists that are maps in the protocol (one entry per key): compared entry by entry, matched on the
# key, so one missing API does not shift every later entry. The path then reads "api_keys[18].max_version".
KEYED = {
    r"(.*\.)?api_keys": "api_key",
    r"(.*\.)?(supported_features|finalized_features)": "name",
    r"(.*\.)?configs": "name",
}


def _keyed(path: str) -> str | None:
    return next((key for pattern, key in KEYED.items() if re.fullmatch(pattern, path)), None)


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


def compare(kafka: Any, kafkaemu: Any, path: str = "", into: Comparison | None = None) -> Comparison:
    """Every leaf field of ``kafka`` compared with the same field of ``kafkaemu``; a list's length is a
    field too, and items are compared pairwise up to the shorter length."""
    result = into if into is not None else Comparison()
    if isinstance(kafka, dict) and isinstance(kafkaemu, dict):
        for key in kafka.keys() | kafkaemu.keys():
            sub = f"{path}.{key}" if path else key
            if key not in kafka or key not in kafkaemu:
                result.fields += 1
                result.differences.append(Difference(sub, _short(kafka.get(key, "<absent>")),
                                                     _short(kafkaemu.get(key, "<absent>"))))
            else:
                compare(kafka[key], kafkaemu[key], sub, result)
        return result
    if isinstance(kafka, list) and isinstance(kafkaemu, list):
        key = _keyed(path)
        if key and all(isinstance(i, dict) for i in kafka + kafkaemu):
            by_key = [{f"{path}[{item[key]}]": item for item in side} for side in (kafka, kafkaemu)]
            for name in sorted(by_key[0].keys() | by_key[1].keys()):
                if name not in by_key[0] or name not in by_key[1]:
                    result.fields += 1
                    result.differences.append(Difference(name, "<absent>" if name not in by_key[0] else "<present>",
                                                         "<absent>" if name not in by_key[1] else "<present>"))
                else:
                    compare(by_key[0][name], by_key[1][name], name, result)
            return result
        result.fields += 1
        if len(kafka) != len(kafkaemu):
            result.differences.append(Difference(f"{path}.length", len(kafka), len(kafkaemu)))
        for i, (a, b) in enumerate(zip(kafka, kafkaemu)):
            compare(a, b, f"{path}.{i}", result)
        return result
    result.fields += 1
    if kafka != kafkaemu:
        result.differences.append(Difference(path, _short(kafka), _short(kafkaemu)))
    return result
