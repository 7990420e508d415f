"""A broker's log store on a manual clock with a SchemaRegistry over it: the registry's core driven
without sockets."""
from __future__ import annotations

import json

import pytest

from kafkaemu.broker import Broker
from kafkaemu.clock import ManualClock
from kafkaemu.config import BrokerConfig
from kafkaemu.schema_registry.errors import RegistryError
from kafkaemu.schema_registry.records import SCHEMAS_TOPIC
from kafkaemu.schema_registry.registry import SchemaRegistry
from kafkaemu.storage.record_batch import iter_records

T0 = 1_700_000_000_000


def record(name: str, *fields) -> str:
    """An Avro record schema; each field a (name, type) or (name, type, default)."""
    out = []
    for f in fields:
        item = {"name": f[0], "type": f[1]}
        if len(f) > 2:
            item["default"] = f[2]
        out.append(item)
    return json.dumps({"type": "record", "name": name, "fields": out})


class Env:
    def __init__(self, **settings) -> None:
        self.clock = ManualClock(T0)
        self.broker = Broker(BrokerConfig(**settings), T0)
        self.registry = SchemaRegistry(self.broker.store, self.clock)

    def register(self, subject: str, schema: str, schema_type: str = "AVRO", **extra) -> int:
        body = {"schema": schema, **({"schemaType": schema_type} if schema_type != "AVRO" else {}), **extra}
        return self.registry.register(subject, body)["id"]

    def records(self) -> list[tuple[dict, dict | None]]:
        """The (key, value)s of _schemas, as JSON."""
        topic = self.broker.store.get(SCHEMAS_TOPIC)
        found = []
        for batch in topic.partitions[0].batches():
            for r in iter_records(batch):
                found.append((json.loads(r.key), None if r.value is None else json.loads(r.value)))
        return found


def error_code(fn, *args, **kwargs) -> tuple[int, int]:
    with pytest.raises(RegistryError) as info:
        fn(*args, **kwargs)
    return info.value.status, info.value.error_code


# Confluent's compatibility levels and the checks each needs: (BACKWARD, FORWARD); FULL is both,
# _TRANSITIVE checks against every live version instead of the latest.
LEVEL_NEEDS = {"NONE": (False, False), "BACKWARD": (True, False), "BACKWARD_TRANSITIVE": (True, False),
               "FORWARD": (False, True), "FORWARD_TRANSITIVE": (False, True), "FULL": (True, True),
               "FULL_TRANSITIVE": (True, True)}
LEVELS = list(LEVEL_NEEDS)


def allowed_at(level: str, backward: bool, forward: bool) -> bool:
    """Whether a change that is ``backward`` and ``forward`` compatible (or not) passes ``level``."""
    needs_backward, needs_forward = LEVEL_NEEDS[level]
    return (backward or not needs_backward) and (forward or not needs_forward)
