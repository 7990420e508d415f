"""What StreamsGroupDescribe and the heartbeat's endpoint information say of a streams group
(Kafka's StreamsGroup.asDescribedGroup and EndpointToPartitionsManager)."""
from __future__ import annotations

from typing import Callable

from ...protocol.errors import ErrorCode
from ...protocol.operations import NOT_REQUESTED
from ..group_api import GroupType
from .group import EMPTY, StreamsGroup, StreamsMember, Tasks, TasksTuple, wire_tasks

E = ErrorCode


def task_partitions(group: StreamsGroup, tasks: Tasks, partitions_of: Callable[[str], "int | None"]) -> list[dict]:
    """The input topic partitions of ``tasks``: a task p of a subtopology reads partition p of each
    of its source topics that has one."""
    configured = group.configured
    subs = configured.subtopologies if configured is not None and configured.subtopologies else {}
    by_topic: dict[str, set[int]] = {}
    for sub_id, parts in tasks.items():
        sub = subs.get(sub_id)
        if sub is None:
            continue
        for topic in list(sub.source_topics) + [t.name for t in sub.repartition_source_topics]:
            n = partitions_of(topic) or 0
            chosen = {p for p in parts if p < n}
            if chosen:
                by_topic.setdefault(topic, set()).update(chosen)
    return [{"topic": t, "partitions": sorted(ps)} for t, ps in sorted(by_topic.items())]


def endpoint_partitions(group: StreamsGroup, updated: StreamsMember, partitions_of) -> list[dict]:
    """PartitionsByUserEndpoint: every member with an endpoint (the heartbeating one last) and the
    partitions its active and standby tasks read."""
    members = [m for mid, m in group.members.items() if mid != updated.member_id] + [updated]
    return [{"user_endpoint": {"host": m.user_endpoint.host, "port": m.user_endpoint.port},
             "active_partitions": task_partitions(group, m.assigned.active, partitions_of),
             "standby_partitions": task_partitions(group, m.assigned.standby, partitions_of)}
            for m in members if m.user_endpoint is not None]


def _assignment(tasks: TasksTuple) -> dict:
    return {"active_tasks": wire_tasks(tasks.active), "standby_tasks": wire_tasks(tasks.standby),
            "warmup_tasks": wire_tasks(tasks.warmup)}


def _topic_info(t) -> dict:
    """A declared TopicInfo or a configured InternalTopic (replication factor -1: the default, 0 on the wire)."""
    return {"name": t.name, "partitions": t.partitions, "replication_factor": max(t.replication_factor, 0),
            "topic_configs": [{"key": k, "value": v} for k, v in t.configs]}


def _topology(group: StreamsGroup) -> dict | None:
    """The configured topology (internal topics with their decided partition counts) once it could
    be configured, else the topology as the members declared it (Kafka's StreamsTopology and
    ConfiguredTopology.asStreamsGroupDescribeTopology); None before any member sent one."""
    if group.topology is None:
        return None
    configured = group.configured
    if configured is not None and configured.subtopologies is not None:
        subs = [(sid, s.source_topics, s.repartition_sink_topics, s.state_changelog_topics,
                 s.repartition_source_topics) for sid, s in configured.subtopologies.items()]
    else:
        subs = [(s.subtopology_id, s.source_topics, s.repartition_sink_topics, s.state_changelog_topics,
                 s.repartition_source_topics) for s in group.topology.subtopologies]
    return {"epoch": group.topology.epoch, "subtopologies": [
        {"subtopology_id": sid, "source_topics": sorted(sources), "repartition_sink_topics": sorted(sinks),
         "state_changelog_topics": [_topic_info(t) for t in logs],
         "repartition_source_topics": [_topic_info(t) for t in reps]}
        for sid, sources, sinks, logs, reps in sorted(subs)]}


def _offsets(entries) -> list[dict]:
    return [{"subtopology_id": s, "partition": p, "offset": o} for s, p, o in entries]


def _member(group: StreamsGroup, m: StreamsMember) -> dict:
    return {"member_id": m.member_id, "member_epoch": m.member_epoch, "instance_id": m.instance_id,
            "rack_id": m.rack_id, "client_id": m.client_id, "client_host": m.client_host,
            "topology_epoch": m.topology_epoch, "process_id": m.process_id,
            "user_endpoint": None if m.user_endpoint is None else {"host": m.user_endpoint.host,
                                                                    "port": m.user_endpoint.port},
            "client_tags": [{"key": k, "value": v} for k, v in m.client_tags],
            "task_offsets": _offsets(m.task_offsets), "task_end_offsets": _offsets(m.task_end_offsets),
            "assignment": _assignment(m.assigned), "target_assignment": _assignment(group.target.get(m.member_id, EMPTY)),
            "is_classic": False}


def described_error(code: ErrorCode, message: str | None, group_id: str) -> dict:
    return {"error_code": int(code), "error_message": message, "group_id": group_id, "group_state": "",
            "group_epoch": 0, "assignment_epoch": 0, "topology": None, "members": [],
            "authorized_operations": NOT_REQUESTED}


def describe(groups: dict, group_id: str, authorized_operations: int) -> dict:
    """A StreamsGroupDescribe entry."""
    if not group_id:
        return described_error(E.INVALID_GROUP_ID, None, group_id)
    group = groups.get(group_id)
    if group is None or getattr(group, "dead", False):
        return described_error(E.GROUP_ID_NOT_FOUND, f"Group {group_id} not found.", group_id)
    if group.type is not GroupType.STREAMS:
        return described_error(E.GROUP_ID_NOT_FOUND, f"Group {group_id} is not a streams group.", group_id)
    return {"error_code": 0, "error_message": None, "group_id": group_id, "group_state": group.state.value,
            "group_epoch": group.group_epoch, "assignment_epoch": group.assignment_epoch,
            "topology": _topology(group), "members": [_member(group, m) for m in group.members.values()],
            "authorized_operations": authorized_operations}

