"""The consumer protocol embedded in classic groups' JoinGroup and SyncGroup (Kafka's
ConsumerProtocol): subscriptions and assignments as bytes with a version prefix, read and written
for classic members of consumer groups and for the conversions between the two kinds of group."""
from __future__ import annotations

from collections.abc import Mapping

from ..protocol.catalog import catalog
from .record_format import split, versioned


def protocol_version(data: bytes) -> int:
    return split(data)[0] if len(data) >= 2 else 0


def decode_subscription(metadata: bytes):
    """A ConsumerProtocolSubscription (ValueError when malformed)."""
    return _decode("ConsumerProtocolSubscription", metadata)


def decode_assignment(data: bytes):
    """A ConsumerProtocolAssignment (ValueError when malformed)."""
    return _decode("ConsumerProtocolAssignment", data)


def _decode(name: str, data: bytes):
    try:
        version, body = split(data)
        # a newer version is read as the newest known one, as Kafka's ConsumerProtocol does
        return catalog().data(name, max(0, min(version, 3))).decode(body)
    except Exception as exc:
        raise ValueError(f"malformed {name}: {exc}") from exc


def encode_assignment(assigned: Mapping[bytes, frozenset[int]], names: Mapping[bytes, str], version: int) -> bytes:
    version = max(0, min(version, 3))
    parts = [{"topic": names[tid], "partitions": sorted(ps)} for tid, ps in sorted(assigned.items())
             if tid in names and ps]
    return versioned(version, catalog().data("ConsumerProtocolAssignment", version).encode(
        {"assigned_partitions": parts, "user_data": None}))


def owned_partitions(subscription, topics: Mapping) -> dict[bytes, set[int]]:
    """The partitions a classic member says it owns (subscription v1+), by topic id."""
    owned: dict[bytes, set[int]] = {}
    for tp in getattr(subscription, "owned_partitions", None) or ():
        meta = topics.get(tp.topic)
        if meta is not None:
            owned.setdefault(meta.topic_id, set()).update(tp.partitions)
    return owned
