"""Streams groups (KIP-1071): StreamsGroupHeartbeat, member expiry and rebalance timeouts, deletion.

Follows Apache Kafka's GroupMetadataManager.streamsGroupHeartbeat: get or create the group and the
member (epoch checks), update the member (a change bumps the group epoch), initialize the topology
from the first member, configure it against the topics that exist (topology.py; a change of those
topics bumps the group epoch, as Kafka's metadata hash does), recompute the target assignment with
the task assignor when the group epoch is ahead, and reconcile the member towards it
(reconciliation.py). The answer carries the tasks when the member joined or its tasks changed,
the statuses (stale topology, missing or wrongly partitioned topics, a requested shutdown) and the
endpoints of every member when the member's endpoint epoch is behind. Internal topics the topology
needs and that do not exist are handed back for the broker to create (Kafka's KafkaApis does).

Timers: ``("streams-session", group, member)`` removes a silent member after the group's
streams.session.timeout.ms; ``("streams-rebalance", group, member)`` removes a member that has not
revoked its tasks within its rebalance timeout. Every change is written as Kafka's StreamsGroup*
records (records.py) through the runtime; ``replay`` rebuilds the groups on load.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Callable

from ...logging import get_logger
from ...protocol.errors import ErrorCode
from ..context import CoordinatorContext
from ..group_api import GroupError, GroupType
from ..record_format import fits_record_key
from . import assignor, records, replay
from .describe import endpoint_partitions
from .group import EMPTY, Endpoint, MemberState, StreamsGroup, StreamsGroupState, StreamsMember, TasksTuple, wire_tasks
from .reconciliation import reconcile
from .requests import LEAVE_GROUP_MEMBER_EPOCH, LEAVE_GROUP_STATIC_MEMBER_EPOCH, StreamsHeartbeat, validate_heartbeat
from .topology import SHUTDOWN_APPLICATION, STALE_TOPOLOGY, configure, describer, from_request
from .topology import metadata_hash as topology_metadata_hash

log = get_logger("kafkaemu.streams_groups")
E = ErrorCode
PartitionsOf = Callable[[str], "int | None"]
INTERNAL_TOPICS = "_internal_topics_to_create"   # the reply's key the coordinator takes them from


def error_response(code: ErrorCode, message: str | None = None) -> dict:
    return {"error_code": int(code), "error_message": message, "member_id": "", "member_epoch": 0,
            "heartbeat_interval_ms": 0, "status": None}


class StreamsGroupManager:
    def __init__(self, ctx: CoordinatorContext) -> None:
        self.ctx = ctx
        self.settings = ctx.settings.streams
        self.partitions_of: PartitionsOf = lambda topic: None

    def group(self, group_id: str) -> StreamsGroup | None:
        return self.ctx.group(group_id, GroupType.STREAMS)

    @property
    def groups(self):
        return self.ctx.groups_of(GroupType.STREAMS)

    def session_timeout_ms(self, group_id: str) -> int:
        return self.ctx.group_configs.value(group_id, "streams.session.timeout.ms")

    def heartbeat_interval_ms(self, group_id: str) -> int:
        return self.ctx.group_configs.value(group_id, "streams.heartbeat.interval.ms")

    def num_standby_replicas(self, group_id: str) -> int:
        return self.ctx.group_configs.value(group_id, "streams.num.standby.replicas")

    # ============================================================ heartbeat
    def heartbeat(self, req: StreamsHeartbeat, partitions_of: PartitionsOf) -> dict:
        if not fits_record_key(req.group_id):
            return error_response(E.UNKNOWN_SERVER_ERROR)
        self.partitions_of = partitions_of
        existing = self.ctx.groups.get(req.group_id)
        memento = existing.snapshot() if existing is not None else None
        try:
            validate_heartbeat(req)
            if req.member_epoch in (LEAVE_GROUP_MEMBER_EPOCH, LEAVE_GROUP_STATIC_MEMBER_EPOCH):
                return self._leave(req)
            return self._heartbeat(req)
        except GroupError as exc:
            # as a failed operation of Kafka's coordinator: nothing it changed stays
            if existing is None:
                self.ctx.groups.pop(req.group_id, None)
            else:
                self.ctx.groups[req.group_id] = existing
                existing.restore(memento)
            log.info("streams_heartbeat_error", group=req.group_id, member=req.member_id, epoch=req.member_epoch,
                     error=int(exc.code), message=exc.message)
            # GroupCoordinatorService.handleOperationException answers UNKNOWN_SERVER_ERROR without its message
            return error_response(exc.code, None if exc.code == E.UNKNOWN_SERVER_ERROR else exc.message)
        finally:
            group = self.group(req.group_id)
            if group is not None:
                self._persist(group)

    def _persist(self, group: StreamsGroup) -> None:
        self.ctx.append(group.group_id, records.RecordDiff.changes(group))

    def _heartbeat(self, req: StreamsHeartbeat) -> dict:
        joining = req.member_epoch == 0
        group, created = self._get_or_create_group(req.group_id, joining)
        if joining and len(group.members) >= self.settings.max_size and req.member_id not in group.members:
            raise GroupError(E.GROUP_MAX_SIZE_REACHED,
                             f"The streams group has reached its maximum capacity of {self.settings.max_size} members.")
        if req.instance_id is not None:   # Kafka 4.3's GroupMetadataManager.streamsGroupHeartbeat
            raise GroupError(E.UNKNOWN_SERVER_ERROR, "Static members are not supported yet.")
        owned = req.owned()
        member = group.members.get(req.member_id)
        if member is None:
            if not joining:
                raise GroupError(E.UNKNOWN_MEMBER_ID,
                                 f"Member {req.member_id} is not a member of group {group.group_id}.")
            member = StreamsMember(req.member_id)
            log.info("streams_member_joining", group=group.group_id, member=req.member_id)
        elif not joining:
            _check_epoch(member, req.member_epoch, owned)
        old_state = group.state

        # 1. the member
        updated = replace(
            member, rack_id=req.rack_id if req.rack_id is not None else member.rack_id,
            rebalance_timeout_ms=req.rebalance_timeout_ms if req.rebalance_timeout_ms != -1
            else member.rebalance_timeout_ms,
            topology_epoch=req.topology.epoch if req.topology is not None else member.topology_epoch,
            client_id=req.client_id, client_host=req.client_host,
            process_id=req.process_id if req.process_id is not None else member.process_id,
            client_tags=tuple(sorted((kv.key, kv.value) for kv in req.client_tags))
            if req.client_tags is not None else member.client_tags,
            user_endpoint=Endpoint(req.user_endpoint.host, req.user_endpoint.port)
            if req.user_endpoint is not None else member.user_endpoint)
        if req.task_offsets is not None:
            updated = replace(updated, task_offsets=_offsets(req.task_offsets))
        if req.task_end_offsets is not None:
            updated = replace(updated, task_end_offsets=_offsets(req.task_end_offsets))
        bump = req.member_id not in group.members or records.member_metadata(updated) != records.member_metadata(member)
        group.members[updated.member_id] = updated

        # 2. the topology
        statuses: list[dict] = []
        if req.topology is not None:
            self._maybe_init_topology(group, req)
        if group.topology is None:
            raise GroupError(E.UNKNOWN_SERVER_ERROR, "The topology is null and the group topology is also null.")
        if updated.topology_epoch < group.topology.epoch:
            statuses.append({"status_code": STALE_TOPOLOGY, "status_detail":
                             f"The member's topology epoch {updated.topology_epoch} is behind the group's topology "
                             f"epoch {group.topology.epoch}."})

        # 3. configured against the topics that exist now
        metadata_hash = topology_metadata_hash(group.topology, self.partitions_of)
        if metadata_hash != group.metadata_hash:
            bump = True
        if group.configured is None or metadata_hash != group.configured.metadata_hash or \
                group.configured.epoch != group.topology.epoch:
            group.configured = configure(group.topology, self.partitions_of)
            log.info("streams_topology_configured", group=group.group_id, epoch=group.topology.epoch,
                     ready=group.configured.ready, status=group.configured.status)
        configured = group.configured
        validated = group.topology.epoch if configured.ready else -1
        if configured.ready:
            for tasks in (owned.active, owned.standby, owned.warmup) if owned is not None else ():
                _check_tasks(configured, tasks)
        if validated != group.validated_topology_epoch:
            bump = True
        assignment_configs = (("num.standby.replicas", str(self.num_standby_replicas(group.group_id))),)
        if assignment_configs != group.assignment_configs:
            bump = True
        if bump:
            group.group_epoch += 1
            group.metadata_hash, group.validated_topology_epoch = metadata_hash, validated
            group.assignment_configs = assignment_configs
            log.info("streams_group_epoch_bumped", group=group.group_id, epoch=group.group_epoch,
                     member=updated.member_id)

        # 4. the target assignment
        if group.group_epoch > group.assignment_epoch:
            self._update_target_assignment(group)
        target = group.target.get(updated.member_id, EMPTY)

        # 5. reconciliation
        before = updated
        updated = reconcile(updated, group.assignment_epoch, target, group.owners, owned)
        group.members[updated.member_id] = updated
        if updated is not before:
            self._schedule_rebalance_timeout(group, updated)
        self._schedule_session_timeout(group.group_id, updated.member_id)
        if req.shutdown_application:
            group.shutdown_request_member_id = updated.member_id
        self._note_state(group, old_state)

        response = {"error_code": 0, "error_message": None, "member_id": updated.member_id,
                    "member_epoch": updated.member_epoch,
                    "heartbeat_interval_ms": self.heartbeat_interval_ms(group.group_id),
                    "acceptable_recovery_lag": 0, "task_offset_interval_ms": 0, "status": None,
                    "active_tasks": None, "standby_tasks": None, "warmup_tasks": None,
                    "endpoint_information_epoch": 0, "partitions_by_user_endpoint": None}
        if joining or updated.assigned != member.assigned:
            response["active_tasks"] = wire_tasks(updated.assigned.active)
            response["standby_tasks"] = wire_tasks(updated.assigned.standby)
            response["warmup_tasks"] = wire_tasks(updated.assigned.warmup)
            if updated.user_endpoint is not None:
                group.endpoint_information_epoch += 1
        if group.endpoint_information_epoch != req.endpoint_information_epoch:
            response["partitions_by_user_endpoint"] = endpoint_partitions(group, updated, self.partitions_of)
        if not created:
            response["endpoint_information_epoch"] = group.endpoint_information_epoch
        if configured.status is not None:
            statuses.append({"status_code": configured.status[0], "status_detail": configured.status[1]})
            response[INTERNAL_TOPICS] = dict(configured.to_create)
        if group.shutdown_request_member_id is not None:
            statuses.append({"status_code": SHUTDOWN_APPLICATION, "status_detail":
                             f"Streams group member {group.shutdown_request_member_id} encountered a fatal error "
                             f"and requested a shutdown for the entire application."})
        if statuses:
            response["status"] = statuses
        return response

    def _get_or_create_group(self, group_id: str, joining: bool) -> tuple[StreamsGroup, bool]:
        existing = self.ctx.groups.get(group_id)
        if existing is not None:
            if existing.type is GroupType.STREAMS:
                return existing, False
            if not joining or not existing.is_empty() or existing.type is not GroupType.CLASSIC:
                raise GroupError(E.GROUP_ID_NOT_FOUND, f"Group {group_id} is not a streams group.")
            # an Empty classic group holding only offsets becomes a streams group, its offsets kept
        elif not joining:
            raise GroupError(E.GROUP_ID_NOT_FOUND, f"Streams group {group_id} not found.")
        group = self.ctx.groups[group_id] = StreamsGroup(group_id, self.ctx.now_ms)
        log.info("streams_group_created", group=group_id)
        return group, True

    def _maybe_init_topology(self, group: StreamsGroup, req: StreamsHeartbeat) -> None:
        topology = from_request(req.topology)
        if group.topology is None:
            log.info("streams_topology_initialized", group=group.group_id, member=req.member_id, epoch=topology.epoch)
            group.topology = topology
        elif group.topology.epoch > topology.epoch:
            log.info("streams_member_stale_topology", group=group.group_id, member=req.member_id, epoch=topology.epoch)
        elif group.topology != topology:
            raise GroupError(E.INVALID_REQUEST, "Topology updates are not supported yet.")

    def _update_target_assignment(self, group: StreamsGroup) -> None:
        configured = group.configured
        if configured is not None and configured.ready:
            # Kafka's TargetAssignmentBuilder: each member with its previous target, for stickiness
            specs = {}
            for mid, m in group.members.items():
                was = group.target.get(mid, EMPTY)
                specs[mid] = assignor.MemberSpec(process_id=m.process_id, active_tasks=dict(was.active),
                                                 standby_tasks=dict(was.standby), warmup_tasks=dict(was.warmup),
                                                 instance_id=m.instance_id, rack_id=m.rack_id,
                                                 client_tags=dict(m.client_tags))
            try:
                result = assignor.assign(assignor.in_kafka_order(specs), describer(configured),
                                         self.num_standby_replicas(group.group_id))
            except assignor.TaskAssignorError as exc:
                raise GroupError(E.UNKNOWN_SERVER_ERROR, f"Failed to compute a new target assignment for epoch "
                                                         f"{group.group_epoch}: {exc}") from None
            group.target = {mid: TasksTuple(dict(a.active_tasks), dict(a.standby_tasks), dict(a.warmup_tasks))
                            for mid, a in result.items()}
            for mid in group.members:
                group.target.setdefault(mid, EMPTY)
        else:
            group.target = {mid: EMPTY for mid in group.members}
        group.assignment_epoch = group.group_epoch
        log.info("streams_target_assignment", group=group.group_id, epoch=group.group_epoch,
                 members=len(group.members), ready=configured is not None and configured.ready)

    def _note_state(self, group: StreamsGroup, old: StreamsGroupState) -> None:
        new = group.state
        if new is not old:
            log.info("streams_group_transition", group=group.group_id, from_state=old.value, to_state=new.value,
                     epoch=group.group_epoch)
            self.ctx.record_transition(group.group_id, old, new, group.group_epoch)

    # ============================================================ leaving and expiry
    def _leave(self, req: StreamsHeartbeat) -> dict:
        group = self.ctx.groups.get(req.group_id)
        if group is None or group.type is not GroupType.STREAMS:
            raise GroupError(E.GROUP_ID_NOT_FOUND, f"Streams group {req.group_id} not found.")
        if req.member_id not in group.members:
            raise GroupError(E.UNKNOWN_MEMBER_ID, f"Member {req.member_id} is not a member of group {req.group_id}.")
        log.info("streams_member_left", group=group.group_id, member=req.member_id, epoch=req.member_epoch)
        self.remove_member(group, req.member_id)
        return {"error_code": 0, "error_message": None, "member_id": req.member_id, "member_epoch": req.member_epoch,
                "heartbeat_interval_ms": 0, "status": None}

    def remove_member(self, group: StreamsGroup, member_id: str) -> None:
        """Kafka's removeStreamsMember: the member's records go, the group epoch moves on so the
        others are given its tasks."""
        old_state = group.state
        group.members.pop(member_id, None)
        group.target.pop(member_id, None)
        self.ctx.cancel(_session_key(group.group_id, member_id))
        self.ctx.cancel(_rebalance_key(group.group_id, member_id))
        if group.shutdown_request_member_id is not None and not group.members:
            group.shutdown_request_member_id = None
        group.group_epoch += 1
        self._note_state(group, old_state)

    def remove_all_members(self, group_id: str) -> None:
        group = self.group(group_id)
        if group is not None:
            self.remove_members(group_id, list(group.members))

    def remove_members(self, group_id: str, member_ids: list[str]) -> None:
        """These members leave at once, as if their sessions had run out (a test control)."""
        group = self.group(group_id)
        if group is None:
            return
        for member_id in member_ids:
            if member_id in group.members:
                self.remove_member(group, member_id)
        self._persist(group)

    def _schedule_session_timeout(self, group_id: str, member_id: str) -> None:
        key = _session_key(group_id, member_id)
        self.ctx.schedule(key, self.session_timeout_ms(group_id),
                          lambda: self.ctx.runtime.timer(group_id, key, lambda: self._expire(group_id, member_id, None)))

    def _schedule_rebalance_timeout(self, group: StreamsGroup, member: StreamsMember) -> None:
        key = _rebalance_key(group.group_id, member.member_id)
        if member.state is MemberState.UNREVOKED_TASKS and member.rebalance_timeout_ms > 0:
            gid, mid, epoch = group.group_id, member.member_id, member.member_epoch
            self.ctx.schedule(key, member.rebalance_timeout_ms,
                              lambda: self.ctx.runtime.timer(gid, key, lambda: self._expire(gid, mid, epoch)))
        else:
            self.ctx.cancel(key)

    def _expire(self, group_id: str, member_id: str, revoking_epoch: int | None) -> None:
        """A session ran out, or (``revoking_epoch``) the member did not revoke its tasks in time."""
        group = self.group(group_id)
        member = group.members.get(member_id) if group is not None else None
        if member is None:
            return
        if revoking_epoch is not None and (member.state is not MemberState.UNREVOKED_TASKS
                                           or member.member_epoch != revoking_epoch):
            return
        log.info("streams_member_expired", group=group_id, member=member_id,
                 reason="session" if revoking_epoch is None else "rebalance timeout")
        self.remove_member(group, member_id)
        self._persist(group)

    def is_member(self, group_id: str, member_id: str) -> bool:
        group = self.group(group_id)
        return group is not None and member_id in group.members

    # ============================================================ other APIs on streams groups
    def leave_group(self, req) -> dict:
        """A classic LeaveGroup naming a streams group: Kafka answers that the group is unknown."""
        return {"error_code": int(E.GROUP_ID_NOT_FOUND), "members": []}

    def offset_committed(self, group: StreamsGroup, member_id: str) -> None:
        """Nothing: a streams member's session is kept by its heartbeats."""

    def delete_group(self, group: StreamsGroup) -> None:
        for mid in list(group.members):
            self.ctx.cancel(_session_key(group.group_id, mid))
            self.ctx.cancel(_rebalance_key(group.group_id, mid))
        old_state = group.state
        group.dead = True
        del self.ctx.groups[group.group_id]
        log.info("streams_group_deleted", group=group.group_id)
        self._note_state(group, old_state)

    # ============================================================ replay of __consumer_offsets
    def replay(self, key: bytes, value: bytes | None) -> None:
        replay.replay(self.ctx, key, value)

    def after_load(self) -> None:
        """Once every record is replayed: members' sessions restart now; each topology is
        configured against the topics there are (a heartbeat configures it again if they changed)."""
        for group in self.groups.values():
            records.RecordDiff.loaded(group)
            if group.topology is not None:
                group.configured = configure(group.topology, self.partitions_of)
            for member_id in group.members:
                self._schedule_session_timeout(group.group_id, member_id)


