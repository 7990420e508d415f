"""Replay of a modern group's __consumer_offsets records (Kafka's GroupMetadataManager.replay for
consumer, share and streams groups): what every kind's records do the same way (the group's
tombstone, a member's, its target's; the target assignment's epoch; a group made by its first
record), with the rest handed to the kind's own replay module (``apply`` a value, ``remove`` on
any other tombstone)."""
from __future__ import annotations

from .group import TopicMeta


def replay(ctx, kind, key: bytes, value: bytes | None) -> None:
    """``kind``: the manager of the records' kind (its type, group class, records and replay module)."""
    records = kind.records
    k = records.decode_key(key)
    group = ctx.group(k.group_id, kind.type)
    if value is None:
        if group is None:
            return
        if k.version == records.GROUP_METADATA:
            del ctx.groups[k.group_id]
        elif k.version == records.MEMBER_METADATA:
            group.remove_member(k.member_id)
        elif k.version == records.TARGET_MEMBER:
            group.target.pop(k.member_id, None)
        else:
            kind.replayer.remove(group, k)
        return
    v = records.decode_value(k, value)
    if group is None:
        existing = ctx.groups.get(k.group_id)
        if existing is not None and not existing.is_empty():
            raise ValueError(f"group {k.group_id} is not a {kind.name} group")
        # An Empty classic group here only held offsets replayed before this group's records.
        group = ctx.groups[k.group_id] = kind.group_class(k.group_id, ctx.now_ms)
    if k.version == records.TARGET_METADATA:
        group.assignment_epoch = v.assignment_epoch
    else:
        kind.replayer.apply(group, k, v, ctx.now_ms)


def assignment(entries) -> dict[bytes, frozenset[int]]:
    """A record's topic partitions as an Assignment, empty topics left out."""
    return {bytes(e.topic_id): frozenset(e.partitions) for e in entries if e.partitions}


def apply_partitions_group(group, k, v, records) -> bool:
    """The group epoch, subscribed topics' metadata and target members of a group assigning topic
    partitions (consumer and share groups); False for any other record."""
    if k.version == records.GROUP_METADATA:
        group.group_epoch = v.epoch
    elif k.version == records.PARTITION_METADATA:
        group.subscription_metadata = {t.topic_name: TopicMeta(t.topic_name, bytes(t.topic_id), t.num_partitions)
                                       for t in v.topics}
    elif k.version == records.TARGET_MEMBER:
        group.target[k.member_id] = assignment(v.topic_partitions)
    else:
        return False
    return True
