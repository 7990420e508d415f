"""Replay of the StreamsGroup* records of __consumer_offsets (Kafka's GroupMetadataManager.replay for
streams groups): each record sets its part of the group; what every modern kind does alike (the
group's, a member's and a target's tombstones, the target epoch) is modern/replay.py's."""
from __future__ import annotations

from dataclasses import replace

from .group import Endpoint, MemberState, StreamsMember, TasksTuple, tasks_of
from .records import GROUP_METADATA, MEMBER_METADATA, TARGET_MEMBER, TOPOLOGY
from .topology import StreamsTopology, Subtopology, TopicInfo


def _tasks(v, prefix: str = "", suffix: str = "") -> TasksTuple:
    return TasksTuple(tasks_of(v[f"{prefix}active_tasks{suffix}"]), tasks_of(v[f"{prefix}standby_tasks{suffix}"]),
                      tasks_of(v[f"{prefix}warmup_tasks{suffix}"]))


def _active_epochs(v) -> tuple[tuple[str, int, int], ...]:
    """TasksTupleWithEpochs.fromCurrentAssignmentRecord: each active task's assignment epoch; a
    record without them (or with a count that does not match) gives the member epoch."""
    out = set()
    for entry in (*v.active_tasks, *v.active_tasks_pending_revocation):
        parts, epochs = list(entry.partitions or ()), list(entry.assignment_epochs or ())
        if len(epochs) != len(parts):
            epochs = [v.member_epoch] * len(parts)
        out.update((entry.subtopology_id, p, e) for p, e in zip(parts, epochs))
    return tuple(sorted(out))


def _info(t) -> TopicInfo:
    return TopicInfo(t.name, t.partitions, t.replication_factor,
                     tuple((c.key, c.value) for c in t.topic_configs))


def _topology(v) -> StreamsTopology:
    return StreamsTopology(v.epoch, tuple(sorted(
        (Subtopology(s.subtopology_id, tuple(s.source_topics), tuple(s.repartition_sink_topics),
                     tuple(_info(t) for t in s.state_changelog_topics),
                     tuple(_info(t) for t in s.repartition_source_topics),
                     tuple((tuple(g.source_topics), tuple(g.repartition_source_topics))
                           for g in s.copartition_groups))
         for s in v.subtopologies), key=lambda s: s.subtopology_id)))


def apply(group, k, v, now_ms: int) -> None:
    if k.version == GROUP_METADATA:
        group.group_epoch, group.metadata_hash = v.epoch, v.metadata_hash
        group.validated_topology_epoch = v.validated_topology_epoch
        group.assignment_configs = tuple((c.key, c.value) for c in v.assignment_configs or ())
    elif k.version == TARGET_MEMBER:
        group.target[k.member_id] = _tasks(v)
    elif k.version == TOPOLOGY:
        group.topology = _topology(v)
    else:   # the member's metadata or its current assignment
        member = group.members.get(k.member_id) or StreamsMember(k.member_id)
        if k.version == MEMBER_METADATA:
            endpoint = None if v.user_endpoint is None else Endpoint(v.user_endpoint.host, v.user_endpoint.port)
            member = replace(member, instance_id=v.instance_id, rack_id=v.rack_id, client_id=v.client_id,
                             client_host=v.client_host, rebalance_timeout_ms=v.rebalance_timeout_ms,
                             topology_epoch=v.topology_epoch, process_id=v.process_id, user_endpoint=endpoint,
                             client_tags=tuple((t.key, t.value) for t in v.client_tags))
        else:
            state = next((s for s in MemberState if s.value == v.state), MemberState.UNKNOWN)
            member = replace(member, member_epoch=v.member_epoch, previous_member_epoch=v.previous_member_epoch,
                             state=state, assigned=_tasks(v), pending_revocation=_tasks(v, suffix="_pending_revocation"),
                             active_epochs=_active_epochs(v))
        group.put_member(member)


def remove(group, k) -> None:
    if k.version == TOPOLOGY:
        group.topology = None
