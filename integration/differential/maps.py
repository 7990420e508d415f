"""Which lists of a response Kafka declares maps: the arrays whose entries have a ``mapKey`` field in
Kafka 4.4.0's own message definitions (``common/message/*Response.json`` in kafka-clients' jar, read
from the reference broker's download, never copied). Kafka builds such a list from a hash map, so
its order is no promise; the comparison matches entries on the key instead of on position."""
from __future__ import annotations

import functools
import json
import re
import zipfile

from kafka_reference.broker import JARS, KAFKA_VERSION


def snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def _fields(fields: list, path: tuple, out: dict) -> None:
    for f in fields:
        sub = f.get("fields")
        if not sub:
            continue
        here = path + (snake(f["name"]),)
        keys = tuple(snake(s["name"]) for s in sub if s.get("mapKey"))
        if keys and f["type"].startswith("[]"):
            out[".".join(here)] = keys
        _fields(sub, here, out)


@functools.cache
def map_keys() -> dict[int, dict[str, tuple[str, ...]]]:
    """api key -> {list path without indices ("topics.partitions") -> its key fields}."""
    jar = JARS / f"kafka-clients-{KAFKA_VERSION}.jar"
    found: dict[int, dict[str, tuple[str, ...]]] = {}
    with zipfile.ZipFile(jar) as z:
        for name in z.namelist():
            if not (name.startswith("common/message/") and name.endswith("Response.json")):
                continue
            text = "\n".join(line for line in z.read(name).decode().splitlines() if not line.strip().startswith("//"))
            spec = json.loads(text)
            if "apiKey" in spec:
                keys: dict[str, tuple[str, ...]] = {}
                _fields(spec.get("fields", []), (), keys)
                found[spec["apiKey"]] = keys
    return found
