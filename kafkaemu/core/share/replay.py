"""Replay of the ShareGroup* records of __consumer_offsets (Kafka's GroupMetadataManager.replay for
share groups); what every modern kind does alike is modern/replay.py's."""
from __future__ import annotations

from dataclasses import replace

from ..modern.replay import apply_partitions_group, assignment
from . import records
from .group import ShareMember
from .state_metadata import StateMetadata


def apply(group, k, v, now_ms: int) -> None:
    if apply_partitions_group(group, k, v, records):
        return
    if k.version == records.STATE_PARTITION_METADATA:
        group.state_metadata = StateMetadata.from_record(v, now_ms)
    else:
        member = group.members.get(k.member_id) or ShareMember(k.member_id)
        if k.version == records.MEMBER_METADATA:
            member = replace(member, rack_id=v.rack_id, client_id=v.client_id, client_host=v.client_host,
                             subscribed_topic_names=tuple(v.subscribed_topic_names))
        else:
            member = replace(member, member_epoch=v.member_epoch, previous_member_epoch=v.previous_member_epoch,
                             assigned=assignment(v.assigned_partitions))
        group.members[k.member_id] = member


def remove(group, k) -> None:
    if k.version == records.STATE_PARTITION_METADATA:
        group.state_metadata = None
