"""KIP-1071 streams groups as __consumer_offsets records, in Apache Kafka's format.

Key versions (int16 prefix): 17 StreamsGroupMetadata (group epoch, metadata hash, validated
topology epoch, assignment configs), 19 StreamsGroupMemberMetadata, 20
StreamsGroupTargetAssignmentMetadata (assignment epoch), 21 StreamsGroupTargetAssignmentMember, 22
StreamsGroupCurrentMemberAssignment (epochs, member state, tasks and tasks pending revocation, the
assignment epoch of each active task), 23
StreamsGroupTopology. Values carry an int16 version 0; a removed member or group gets tombstones.

``RecordDiff`` keeps on each group (``written``, reverted with the group by a failed write) what was
last written and yields only what changed; ``replay.py`` rebuilds a group from them on load.
"""
from __future__ import annotations

from ...protocol.catalog import catalog
from ..group_api import Record
from ..record_format import GroupKey, GroupRecordCodec, RecordDiff as _RecordDiff, versioned

GROUP_METADATA, MEMBER_METADATA, TARGET_METADATA = 17, 19, 20
TARGET_MEMBER, CURRENT_MEMBER, TOPOLOGY = 21, 22, 23
_NAMES = {
    GROUP_METADATA: "StreamsGroupMetadata", MEMBER_METADATA: "StreamsGroupMemberMetadata",
    TARGET_METADATA: "StreamsGroupTargetAssignmentMetadata", TARGET_MEMBER: "StreamsGroupTargetAssignmentMember",
    CURRENT_MEMBER: "StreamsGroupCurrentMemberAssignment", TOPOLOGY: "StreamsGroupTopology",
}
KEY_VERSIONS = tuple(_NAMES)
Key = GroupKey
_CODEC = GroupRecordCodec(_NAMES, "streams group")
decode_key, encode_key, decode_value = _CODEC.decode_key, _CODEC.encode_key, _CODEC.decode_value


def member_metadata(m) -> tuple:
    """What StreamsGroupMemberMetadataValue holds of a member: a change of it bumps the group epoch."""
    return (m.instance_id, m.rack_id, m.client_id, m.client_host, m.rebalance_timeout_ms, m.topology_epoch,
            m.process_id, m.user_endpoint, m.client_tags)


def _topology_value(topology) -> tuple:
    return (topology.epoch, topology.subtopologies)


def snapshot(group) -> dict[Key, tuple]:
    """The plain value of every record describing the group now."""
    gid = group.group_id
    out: dict[Key, tuple] = {
        Key(GROUP_METADATA, gid): (group.group_epoch, group.metadata_hash, group.validated_topology_epoch,
                                   group.assignment_configs),
        Key(TARGET_METADATA, gid): (group.assignment_epoch,),
    }
    if group.topology is not None:
        out[Key(TOPOLOGY, gid)] = _topology_value(group.topology)
    for mid, m in group.members.items():
        out[Key(MEMBER_METADATA, gid, mid)] = member_metadata(m)
        target = group.target.get(mid)
        out[Key(TARGET_MEMBER, gid, mid)] = target.key() if target is not None else ((), (), ())
        out[Key(CURRENT_MEMBER, gid, mid)] = (m.member_epoch, m.previous_member_epoch, m.state.value,
                                              m.assigned.key(), m.pending_revocation.key(), m.active_epochs)
    return out


def _wire(plain: tuple) -> list[dict]:
    return [{"subtopology_id": s, "partitions": list(ps)} for s, ps in plain]


def _wire_with_epochs(plain: tuple, epochs: dict) -> list[dict]:
    """Active tasks with the assignment epoch of each partition (TaskIds.AssignmentEpochs, tagged)."""
    return [{"subtopology_id": s, "partitions": list(ps), "assignment_epochs": [epochs[(s, p)] for p in ps]}
            for s, ps in plain]


def _topic_info(t) -> dict:
    return {"name": t.name, "partitions": t.partitions, "replication_factor": t.replication_factor,
            "topic_configs": [{"key": k, "value": v} for k, v in t.configs]}


def encode_value(key: Key, value: tuple) -> bytes:
    v = key.version
    if v == GROUP_METADATA:
        epoch, metadata_hash, validated, configs = value
        body = {"epoch": epoch, "metadata_hash": metadata_hash, "validated_topology_epoch": validated,
                "assignment_configs": [{"key": k, "value": x} for k, x in configs]}
    elif v == MEMBER_METADATA:
        instance, rack, client_id, host, timeout, topology_epoch, process, endpoint, tags = value
        body = {"instance_id": instance, "rack_id": rack, "client_id": client_id, "client_host": host,
                "rebalance_timeout_ms": timeout, "topology_epoch": topology_epoch, "process_id": process,
                "user_endpoint": None if endpoint is None else {"host": endpoint.host, "port": endpoint.port},
                "client_tags": [{"key": k, "value": x} for k, x in tags]}
    elif v == TARGET_METADATA:
        body = {"assignment_epoch": value[0]}
    elif v == TARGET_MEMBER:
        active, standby, warmup = value
        body = {"active_tasks": _wire(active), "standby_tasks": _wire(standby), "warmup_tasks": _wire(warmup)}
    elif v == CURRENT_MEMBER:
        epoch, previous, state, assigned, pending, active_epochs = value
        epochs = {(s, p): e for s, p, e in active_epochs}
        body = {"member_epoch": epoch, "previous_member_epoch": previous, "state": state,
                "active_tasks": _wire_with_epochs(assigned[0], epochs), "standby_tasks": _wire(assigned[1]),
                "warmup_tasks": _wire(assigned[2]),
                "active_tasks_pending_revocation": _wire_with_epochs(pending[0], epochs),
                "standby_tasks_pending_revocation": _wire(pending[1]),
                "warmup_tasks_pending_revocation": _wire(pending[2])}
    else:
        epoch, subs = value
        body = {"epoch": epoch, "subtopologies": [
            {"subtopology_id": s.subtopology_id, "source_topics": list(s.source_topics), "source_topic_regex": [],
             "state_changelog_topics": [_topic_info(t) for t in s.state_changelog_topics],
             "repartition_sink_topics": list(s.repartition_sink_topics),
             "repartition_source_topics": [_topic_info(t) for t in s.repartition_source_topics],
             "copartition_groups": [{"source_topics": list(src), "source_topic_regex": [],
                                     "repartition_source_topics": list(rep)} for src, rep in s.copartition_groups]}
            for s in subs]}
    return versioned(0, catalog().data(_NAMES[v] + "Value", 0).encode(body))


# As StreamsGroup.createGroupTombstoneRecords: members' assignments, targets, the target epoch, the
# members' metadata, the group's metadata, then its topology.
_TOMBSTONE_ORDER = {CURRENT_MEMBER: 0, TARGET_MEMBER: 1, TARGET_METADATA: 2, MEMBER_METADATA: 3, GROUP_METADATA: 4,
                    TOPOLOGY: 5}


def _tombstones(keys) -> list[Record]:
    return [(encode_key(key), None) for key in sorted(keys, key=lambda k: _TOMBSTONE_ORDER[k.version])]


def tombstones(group) -> list[Record]:
    return _tombstones(snapshot(group))


RecordDiff = _RecordDiff(snapshot, _tombstones, encode_key, encode_value)
