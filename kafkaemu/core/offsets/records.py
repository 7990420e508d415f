"""Committed offsets as __consumer_offsets records, in Apache Kafka's format.

Key: OffsetCommitKey (written at version 1; version 0 reads the same). Value: OffsetCommitValue v3,
or v1 when the commit carries an explicit expire timestamp (OffsetCommit v2-4 retention), as a
current Kafka writes them. A tombstone (null value) deletes the committed offset.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass
from functools import lru_cache

from ...protocol.catalog import catalog
from ..record_format import split, versioned
from .store import CommittedOffset

KEY_VERSIONS = (0, 1)
OFFSET_COMMIT_KEY_VERSION = 1
OFFSET_COMMIT_VALUE_VERSION = 3
OFFSET_COMMIT_VALUE_VERSION_WITH_EXPIRY = 1


@dataclass(frozen=True)
class OffsetKey:
    group_id: str
    topic: str
    partition: int


@lru_cache(maxsize=None)
def _encoder(name: str, version: int):
    """The generated encoder of a record key or value (written on every commit)."""
    return catalog().data(name, version).fast.encode


@lru_cache(maxsize=8192)   # written on every commit: a group commits the same partitions again and again
def encode_offset_key(group: str, topic: str, partition: int) -> bytes:
    body = _encoder("OffsetCommitKey", OFFSET_COMMIT_KEY_VERSION)({"group": group, "topic": topic, "partition": partition})
    return versioned(OFFSET_COMMIT_KEY_VERSION, body)


def tombstone(group: str, topic: str, partition: int) -> tuple[bytes, None]:
    return encode_offset_key(group, topic, partition), None


# OffsetCommitValue v3 (not flexible): version, offset, leader epoch, metadata's length; the
# metadata; the commit timestamp. What its generated encoder writes, in two packs: every commit
# writes one (tests/core/test_replay.py compares the two).
_VALUE_V3_HEAD = struct.Struct(">hqih")
_INT64 = struct.Struct(">q")


def encode_offset_value(c: CommittedOffset) -> bytes:
    if c.expire_timestamp_ms is None:
        metadata = c.metadata.encode() if c.metadata else b""
        if len(metadata) > 0x7FFF:
            raise ValueError("metadata longer than 32767 bytes")
        return _VALUE_V3_HEAD.pack(OFFSET_COMMIT_VALUE_VERSION, c.offset, c.leader_epoch, len(metadata)) + metadata \
            + _INT64.pack(c.commit_timestamp_ms)
    return _encode_value(OFFSET_COMMIT_VALUE_VERSION_WITH_EXPIRY, c)


def _encode_value(version: int, c: CommittedOffset) -> bytes:
    """OffsetCommitValue ``version`` by its generated encoder."""
    body = _encoder("OffsetCommitValue", version)({
        "offset": c.offset,
        "leader_epoch": c.leader_epoch,
        "metadata": c.metadata,
        "commit_timestamp": c.commit_timestamp_ms,
        "expire_timestamp": -1 if c.expire_timestamp_ms is None else c.expire_timestamp_ms,
    })
    return versioned(version, body)


def decode_key(data: bytes) -> OffsetKey:
    version, body = split(data)
    if version not in KEY_VERSIONS:
        raise ValueError(f"key version {version} is not an offset commit")
    k = catalog().data("OffsetCommitKey", version).decode(body)
    return OffsetKey(k.group, k.topic, k.partition)


def decode_offset_value(data: bytes) -> CommittedOffset:
    version, body = split(data)
    v = catalog().data("OffsetCommitValue", version).decode(body)
    expire = v.expire_timestamp if version == 1 else -1
    return CommittedOffset(
        offset=v.offset,
        leader_epoch=v.leader_epoch if version >= 3 else -1,
        metadata=v.metadata,
        commit_timestamp_ms=v.commit_timestamp,
        expire_timestamp_ms=None if expire == -1 else expire,
    )
