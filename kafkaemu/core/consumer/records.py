"""KIP-848 consumer groups as __consumer_offsets records, in Apache Kafka's format.

Key versions (int16 prefix): 3 ConsumerGroupMetadata (group epoch), 4 ConsumerGroupPartitionMetadata
(subscribed topics), 5 ConsumerGroupMemberMetadata (a member's subscription), 6
ConsumerGroupTargetAssignmentMetadata (assignment epoch), 7 ConsumerGroupTargetAssignmentMember,
8 ConsumerGroupCurrentMemberAssignment (member epoch, state, assigned and revoking partitions).
Values carry an int16 version 0; a removed member or group gets tombstones.

``snapshot`` is a group's records as plain values; ``RecordDiff`` keeps, on each group (its
``written``, so a failed write's revert of the group reverts it too), what was last written and
yields only what changed, so a heartbeat that changes nothing writes nothing. Replaying the records
into groups is the manager's (``ConsumerGroupManager.replay``).
"""
from __future__ import annotations


from ...protocol.catalog import catalog
from ..group_api import Record
from ..record_format import GroupKey, GroupRecordCodec, assignment_parts, versioned, wire_parts
from ..record_format import RecordDiff as _RecordDiff
from .member import MemberState

GROUP_METADATA, PARTITION_METADATA, MEMBER_METADATA = 3, 4, 5
TARGET_METADATA, TARGET_MEMBER, CURRENT_MEMBER = 6, 7, 8
_NAMES = {
    GROUP_METADATA: "ConsumerGroupMetadata", PARTITION_METADATA: "ConsumerGroupPartitionMetadata",
    MEMBER_METADATA: "ConsumerGroupMemberMetadata", TARGET_METADATA: "ConsumerGroupTargetAssignmentMetadata",
    TARGET_MEMBER: "ConsumerGroupTargetAssignmentMember", CURRENT_MEMBER: "ConsumerGroupCurrentMemberAssignment",
}
KEY_VERSIONS = tuple(_NAMES)
STATE_BYTES = {MemberState.STABLE: 0, MemberState.UNREVOKED_PARTITIONS: 1, MemberState.UNRELEASED_PARTITIONS: 2}
STATES = {v: k for k, v in STATE_BYTES.items()}


ConsumerKey = GroupKey
_CODEC = GroupRecordCodec(_NAMES, "consumer group")
decode_key, encode_key, decode_value = _CODEC.decode_key, _CODEC.encode_key, _CODEC.decode_value
_partitions, _wire = assignment_parts, wire_parts


def snapshot(group) -> dict[ConsumerKey, tuple]:
    """The plain value of every record describing a ConsumerGroup now."""
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
            m.subscribed_topic_regex, m.rebalance_timeout_ms, m.server_assignor, m.classic)
        out[ConsumerKey(TARGET_MEMBER, gid, mid)] = _partitions(group.target.get(mid, {}))
        out[ConsumerKey(CURRENT_MEMBER, gid, mid)] = (
            m.member_epoch, m.previous_member_epoch, STATE_BYTES[m.state], _with_epochs(m, m.assigned),
            _with_epochs(m, m.pending_revocation))
    return out


def _with_epochs(member, assignment) -> tuple:
    """An assignment as sorted tuples, each partition with the epoch it was given at."""
    return tuple((tid, tuple((p, member.assignment_epoch(tid, p)) for p in ps)) for tid, ps in _partitions(assignment))


def _wire_with_epochs(parts: tuple) -> list[dict]:
    """TopicPartitions with AssignmentEpochs (tagged, Kafka 4.4), of the same length as Partitions."""
    return [{"topic_id": tid, "partitions": [p for p, _ in pes], "assignment_epochs": [e for _, e in pes]}
            for tid, pes in parts]


def encode_value(key: ConsumerKey, value: tuple) -> bytes:
    v = key.version
    if v == GROUP_METADATA:
        body = {"epoch": value[0]}
    elif v == PARTITION_METADATA:
        body = {"topics": [{"topic_id": tid, "topic_name": name, "num_partitions": n, "partition_metadata": []}
                           for tid, name, n in value]}
    elif v == MEMBER_METADATA:
        instance, rack, client_id, host, names, regex, rebalance, assignor, classic = value
        body = {"instance_id": instance, "rack_id": rack, "client_id": client_id, "client_host": host,
                "subscribed_topic_names": list(names), "subscribed_topic_regex": regex,
                "rebalance_timeout_ms": rebalance, "server_assignor": assignor,
                "classic_member_metadata": None if classic is None else {
                    "session_timeout_ms": classic.session_timeout_ms,
                    "supported_protocols": [{"name": n, "metadata": m} for n, m in classic.protocols]}}
    elif v == TARGET_METADATA:
        body = {"assignment_epoch": value[0]}
    elif v == TARGET_MEMBER:
        body = {"topic_partitions": _wire(value)}
    else:
        epoch, previous, state, assigned, revoking = value
        body = {"member_epoch": epoch, "previous_member_epoch": previous, "state": state,
                "assigned_partitions": _wire_with_epochs(assigned),
                "partitions_pending_revocation": _wire_with_epochs(revoking)}
    return versioned(0, catalog().data(_NAMES[v] + "Value", 0).encode(body))


def _tombstones(keys) -> list[Record]:
    """Members' records before the group-level ones, as Kafka orders a deletion."""
    return [(encode_key(key), None) for key in sorted(keys, key=lambda k: -k.version)]


def tombstones(group) -> list[Record]:
    """The records that delete a ConsumerGroup (every record it has)."""
    return _tombstones(snapshot(group))


RecordDiff = _RecordDiff(snapshot, _tombstones, encode_key, encode_value)
