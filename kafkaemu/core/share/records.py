"""KIP-932 share groups as __consumer_offsets records, in Apache Kafka's format.

Key versions (int16 prefix): 9 ShareGroupPartitionMetadata (subscribed topics), 10
ShareGroupMemberMetadata (a member's subscription), 11 ShareGroupMetadata (group epoch), 12
ShareGroupTargetAssignmentMetadata (assignment epoch), 13 ShareGroupTargetAssignmentMember, 14
ShareGroupCurrentMemberAssignment (member epochs and assigned partitions; state 0, Stable, as a share
member never reconciles), 15 ShareGroupStatePartitionMetadata (the share partitions initializing,
initialized and deleting: state_metadata.py), written once the group has any. Values carry an int16
version 0; a removed member or group gets tombstones.

``RecordDiff`` keeps on each group (``written``, reverted with the group by a failed write) what was
last written and yields only what changed. Replay is ``ShareGroupManager.replay``.
"""
from __future__ import annotations


from ...protocol.catalog import catalog
from ..group_api import Record
from ..record_format import GroupKey, GroupRecordCodec, assignment_parts, versioned, wire_parts
from ..record_format import RecordDiff as _RecordDiff

PARTITION_METADATA, MEMBER_METADATA, GROUP_METADATA = 9, 10, 11
TARGET_METADATA, TARGET_MEMBER, CURRENT_MEMBER = 12, 13, 14
STATE_PARTITION_METADATA = 15
_NAMES = {
    PARTITION_METADATA: "ShareGroupPartitionMetadata", MEMBER_METADATA: "ShareGroupMemberMetadata",
    GROUP_METADATA: "ShareGroupMetadata", TARGET_METADATA: "ShareGroupTargetAssignmentMetadata",
    TARGET_MEMBER: "ShareGroupTargetAssignmentMember", CURRENT_MEMBER: "ShareGroupCurrentMemberAssignment",
    STATE_PARTITION_METADATA: "ShareGroupStatePartitionMetadata",
}
KEY_VERSIONS = tuple(_NAMES)
STABLE = 0   # MemberState.STABLE's byte


ShareKey = GroupKey
_CODEC = GroupRecordCodec(_NAMES, "share group")
decode_key, encode_key, decode_value = _CODEC.decode_key, _CODEC.encode_key, _CODEC.decode_value
_partitions, _wire = assignment_parts, wire_parts


def snapshot(group) -> dict[ShareKey, tuple]:
    """The plain value of every record describing a ShareGroup now."""
    gid = group.group_id
    out: dict[ShareKey, tuple] = {
        ShareKey(GROUP_METADATA, gid): (group.group_epoch,),
        ShareKey(PARTITION_METADATA, gid): tuple(
            (m.topic_id, m.name, m.num_partitions) for _, m in sorted(group.subscription_metadata.items())),
        ShareKey(TARGET_METADATA, gid): (group.assignment_epoch,),
    }
    if group.state_metadata is not None:
        out[ShareKey(STATE_PARTITION_METADATA, gid)] = group.state_metadata.value()
    for mid, m in group.members.items():
        out[ShareKey(MEMBER_METADATA, gid, mid)] = (m.rack_id, m.client_id, m.client_host,
                                                    tuple(m.subscribed_topic_names))
        out[ShareKey(TARGET_MEMBER, gid, mid)] = _partitions(group.target.get(mid, {}))
        out[ShareKey(CURRENT_MEMBER, gid, mid)] = (m.member_epoch, m.previous_member_epoch, _partitions(m.assigned))
    return out


def encode_value(key: ShareKey, value: tuple) -> bytes:
    v = key.version
    if v == GROUP_METADATA:
        body = {"epoch": value[0]}
    elif v == PARTITION_METADATA:
        body = {"topics": [{"topic_id": tid, "topic_name": name, "num_partitions": n, "partition_metadata": []}
                           for tid, name, n in value]}
    elif v == MEMBER_METADATA:
        rack, client_id, host, names = value
        body = {"rack_id": rack, "client_id": client_id, "client_host": host, "subscribed_topic_names": list(names)}
    elif v == TARGET_METADATA:
        body = {"assignment_epoch": value[0]}
    elif v == TARGET_MEMBER:
        body = {"topic_partitions": _wire(value)}
    elif v == STATE_PARTITION_METADATA:
        initializing, initialized, deleting = value
        body = {"initializing_topics": _topic_partitions(initializing),
                "initialized_topics": _topic_partitions(initialized),
                "deleting_topics": [{"topic_id": tid, "topic_name": name} for tid, name in deleting]}
    else:
        epoch, previous, assigned = value
        body = {"member_epoch": epoch, "previous_member_epoch": previous, "state": STABLE,
                "assigned_partitions": _wire(assigned)}
    return versioned(0, catalog().data(_NAMES[v] + "Value", 0).encode(body))


def _topic_partitions(topics: tuple) -> list[dict]:
    return [{"topic_id": tid, "topic_name": name, "partitions": list(parts)} for tid, name, parts in topics]


# Kafka deletes a share group's member records first, then the target assignment metadata, the
# state partition metadata and the group's metadata last (ShareGroup.createGroupTombstoneRecords).
_TOMBSTONE_ORDER = {CURRENT_MEMBER: 0, TARGET_MEMBER: 1, MEMBER_METADATA: 2, TARGET_METADATA: 3,
                    PARTITION_METADATA: 4, STATE_PARTITION_METADATA: 5, GROUP_METADATA: 6}


def _tombstones(keys) -> list[Record]:
    return [(encode_key(key), None) for key in sorted(keys, key=lambda k: _TOMBSTONE_ORDER[k.version])]


def tombstones(group) -> list[Record]:
    """A deleted group's records; its share partitions are first recorded as deleting, as Kafka's
    DeleteGroups writes them before deleting their state (shareGroupBuildPartitionDeleteRequest)."""
    out = []
    if group.state_metadata is not None:
        key = ShareKey(STATE_PARTITION_METADATA, group.group_id)
        out.append((encode_key(key), encode_value(key, group.state_metadata.delete_all().value())))
    return out + _tombstones(snapshot(group))


RecordDiff = _RecordDiff(snapshot, _tombstones, encode_key, encode_value)
