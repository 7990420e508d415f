"""KIP-848 consumer groups as __consumer_offsets records, in Apache Kafka's format, and their replay.

Key versions (int16 prefix): 3 ConsumerGroupMetadata (group epoch), 4 ConsumerGroupPartitionMetadata
(subscribed topics), 5 ConsumerGroupMemberMetadata (a member's subscription), 6
ConsumerGroupTargetAssignmentMetadata (assignment epoch), 7 ConsumerGroupTargetAssignmentMember,
8 ConsumerGroupCurrentMemberAssignment (member epoch, state, assigned and revoking partitions).
Values carry an int16 version 0; a removed member or group gets tombstones.

``RecordDiff`` keeps, per group, the plain values last written for each key and yields only what
changed, so a heartbeat that changes nothing writes nothing.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass, replace

from ...protocol.catalog import catalog
from .group import ConsumerGroup, ConsumerMember, MemberState, TopicMeta

_I16 = struct.Struct(">h")
GROUP_METADATA, PARTITION_METADATA, MEMBER_METADATA = 3, 4, 5
TARGET_METADATA, TARGET_MEMBER, CURRENT_MEMBER = 6, 7, 8
_NAMES = {
    GROUP_METADATA: "ConsumerGroupMetadata", PARTITION_METADATA: "ConsumerGroupPartitionMetadata",
    MEMBER_METADATA: "ConsumerGroupMemberMetadata", TARGET_METADATA: "ConsumerGroupTargetAssignmentMetadata",
    TARGET_MEMBER: "ConsumerGroupTargetAssignmentMember", CURRENT_MEMBER: "ConsumerGroupCurrentMemberAssignment",
}
_STATE_BYTES = {MemberState.STABLE: 0, MemberState.UNREVOKED_PARTITIONS: 1, MemberState.UNRELEASED_PARTITIONS: 2}
_STATES = {v: k for k, v in _STATE_BYTES.items()}


@dataclass(frozen=True)
class ConsumerKey:
    version: int
    group_id: str
    member_id: str | None = None


def is_consumer_key(data: bytes) -> bool:
    return len(data) >= 2 and _I16.unpack_from(data)[0] in _NAMES


def decode_key(data: bytes) -> ConsumerKey:
    version = _I16.unpack_from(data)[0]
    k = catalog().data(_NAMES[version] + "Key", version).decode(data[2:])
    return ConsumerKey(version, k.group_id, k.get("member_id"))


def encode_key(key: ConsumerKey) -> bytes:
    body = {"group_id": key.group_id}
    if key.member_id is not None:
        body["member_id"] = key.member_id
    return _I16.pack(key.version) + catalog().data(_NAMES[key.version] + "Key", key.version).encode(body)


def _partitions(assignment) -> tuple:
    return tuple((tid, tuple(sorted(ps))) for tid, ps in sorted(assignment.items()) if ps)


def _wire(parts: tuple) -> list[dict]:
    return [{"topic_id": tid, "partitions": list(ps)} for tid, ps in parts]


def snapshot(group: ConsumerGroup) -> dict[ConsumerKey, tuple]:
    """The plain value of every record describing ``group`` now."""
    gid = group.group_id
    out: dict[ConsumerKey, tuple] = {
        ConsumerKey(GROUP_METADATA, gid): (group.group_epoch,),
        ConsumerKey(PARTITION_METADATA, gid): tuple(
            (m.topic_id, m.name, m.num_partitions) for _, m in sorted(group.subscription_metadata.items())),
        ConsumerKey(TARGET_METADATA, gid): (group.assignment_epoch,),
    }
    for mid, m in group.members.items():
        out[ConsumerKey(MEMBER_METADATA, gid, mid)] = (
            m.instance_id, m.rack_id, m.client_id, m.client_host, tuple(m.subscribed_topic_names),
            m.subscribed_topic_regex, m.rebalance_timeout_ms, m.server_assignor)
        out[ConsumerKey(TARGET_MEMBER, gid, mid)] = _partitions(group.target.get(mid, {}))
        out[ConsumerKey(CURRENT_MEMBER, gid, mid)] = (
            m.member_epoch, m.previous_member_epoch, _STATE_BYTES[m.state], _partitions(m.assigned),
            _partitions(m.pending_revocation))
    return out


def encode_value(key: ConsumerKey, value: tuple) -> bytes:
    v = key.version
    if v == GROUP_METADATA:
        body = {"epoch": value[0]}
    elif v == PARTITION_METADATA:
        body = {"topics": [{"topic_id": tid, "topic_name": name, "num_partitions": n, "partition_metadata": []}
                           for tid, name, n in value]}
    elif v == MEMBER_METADATA:
        instance, rack, client_id, host, names, regex, rebalance, assignor = value
        body = {"instance_id": instance, "rack_id": rack, "client_id": client_id, "client_host": host,
                "subscribed_topic_names": list(names), "subscribed_topic_regex": regex,
                "rebalance_timeout_ms": rebalance, "server_assignor": assignor}
    elif v == TARGET_METADATA:
        body = {"assignment_epoch": value[0]}
    elif v == TARGET_MEMBER:
        body = {"topic_partitions": _wire(value)}
    else:
        epoch, previous, state, assigned, revoking = value
        body = {"member_epoch": epoch, "previous_member_epoch": previous, "state": state,
                "assigned_partitions": _wire(assigned), "partitions_pending_revocation": _wire(revoking)}
    return _I16.pack(0) + catalog().data(_NAMES[v] + "Value", 0).encode(body)


class RecordDiff:
    def __init__(self) -> None:
        self._written: dict[str, dict[ConsumerKey, tuple]] = {}

    def changes(self, group: ConsumerGroup) -> list[tuple[bytes, bytes | None]]:
        before = self._written.get(group.group_id, {})
        now = {} if group.dead else snapshot(group)
        out: list[tuple[bytes, bytes | None]] = []
        # Tombstones first, members before the group-level records (Kafka's order when deleting).
        for key in sorted(set(before) - set(now), key=lambda k: -k.version):
            out.append((encode_key(key), None))
        for key, value in now.items():
            if before.get(key) != value:
                out.append((encode_key(key), encode_value(key, value)))
        if now:
            self._written[group.group_id] = now
        else:
            self._written.pop(group.group_id, None)
        return out

    def forget(self, group_id: str) -> None:
        self._written.pop(group_id, None)

    def loaded(self, group: ConsumerGroup) -> None:
        self._written[group.group_id] = snapshot(group)


def _assignment(entries) -> dict[bytes, frozenset[int]]:
    return {bytes(e.topic_id): frozenset(e.partitions) for e in entries if e.partitions}


def apply(groups: dict[str, ConsumerGroup], key: ConsumerKey, value: bytes | None, now_ms: int) -> None:
    """Replay one record into ``groups`` (Kafka's GroupMetadataManager.replay for consumer groups)."""
    group = groups.get(key.group_id)
    if value is None:
        if group is None:
            return
        if key.member_id is not None:
            if key.version == MEMBER_METADATA:
                group.remove_member(key.member_id)
            elif key.version == TARGET_MEMBER:
                group.target.pop(key.member_id, None)
        elif key.version == GROUP_METADATA:
            del groups[key.group_id]
        return
    v = catalog().data(_NAMES[key.version] + "Value", _I16.unpack_from(value)[0]).decode(value[2:])
    if group is None:
        group = groups[key.group_id] = ConsumerGroup(key.group_id, now_ms)
    if key.version == GROUP_METADATA:
        group.group_epoch = v.epoch
    elif key.version == PARTITION_METADATA:
        group.subscription_metadata = {t.topic_name: TopicMeta(t.topic_name, bytes(t.topic_id), t.num_partitions)
                                       for t in v.topics}
    elif key.version == TARGET_METADATA:
        group.assignment_epoch = v.assignment_epoch
    elif key.version == TARGET_MEMBER:
        group.target[key.member_id] = _assignment(v.topic_partitions)
    else:
        member = group.members.get(key.member_id) or ConsumerMember(key.member_id)
        if key.version == MEMBER_METADATA:
            member = replace(member, instance_id=v.instance_id, rack_id=v.rack_id, client_id=v.client_id,
                             client_host=v.client_host, subscribed_topic_names=tuple(v.subscribed_topic_names),
                             subscribed_topic_regex=v.subscribed_topic_regex,
                             rebalance_timeout_ms=v.rebalance_timeout_ms, server_assignor=v.server_assignor)
        else:
            member = replace(member, member_epoch=v.member_epoch, previous_member_epoch=v.previous_member_epoch,
                             state=_STATES.get(v.state, MemberState.STABLE),
                             assigned=_assignment(v.assigned_partitions),
                             pending_revocation=_assignment(v.partitions_pending_revocation))
        group.put_member(member)

