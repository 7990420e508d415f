"""The ``_schemas`` topic as Confluent's registry writes it: JSON keys and values (SchemaKey,
ConfigKey, ModeKey, DeleteSubjectKey and their values, field names and order as Confluent's
Jackson classes), one partition, compacted. A permanent delete is a tombstone."""
from __future__ import annotations

import json
from typing import Iterator

from ..logging import get_logger
from ..storage.record_batch import build_batch, iter_records, parse_header

log = get_logger("kafkaemu.schema_registry.records")

SCHEMAS_TOPIC = "_schemas"
# As Confluent's KafkaStore creates it (kafkastore.topic): one partition, compacted.
SCHEMAS_TOPIC_CONFIGS = {"cleanup.policy": "compact"}
READ_BYTES = 1 << 20


def _dump(obj: dict) -> bytes:
    return json.dumps(obj, separators=(",", ":")).encode()


def schema_key(subject: str, version: int) -> bytes:
    return _dump({"keytype": "SCHEMA", "subject": subject, "version": version, "magic": 1})


def config_key(subject: str | None) -> bytes:
    return _dump({"keytype": "CONFIG", **({"subject": subject} if subject is not None else {}), "magic": 0})


def mode_key(subject: str | None) -> bytes:
    return _dump({"keytype": "MODE", **({"subject": subject} if subject is not None else {}), "magic": 0})


def delete_subject_key(subject: str) -> bytes:
    return _dump({"keytype": "DELETE_SUBJECT", "subject": subject, "magic": 0})


def value(obj: dict | None) -> bytes | None:
    """A value with Confluent's NON_EMPTY inclusion: None, empty lists and maps are left out."""
    if obj is None:
        return None
    return _dump({k: v for k, v in obj.items() if v is not None and v != [] and v != {}})


class SchemasTopic:
    """Appends to and reads ``_schemas`` in the broker's log store. The topic is created on the first
    write (and again after a control reset or a client deleted it)."""

    def __init__(self, store, clock) -> None:
        self.store = store
        self.clock = clock

    def topic(self, create: bool = False):
        topic = self.store.get(SCHEMAS_TOPIC)
        if topic is None and create:
            topic = self.store.create_topic(SCHEMAS_TOPIC, 1, dict(SCHEMAS_TOPIC_CONFIGS))
            log.info("schemas_topic_created")
        return topic

    def append(self, records: list[tuple[bytes, bytes | None]]) -> None:
        now_ms = self.clock.now_ms()
        plog = self.topic(create=True).partitions[0]
        batch = build_batch([(key, val, (), now_ms) for key, val in records])
        result = plog.append_batch(batch, now_ms)
        if result.error != "NONE":
            raise RuntimeError(f"{SCHEMAS_TOPIC} refused the registry's batch: {result.error} {result.message or ''}")

    def read(self, plog, offset: int) -> Iterator[tuple[int, dict | None, dict | None]]:
        """(offset, key, value) of each record from ``offset`` to the high watermark; a record that
        is not Confluent's JSON (a client wrote it) is logged and skipped, as Confluent does."""
        end = plog.high_watermark
        offset = max(offset, plog.log_start_offset)
        while offset < end:
            batches = plog.read(offset, READ_BYTES)
            if not batches:
                return
            for batch in batches:
                header = parse_header(batch)
                try:
                    records = [] if header.is_control else list(iter_records(batch))
                except Exception as exc:   # a client's batch that cannot be read: Confluent skips it too
                    log.warning("schemas_batch_skipped", offset=header.base_offset, reason=str(exc)[:200])
                    records = []
                if records:
                    for record in records:
                        if record.offset < offset or record.key is None:
                            continue
                        try:
                            key = json.loads(record.key)
                            val = None if record.value is None else json.loads(record.value)
                        except (ValueError, UnicodeDecodeError):
                            log.warning("schemas_record_skipped", offset=record.offset, reason="not JSON")
                            continue
                        if isinstance(key, dict) and (val is None or isinstance(val, dict)):
                            yield record.offset, key, val
                offset = max(offset, header.last_offset + 1)
