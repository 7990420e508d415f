"""Decoding one ``__consumer_offsets`` record (key and value bytes) into a flat row.

Keys and values start with an int16 version, as Apache Kafka writes them: key version 0/1 is an
offset commit (group, topic, partition), key version 2 is group metadata (group). A null value is
a tombstone: the commit or the group was deleted. Records with other key versions (transaction
or share-group records never land here, but a future Kafka may add kinds) come back as
``kind="unknown"`` instead of failing the whole Spark job.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass, field

from ..core.classic import records as group_records
from ..core.classic.records import GroupKey, decode_group_value
from ..core.offsets import records as offset_records
from ..core.offsets.records import OffsetKey, decode_offset_value
from ..core.record_format import split
from ..protocol.catalog import catalog

OFFSET_COMMIT = "offset_commit"
GROUP_METADATA = "group_metadata"
UNKNOWN = "unknown"
_NEWEST_ASSIGNMENT_VERSION = 3


@dataclass
class MemberRow:
    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    assignment: list[tuple[str, int]]


@dataclass
class DecodedRecord:
    kind: str
    group: str | None = None
    topic: str | None = None
    partition: int | None = None
    tombstone: bool = False
    committed_offset: int | None = None
    leader_epoch: int | None = None
    metadata: str | None = None
    commit_timestamp_ms: int | None = None
    expire_timestamp_ms: int | None = None
    protocol_type: str | None = None
    protocol: str | None = None
    generation: int | None = None
    leader: str | None = None
    members: list[MemberRow] | None = field(default=None)

    def as_tuple(self) -> tuple:
        """The row in the field order of ``consumer_lag.DECODED_SCHEMA``."""
        members = None if self.members is None else [
            (m.member_id, m.group_instance_id, m.client_id, m.client_host, [list(tp) for tp in m.assignment])
            for m in self.members]
        return (self.kind, self.group, self.topic, self.partition, self.tombstone, self.committed_offset,
                self.leader_epoch, self.metadata, self.commit_timestamp_ms, self.expire_timestamp_ms,
                self.protocol_type, self.protocol, self.generation, self.leader, members)


def decode_key(key: bytes) -> OffsetKey | GroupKey:
    """An offset commit or group metadata key; other record types raise."""
    records = offset_records if split(key)[0] in offset_records.KEY_VERSIONS else group_records
    return records.decode_key(key)


def decode_record(key: bytes | None, value: bytes | None) -> DecodedRecord:
    """Never raises: a record that does not decode (truncated, unknown version) is ``kind="unknown"``."""
    if key is None:
        return DecodedRecord(UNKNOWN)
    try:
        return _decode(decode_key(bytes(key)), value)
    except Exception:  # construct and struct raise their own error types on malformed bytes
        return DecodedRecord(UNKNOWN)


def _decode(decoded_key, value: bytes | None) -> DecodedRecord:
    tombstone = value is None
    if isinstance(decoded_key, OffsetKey):
        row = DecodedRecord(OFFSET_COMMIT, decoded_key.group_id, decoded_key.topic, decoded_key.partition, tombstone)
        if not tombstone:
            committed = decode_offset_value(bytes(value))
            row.committed_offset = committed.offset
            row.leader_epoch = committed.leader_epoch
            row.metadata = committed.metadata
            row.commit_timestamp_ms = committed.commit_timestamp_ms
            row.expire_timestamp_ms = committed.expire_timestamp_ms
        return row
    if isinstance(decoded_key, GroupKey):
        row = DecodedRecord(GROUP_METADATA, decoded_key.group_id, tombstone=tombstone)
        if not tombstone:
            group = decode_group_value(bytes(value))
            row.protocol_type = group.protocol_type
            row.protocol = group.protocol
            row.generation = group.generation
            row.leader = group.leader
            row.commit_timestamp_ms = group.current_state_timestamp_ms if group.current_state_timestamp_ms >= 0 else None
            consumer = group.protocol_type == "consumer"
            row.members = [MemberRow(m.member_id, m.group_instance_id, m.client_id, m.client_host,
                                     assigned_partitions(m.assignment) if consumer else [])
                           for m in group.members]
        return row
    return DecodedRecord(UNKNOWN)


def assigned_partitions(assignment: bytes) -> list[tuple[str, int]]:
    """(topic, partition) pairs of a ConsumerProtocolAssignment; empty when it does not decode."""
    if len(assignment) < 2:
        return []
    (version,) = struct.unpack_from(">h", assignment)
    if version < 0:
        return []
    try:
        # newer versions only append fields, so the newest known layout reads their prefix
        decoded = catalog().data("ConsumerProtocolAssignment", min(version, _NEWEST_ASSIGNMENT_VERSION)).decode(
            assignment[2:])
    except Exception:
        return []
    return [(tp.topic, p) for tp in decoded.assigned_partitions for p in tp.partitions]
