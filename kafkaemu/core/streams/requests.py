"""StreamsGroupHeartbeat as the streams group manager takes it, and Kafka's checks before any group
is looked at (GroupCoordinatorService.throwIfStreamsGroupHeartbeatRequestIsInvalid and
...IsUsingUnsupportedFeatures), with its messages."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...protocol.errors import ErrorCode
from ..group_api import GroupError
from ..modern.requests import check_ids, invalid
from .group import TasksTuple, tasks_of

E = ErrorCode
LEAVE_GROUP_MEMBER_EPOCH = -1
LEAVE_GROUP_STATIC_MEMBER_EPOCH = -2


@dataclass
class StreamsHeartbeat:
    group_id: str
    member_id: str
    member_epoch: int
    endpoint_information_epoch: int = 0
    instance_id: str | None = None
    rack_id: str | None = None
    rebalance_timeout_ms: int = -1
    topology: Any = None            # the request's Topology struct, or None
    active_tasks: list | None = None
    standby_tasks: list | None = None
    warmup_tasks: list | None = None
    process_id: str | None = None
    user_endpoint: Any = None       # {host, port} or None
    client_tags: list | None = None
    task_offsets: list | None = None
    task_end_offsets: list | None = None
    shutdown_application: bool = False
    client_id: str = ""
    client_host: str = ""
    api_version: int = 1

    def owned(self) -> TasksTuple | None:
        """The tasks the member reports owning; None when it did not report them."""
        if self.active_tasks is None:
            return None
        return TasksTuple(tasks_of(self.active_tasks), tasks_of(self.standby_tasks), tasks_of(self.warmup_tasks))


def validate_heartbeat(req: StreamsHeartbeat) -> None:
    if req.topology is not None:
        for s in req.topology.subtopologies or ():
            if s.source_topic_regex:
                invalid("Regular expressions for source topics are not supported yet.")
    check_ids(req)
    if req.member_epoch == 0:
        if req.rebalance_timeout_ms == -1:
            invalid("RebalanceTimeoutMs must be provided in first request.")
        if req.active_tasks:
            invalid("ActiveTasks must be empty when (re-)joining.")
        if req.standby_tasks:
            invalid("StandbyTasks must be empty when (re-)joining.")
        if req.warmup_tasks:
            invalid("WarmupTasks must be empty when (re-)joining.")
        if req.topology is None:
            invalid("Topology must be non-null when (re-)joining.")
        for s in req.topology.subtopologies or ():
            for t in s.state_changelog_topics or ():
                if t.partitions != 0:
                    raise GroupError(E.STREAMS_INVALID_TOPOLOGY,
                                     f"Changelog topic {t.name} must have an undefined partition count, but it is "
                                     f"set to {t.partitions}.")
    elif req.member_epoch == LEAVE_GROUP_STATIC_MEMBER_EPOCH:
        if req.instance_id is None:
            invalid("InstanceId can't be null.")
    elif req.member_epoch < LEAVE_GROUP_STATIC_MEMBER_EPOCH:
        invalid(f"MemberEpoch is {req.member_epoch}, but must be greater than or equal to -2.")
    tasks = (req.active_tasks, req.standby_tasks, req.warmup_tasks)
    if any(t is not None for t in tasks) and any(t is None for t in tasks):
        invalid("If one task-type is non-null, all must be non-null.")
    if req.member_epoch != 0 and req.topology is not None:
        invalid("Topology can only be provided when (re-)joining.")
