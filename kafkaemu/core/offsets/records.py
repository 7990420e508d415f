"""__consumer_offsets records in Apache Kafka's format.

Key: int16 key version, then the key struct (OffsetCommitKey v1, GroupMetadataKey v2).
Value: int16 value version, then the value struct; a tombstone is a null value.
Value versions are the ones a current Kafka writes: OffsetCommitValue v3 (v1 when the commit carries
an explicit expire timestamp) and GroupMetadataValue v3.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass

from ...protocol.catalog import catalog
from .store import CommittedOffset

OFFSET_COMMIT_KEY_VERSION = 1
GROUP_METADATA_KEY_VERSION = 2
OFFSET_COMMIT_VALUE_VERSION = 3
OFFSET_COMMIT_VALUE_VERSION_WITH_EXPIRY = 1
GROUP_METADATA_VALUE_VERSION = 3

_I16 = struct.Struct(">h")


MAX_KEY_STRING_BYTES = 32767   # record keys are not flexible: their strings have an int16 length


def fits_record_key(group_id: str) -> bool:
    """Whether a group id can be written in a record key at all. Kafka creates such a group, fails to
    write its record and so answers UNKNOWN_SERVER_ERROR with nothing changed; kafkaemu answers the
    same before changing anything."""
    return len(group_id.encode("utf-8", "surrogatepass")) <= MAX_KEY_STRING_BYTES


def _versioned(version: int, body: bytes) -> bytes:
    return _I16.pack(version) + body


class UnknownRecordType(ValueError):
    """A key version no known record type has (Kafka's Deserializer.UnknownRecordTypeException)."""

    def __init__(self, version: int):
        super().__init__(f"unknown __consumer_offsets key version {version}")
        self.version = version


def _split(data: bytes) -> tuple[int, bytes]:
    if len(data) < 2:
        raise ValueError("record too short for a version prefix")
    return _I16.unpack_from(data)[0], data[2:]


@dataclass(frozen=True)
class OffsetKey:
    group: str
    topic: str
    partition: int


@dataclass(frozen=True)
class GroupKey:
    group: str


@dataclass(frozen=True)
class StoredMember:
    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    rebalance_timeout_ms: int
    session_timeout_ms: int
    subscription: bytes
    assignment: bytes


@dataclass(frozen=True)
class StoredGroup:
    protocol_type: str
    generation: int
    protocol: str | None
    leader: str | None
    current_state_timestamp_ms: int
    members: tuple[StoredMember, ...]


def encode_offset_key(group: str, topic: str, partition: int) -> bytes:
    body = catalog().data("OffsetCommitKey", OFFSET_COMMIT_KEY_VERSION).encode(
        {"group": group, "topic": topic, "partition": partition})
    return _versioned(OFFSET_COMMIT_KEY_VERSION, body)


def encode_offset_value(c: CommittedOffset) -> bytes:
    version = OFFSET_COMMIT_VALUE_VERSION if c.expire_timestamp_ms is None else OFFSET_COMMIT_VALUE_VERSION_WITH_EXPIRY
    body = catalog().data("OffsetCommitValue", version).encode({
        "offset": c.offset,
        "leader_epoch": c.leader_epoch,
        "metadata": c.metadata,
        "commit_timestamp": c.commit_timestamp_ms,
        "expire_timestamp": -1 if c.expire_timestamp_ms is None else c.expire_timestamp_ms,
    })
    return _versioned(version, body)


def encode_group_key(group: str) -> bytes:
    body = catalog().data("GroupMetadataKey", GROUP_METADATA_KEY_VERSION).encode({"group": group})
    return _versioned(GROUP_METADATA_KEY_VERSION, body)


def encode_group_value(g: StoredGroup) -> bytes:
    body = catalog().data("GroupMetadataValue", GROUP_METADATA_VALUE_VERSION).encode({
        "protocol_type": g.protocol_type,
        "generation": g.generation,
        "protocol": g.protocol,
        "leader": g.leader,
        "current_state_timestamp": g.current_state_timestamp_ms,
        "members": [{
            "member_id": m.member_id,
            "group_instance_id": m.group_instance_id,
            "client_id": m.client_id,
            "client_host": m.client_host,
            "rebalance_timeout": m.rebalance_timeout_ms,
            "session_timeout": m.session_timeout_ms,
            "subscription": m.subscription,
            "assignment": m.assignment,
        } for m in g.members],
    })
    return _versioned(GROUP_METADATA_VALUE_VERSION, body)


def decode_key(data: bytes) -> OffsetKey | GroupKey:
    version, body = _split(data)
    if version in (0, 1):
        k = catalog().data("OffsetCommitKey", version).decode(body)
        return OffsetKey(k.group, k.topic, k.partition)
    if version == 2:
        k = catalog().data("GroupMetadataKey", version).decode(body)
        return GroupKey(k.group)
    raise UnknownRecordType(version)


def decode_offset_value(data: bytes) -> CommittedOffset:
    version, body = _split(data)
    v = catalog().data("OffsetCommitValue", version).decode(body)
    expire = v.expire_timestamp if version == 1 else -1
    return CommittedOffset(
        offset=v.offset,
        leader_epoch=v.leader_epoch if version >= 3 else -1,
        metadata=v.metadata,
        commit_timestamp_ms=v.commit_timestamp,
        expire_timestamp_ms=None if expire == -1 else expire,
    )


def decode_group_value(data: bytes) -> StoredGroup:
    version, body = _split(data)
    v = catalog().data("GroupMetadataValue", version).decode(body)
    members = tuple(StoredMember(
        member_id=m.member_id,
        group_instance_id=m.group_instance_id if version >= 3 else None,
        client_id=m.client_id,
        client_host=m.client_host,
        rebalance_timeout_ms=m.rebalance_timeout if version >= 1 else m.session_timeout,
        session_timeout_ms=m.session_timeout,
        subscription=bytes(m.subscription),
        assignment=bytes(m.assignment),
    ) for m in v.members)
    return StoredGroup(
        protocol_type=v.protocol_type,
        generation=v.generation,
        protocol=v.protocol,
        leader=v.leader,
        current_state_timestamp_ms=v.current_state_timestamp if version >= 2 else -1,
        members=members,
    )
