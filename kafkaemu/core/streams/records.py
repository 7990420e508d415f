"""Streams groups (KIP-1071) as __consumer_offsets records (durability: to come)."""
from __future__ import annotations

from ..group_api import Record


def member_metadata(m) -> tuple:
    """What StreamsGroupMemberMetadataValue holds of a member: a change of it bumps the group epoch."""
    return (m.instance_id, m.rack_id, m.client_id, m.client_host, m.rebalance_timeout_ms, m.topology_epoch,
            m.process_id, m.user_endpoint, m.client_tags)


def tombstones(group) -> list[Record]:
    return []


def replay(ctx, key: bytes, value: bytes | None) -> None:
    raise ValueError("streams group records are not replayed yet")


KEY_VERSIONS: tuple[int, ...] = ()


def decode_key(key: bytes):
    raise ValueError("not a streams group record")


class RecordDiff:
    @staticmethod
    def changes(group) -> list[Record]:
        return []

    @staticmethod
    def loaded(group) -> None:
        group.written = {}
