"""Classic group metadata as __consumer_offsets records, in Apache Kafka's format.

Key: GroupMetadataKey (version 2). Value: GroupMetadataValue v3, as a current Kafka writes it; older
value versions read with Kafka's defaults for the fields they lack. A tombstone deletes the group.
"""
from __future__ import annotations

from dataclasses import dataclass

from ...protocol.catalog import catalog
from ..record_format import split, versioned

KEY_VERSIONS = (2,)
GROUP_METADATA_KEY_VERSION = 2
GROUP_METADATA_VALUE_VERSION = 3


@dataclass(frozen=True)
class GroupKey:
    group_id: str


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


def encode_group_key(group: str) -> bytes:
    body = catalog().data("GroupMetadataKey", GROUP_METADATA_KEY_VERSION).encode({"group": group})
    return versioned(GROUP_METADATA_KEY_VERSION, body)


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
    return versioned(GROUP_METADATA_VALUE_VERSION, body)


def decode_key(data: bytes) -> GroupKey:
    version, body = split(data)
    if version not in KEY_VERSIONS:
        raise ValueError(f"key version {version} is not group metadata")
    return GroupKey(catalog().data("GroupMetadataKey", version).decode(body).group)


def decode_group_value(data: bytes) -> StoredGroup:
    version, body = split(data)
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
