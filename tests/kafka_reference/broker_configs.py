"""Kafka 4.4's broker configs read from its own jars: ``DumpBrokerConfigs.java`` prints every key
of ``AbstractKafkaConfig.CONFIG_DEF`` (name, type, default, validator, dynamic, internal) as JSON;
``table`` turns that into the rows of ``kafkaemu/kafka_configs.py``, which this script writes:

    .venv/bin/python -m tests.kafka_reference.broker_configs /tmp/kafka44/lib > kafkaemu/kafka_configs.py

tests/test_kafka_configs.py checks the committed module against the jars (skipping without Java or
the jars)."""
from __future__ import annotations

import json
import pathlib
import subprocess
import sys

HERE = pathlib.Path(__file__).resolve().parent


def dump(lib_dir: str) -> list[dict]:
    """The JSON DumpBrokerConfigs.java prints, run with the jars of ``lib_dir`` (Java 11+ runs a source file)."""
    classpath = ":".join(str(p) for p in sorted(pathlib.Path(lib_dir).glob("*.jar")))
    out = subprocess.run(["java", "-cp", classpath, str(HERE / "DumpBrokerConfigs.java")], capture_output=True,
                         text=True, check=True, timeout=300).stdout
    return json.loads(out)


def _number(text):
    if text is None:
        return None
    value = float(text)
    return int(value) if value == int(value) else value


def table(keys: list[dict]) -> dict[str, tuple]:
    """name -> (type, default text or None, min, max, choices or None, dynamic, internal)."""
    rows = {}
    for k in keys:
        v = k["validator"] or {}
        default = None if isinstance(k["default"], dict) else k["default"]
        choices = None
        if v.get("class") in ("ValidString", "CaseInsensitiveValidString", "ValidList") and v.get("in"):
            listed = v["in"].strip("[]")
            choices = tuple(c.strip() for c in listed.split(",")) if listed else None
        low, high = (_number(v.get("min")), _number(v.get("max"))) if v.get("class") == "Range" else (None, None)
        rows[k["name"]] = (k["type"], default, low, high, choices, k["dynamic"], k["internal"])
    return rows


def render(rows: dict[str, tuple]) -> str:
    lines = ['"""Every broker config Apache Kafka 4.4 defines (``AbstractKafkaConfig.CONFIG_DEF``), derived from',
             "its jars by tests/kafka_reference/broker_configs.py and checked against them by",
             "tests/test_kafka_configs.py: name -> (type, default as Kafka writes it or None, lower bound, upper",
             "bound, the values it takes or None, updated dynamically, internal). Generated: do not edit.\"\"\"",
             "", "KAFKA_BROKER_CONFIGS: dict[str, tuple] = {"]
    lines += [f"    {name!r}: {row!r}," for name, row in sorted(rows.items())]
    lines.append("}")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.stdout.write(render(table(dump(sys.argv[1]))))
