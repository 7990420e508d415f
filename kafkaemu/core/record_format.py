"""What every __consumer_offsets record shares, whichever part of the coordinator writes it.

Key and value each start with an int16 version; the key's version names the record type (Kafka's
CoordinatorRecordType): 0-1 offset commit (offsets/records.py), 2 classic group metadata
(classic/records.py), 3-8 consumer group records (consumer/records.py), 9-15 share group records
(share/records.py). A tombstone is a null value.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Callable

from ..logging import get_logger
from ..protocol.catalog import catalog

_I16 = struct.Struct(">h")
MAX_KEY_STRING_BYTES = 32767   # record keys are not flexible: their strings have an int16 length


class UnknownRecordType(ValueError):
    """A key version no known record type has (Kafka's Deserializer.UnknownRecordTypeException)."""

    def __init__(self, version: int):
        super().__init__(f"unknown __consumer_offsets key version {version}")
        self.version = version


def fits_record_key(group_id: str) -> bool:
    """Whether a group id can be written in a record key at all. Kafka creates such a group, fails to
    write its record and so answers UNKNOWN_SERVER_ERROR with nothing changed; kafkaemu answers the
    same before changing anything."""
    return len(group_id.encode("utf-8", "surrogatepass")) <= MAX_KEY_STRING_BYTES


class RecordDiff:
    """The records that take a group from what was last written for it (``group.written``: key ->
    plain value) to what it is now (``snapshot(group)``): tombstones for the keys that are gone
    (``tombstones(keys)`` orders them as Kafka deletes), then the keys whose value is new or
    changed. One per kind of group, made from that kind's record functions."""

    def __init__(self, snapshot, tombstones, encode_key, encode_value) -> None:
        self._snapshot, self._tombstones = snapshot, tombstones
        self._encode_key, self._encode_value = encode_key, encode_value

    def changes(self, group) -> list:
        """The records to write now; from here on they count as written."""
        written, now = group.written, self._snapshot(group)
        out = self._tombstones(set(written) - set(now))
        encode_key, encode_value = self._encode_key, self._encode_value
        out.extend((encode_key(key), encode_value(key, value)) for key, value in now.items()
                   if written.get(key) != value)
        group.written = now
        return out

    def loaded(self, group) -> None:
        """The group was replayed from its records: they are what was written."""
        group.written = self._snapshot(group)

    def forget(self, group) -> None:
        """Nothing is written for the group any more (its records were deleted)."""
        group.written = {}


def replay_or_skip(replay: Callable[..., None], key: bytes, value: bytes | None, *args, event: str,
                   log=get_logger("kafkaemu.coordinator")) -> bool:
    """``replay(key, value, *args)``; False, logged as ``event``, when the record is skipped: an
    unknown key version (as Kafka's CoordinatorLoaderImpl skips it) or a record that does not decode
    (Kafka would fail the partition's load; kafkaemu skips it so the rest of the log still loads)."""
    try:
        replay(key, value, *args)
        return True
    except UnknownRecordType as exc:
        log.warning(event, reason="unknown record type", key_version=exc.version)
    except Exception as exc:
        log.error(event, reason="undecodable", error=str(exc)[:200], key=key[:64].hex() if key else None,
                  value_bytes=None if value is None else len(value))
    return False


def versioned(version: int, body: bytes) -> bytes:
    return _I16.pack(version) + body


def split(data: bytes) -> tuple[int, bytes]:
    """(version, rest) of a key or value."""
    if len(data) < 2:
        raise ValueError("record too short for a version prefix")
    return _I16.unpack_from(data)[0], data[2:]


@dataclass(frozen=True)
class EndTransactionMarker:
    """A commit or abort marker read back from __consumer_offsets (a control batch): it ends the
    producer's transaction, so its pending transactional offset commits apply or vanish."""
    producer_id: int
    commit: bool


@dataclass(frozen=True)
class GroupKey:
    """The key of a consumer or share group record: its version names the record type."""
    version: int
    group_id: str
    member_id: str | None = None


class GroupRecordCodec:
    """Keys and values of one group type's records (KIP-848 consumer groups, share groups), whose
    message names are ``names[key version]`` + ``Key`` / ``Value`` in the specs."""

    def __init__(self, names: dict[int, str], kind: str) -> None:
        self.names, self.kind = names, kind

    def decode_key(self, data: bytes) -> GroupKey:
        version, body = split(data)
        if version not in self.names:
            raise ValueError(f"key version {version} is not a {self.kind} record")
        k = catalog().data(self.names[version] + "Key", version).decode(body)
        return GroupKey(version, k.group_id, k.get("member_id"))

    def encode_key(self, key: GroupKey) -> bytes:
        body = {"group_id": key.group_id}
        if key.member_id is not None:
            body["member_id"] = key.member_id
        return versioned(key.version, catalog().data(self.names[key.version] + "Key", key.version).encode(body))

    def decode_value(self, key: GroupKey, value: bytes):
        """The value struct of the record type ``key`` names (fields as in its spec)."""
        version, body = split(value)
        return catalog().data(self.names[key.version] + "Value", version).decode(body)


def assignment_parts(assignment) -> tuple:
    """An assignment ({topic id: partitions}) as sorted tuples, without empty topics."""
    return tuple((tid, tuple(sorted(ps))) for tid, ps in sorted(assignment.items()) if ps)


def wire_parts(parts: tuple) -> list[dict]:
    return [{"topic_id": tid, "partitions": list(ps)} for tid, ps in parts]