def _offsets(entries) -> tuple:
    return tuple(sorted((e.subtopology_id, e.partition, e.offset) for e in entries))


def _session_key(group_id: str, member_id: str) -> tuple:
    return ("streams-session", group_id, member_id)


def _rebalance_key(group_id: str, member_id: str) -> tuple:
    return ("streams-rebalance", group_id, member_id)


def _check_tasks(configured, tasks) -> None:
    """GroupMetadataManager.throwIfRequestContainsInvalidTasks."""
    for sub, parts in tasks.items():
        s = (configured.subtopologies or {}).get(sub)
        if s is None:
            raise GroupError(E.STREAMS_INVALID_TOPOLOGY_EPOCH, f"Subtopology {sub} does not exist in the topology.")
        bad = sorted(p for p in parts if not 0 <= p < s.num_tasks)
        if bad:
            raise GroupError(E.STREAMS_INVALID_TOPOLOGY_EPOCH,
                             f"Task {sub}_{bad[0]} is not a valid task of the topology.")


def _check_epoch(member: StreamsMember, received: int, owned: TasksTuple | None) -> None:
    if received > member.member_epoch:
        raise GroupError(E.FENCED_MEMBER_EPOCH,
                         f"The streams group member has a greater member epoch ({received}) than the one known by "
                         f"the group coordinator ({member.member_epoch}). The member must abandon all its tasks "
                         f"and rejoin.")
    if received < member.member_epoch:
        if received != member.previous_member_epoch or owned is None or \
                not owned.minus(member.assigned).is_empty():
            raise GroupError(E.FENCED_MEMBER_EPOCH,
                             f"The streams group member has a smaller member epoch ({received}) than the one known "
                             f"by the group coordinator ({member.member_epoch}). The member must abandon all its "
                             f"tasks and rejoin.")
