"""Replay of the ConsumerGroup* records of __consumer_offsets (Kafka's GroupMetadataManager.replay
for consumer groups); what every modern kind does alike is modern/replay.py's."""
from __future__ import annotations

from dataclasses import replace

from ..modern.replay import apply_partitions_group, assignment
from . import records
from .member import ClassicMeta, ConsumerMember, MemberState


def apply(group, k, v, now_ms: int) -> None:
    if not apply_partitions_group(group, k, v, records):
        member = group.members.get(k.member_id) or ConsumerMember(k.member_id)
        if k.version == records.MEMBER_METADATA:
            member = replace(member, instance_id=v.instance_id, rack_id=v.rack_id, client_id=v.client_id,
                             client_host=v.client_host, subscribed_topic_names=tuple(v.subscribed_topic_names),
                             subscribed_topic_regex=v.subscribed_topic_regex,
                             rebalance_timeout_ms=v.rebalance_timeout_ms, server_assignor=v.server_assignor,
                             classic=classic_meta(v.classic_member_metadata))
        else:
            member = replace(member, member_epoch=v.member_epoch, previous_member_epoch=v.previous_member_epoch,
                             state=records.STATES.get(v.state, MemberState.STABLE),
                             assigned=assignment(v.assigned_partitions),
                             pending_revocation=assignment(v.partitions_pending_revocation),
                             assignment_epochs=_assignment_epochs(v))
        group.put_member(member)


def _assignment_epochs(v) -> dict[tuple[bytes, int], int]:
    """Utils.assignmentFromTopicPartitions: each partition's assignment epoch; a record without
    them (or with a count that does not match) gives the member epoch (at least 0)."""
    default = max(v.member_epoch, 0)
    out = {}
    for entry in (*v.assigned_partitions, *v.partitions_pending_revocation):
        tid, parts, epochs = bytes(entry.topic_id), list(entry.partitions), entry.assignment_epochs
        if not epochs or len(epochs) != len(parts):
            epochs = [default] * len(parts)
        out.update(((tid, p), e) for p, e in zip(parts, epochs))
    return out


def remove(group, k) -> None:
    """No other ConsumerGroup* record has a tombstone of its own."""


def classic_meta(value) -> ClassicMeta | None:
    if value is None:
        return None
    return ClassicMeta(value.session_timeout_ms, tuple((p.name, bytes(p.metadata)) for p in value.supported_protocols))
