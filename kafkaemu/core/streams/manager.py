"""Streams groups (KIP-1071): StreamsGroupHeartbeat, member expiry and rebalance timeouts, deletion.

Follows Apache Kafka 4.4's GroupMetadataManager.streamsGroupHeartbeat: get or create the group and
the member (epoch checks; a static member by its instance id, as the shared lifecycle keeps them),
update the member (a change bumps the group epoch), initialize the topology
from the first member, configure it against the topics that exist (topology.py; a change of those
topics bumps the group epoch, as Kafka's metadata hash does), recompute the target assignment with
the task assignor when the group epoch is ahead, and reconcile the member towards it
(reconciliation.py). The answer carries the tasks when the member joined or its tasks changed,
the statuses (stale topology, missing or wrongly partitioned topics, a requested shutdown) and the
endpoints of every member when the member's endpoint epoch is behind. Internal topics the topology
needs and that do not exist are handed back for the broker to create (Kafka's KafkaApis does).

Timers: ``("streams-session", group, member)`` removes a silent member after the group's
streams.session.timeout.ms; ``("streams-rebalance", group, member)`` removes a member that has not
revoked its tasks within its rebalance timeout. The lifecycle (leave vs beat, the revert of a failed
heartbeat, persistence, timers, removal, deletion, loading) is modern/lifecycle.py's; this module
supplies the streams kind's hooks. Every change is written as Kafka's StreamsGroup* records
(records.py) through the runtime; replay.py rebuilds the groups on load.
"""
from __future__ import annotations

import re
from dataclasses import replace

from ...logging import get_logger
from ...protocol.errors import ErrorCode
from ..context import CoordinatorContext
from ..group_api import GroupError
from ..modern.lifecycle import ModernGroupManager
from ..group_configs import GroupConfigs
from ..ports import PartitionsOf
from . import assignor, records, replay
from .describe import endpoint_partitions
from .group import EMPTY, Endpoint, MemberState, StreamsGroup, StreamsMember, TasksTuple, wire_tasks
from .reconciliation import reconcile
from .requests import LEAVE_GROUP_STATIC_MEMBER_EPOCH, StreamsHeartbeat, validate_heartbeat
from .topology import MISSING_CLIENT_TAGS, SHUTDOWN_APPLICATION, STALE_TOPOLOGY, configure, describer, from_request
from .topology import metadata_hash as topology_metadata_hash

log = get_logger("kafkaemu.streams_groups")
E = ErrorCode
INTERNAL_TOPICS = "_internal_topics_to_create"   # the reply's key the coordinator takes them from


def error_response(code: ErrorCode, message: str | None = None) -> dict:
    # Status defaults to an empty list in StreamsGroupHeartbeatResponse.json (no "default": "null")
    return {"error_code": int(code), "error_message": message, "member_id": "", "member_epoch": 0,
            "heartbeat_interval_ms": 0, "status": []}


class StreamsGroupManager(ModernGroupManager, name="streams", group_class=StreamsGroup, replayer=replay):
    held = "tasks"
    not_found = "Streams group {} not found."
    check_epoch_on_join = False
    replaces_empty_classic = True
    settles_empty_target = False

    def __init__(self, ctx: CoordinatorContext, group_config: GroupConfigs, partitions_of: PartitionsOf) -> None:
        """``group_config``: the groups' configs (group_configs.py); ``partitions_of``:
        a topic's partition count, None when it does not exist (what loaded topologies are configured
        against; a heartbeat brings its own view)."""
        super().__init__(ctx, ctx.settings.streams, group_config)
        self.partitions_of = partitions_of

    def num_standby_replicas(self, group_id: str) -> int:
        return self.config(group_id, "streams.num.standby.replicas")

    def assignment_configs(self, group_id: str) -> tuple[tuple[str, str], ...]:
        """streamsGroupAssignmentConfigs, by name: the standby replicas and, when set (Kafka 4.4), the
        client tags rack-aware standby assignment uses; a change of them bumps the group epoch."""
        configs = [("num.standby.replicas", str(self.num_standby_replicas(group_id)))]
        tags = self.config(group_id, "streams.rack.aware.assignment.tags")
        if tags:
            configs.append(("rack.aware.assignment.tags", ",".join(tags)))
        return tuple(configs)

    # ============================================================ heartbeat
    def validate(self, req: StreamsHeartbeat) -> None:
        validate_heartbeat(req)

    def error_answer(self, code: ErrorCode, message: str | None = None) -> dict:
        return error_response(code, message)

    def left_answer(self, req: StreamsHeartbeat) -> dict:
        return {"error_code": 0, "error_message": None, "member_id": req.member_id, "member_epoch": req.member_epoch,
                "heartbeat_interval_ms": 0, "status": []}

    def check_size(self, group: StreamsGroup, req: StreamsHeartbeat, joining: bool) -> None:
        if joining:
            super().check_size(group, req, joining)

    def leave(self, req: StreamsHeartbeat) -> dict:
        """streamsGroupLeave: a member may ask for the application's shutdown as it leaves."""
        group = self.group(req.group_id)
        if req.shutdown_application and group is not None:
            self.request_shutdown(group, req.member_id)
        return super().leave(req)

    @staticmethod
    def request_shutdown(group: StreamsGroup, member_id: str) -> None:
        """StreamsGroup.setShutdownRequestMemberId: the first member to ask is the one named, until
        the group is empty."""
        if group.shutdown_request_member_id is None:
            log.info("streams_shutdown_requested", group=group.group_id, member=member_id)
            group.shutdown_request_member_id = member_id

    def left_for_now(self, member: StreamsMember) -> StreamsMember:
        """streamsGroupStaticMemberGroupLeave: epoch -2, nothing pending revocation, its active tasks'
        assignment epochs reset to 0."""
        return replace(member, member_epoch=LEAVE_GROUP_STATIC_MEMBER_EPOCH, pending_revocation=EMPTY,
                       active_epochs=tuple((s, p, 0) for s, ps in sorted(member.assigned.active.items())
                                           for p in sorted(ps)))

    def rejoined(self, existing: StreamsMember, member_id: str) -> StreamsMember:
        """As the consumer kind's; the task offsets Kafka keeps by member id start empty."""
        return replace(super().rejoined(existing, member_id), task_offsets=(), task_end_offsets=())

    def owns_only_assigned(self, member: StreamsMember, req: StreamsHeartbeat) -> bool:
        owned = req.owned()
        return owned is not None and owned.minus(member.assigned).is_empty()

    def revoking(self, member: StreamsMember) -> bool:
        return member.state is MemberState.UNREVOKED_TASKS and member.rebalance_timeout_ms > 0

    def update_member(self, group: StreamsGroup, member: StreamsMember, req: StreamsHeartbeat, partitions_of):
        """The member, then the topology, then the topology configured against the topics that
        exist now (``partitions_of``); any change bumps the group epoch (a static member's only when it
        changes what the assignor reads)."""
        owned = req.owned()
        updated = replace(
            member, instance_id=req.instance_id if req.instance_id is not None else member.instance_id,
            rack_id=req.rack_id if req.rack_id is not None else member.rack_id,
            rebalance_timeout_ms=req.rebalance_timeout_ms if req.rebalance_timeout_ms != -1
            else member.rebalance_timeout_ms,
            topology_epoch=req.topology.epoch if req.topology is not None else member.topology_epoch,
            client_id=req.client_id, client_host=req.client_host,
            process_id=req.process_id if req.process_id is not None else member.process_id,
            client_tags=tuple(sorted((kv.key, kv.value) for kv in req.client_tags))
            if req.client_tags is not None else member.client_tags,
            user_endpoint=Endpoint(req.user_endpoint.host, req.user_endpoint.port)
            if req.user_endpoint is not None else member.user_endpoint)
        changed = updated.member_id not in group.members or \
            records.member_metadata(updated) != records.member_metadata(member)
        # hasStreamsMemberMetadataChanged: a static member's change bumps the group epoch only when
        # it touches what the assignment reads (its restarted instance gets its tasks back as they were)
        bump = changed and (req.instance_id is None or _assignment_inputs(updated) != _assignment_inputs(member))
        group.put_member(updated)

        statuses: list[dict] = []
        if req.topology is not None:
            self._maybe_init_topology(group, req)
        if group.topology is None:
            raise GroupError(E.UNKNOWN_SERVER_ERROR, "The topology is null and the group topology is also null.")
        if updated.topology_epoch < group.topology.epoch:
            statuses.append({"status_code": STALE_TOPOLOGY, "status_detail":
                             f"The member's topology epoch {updated.topology_epoch} is behind the group's topology "
                             f"epoch {group.topology.epoch}."})

        metadata_hash = topology_metadata_hash(group.topology, partitions_of)
        if metadata_hash != group.metadata_hash:
            bump = True
        if group.configured is None or metadata_hash != group.configured.metadata_hash or \
                group.configured.epoch != group.topology.epoch:
            group.configured = configure(group.topology, partitions_of)
            log.info("streams_topology_configured", group=group.group_id, epoch=group.topology.epoch,
                     ready=group.configured.ready, status=group.configured.status)
        configured = group.configured
        validated = group.topology.epoch if configured.ready else -1
        if configured.ready:
            for tasks in (owned.active, owned.standby, owned.warmup) if owned is not None else ():
                _check_tasks(configured, tasks)
        if req.task_offsets is not None or req.task_end_offsets is not None:
            updated = replace(updated, task_offsets=_offsets(req.task_offsets, updated.task_offsets),
                              task_end_offsets=_offsets(req.task_end_offsets, updated.task_end_offsets))
            group.put_member(updated)
        if validated != group.validated_topology_epoch:
            bump = True
        assignment_configs = self.assignment_configs(group.group_id)
        if assignment_configs != group.assignment_configs:
            bump = True
        if bump:
            group.metadata_hash, group.validated_topology_epoch = metadata_hash, validated
            group.assignment_configs = assignment_configs
        return updated, bump, (statuses, configured, partitions_of, owned)

    def reconcile(self, group: StreamsGroup, updated: StreamsMember, req: StreamsHeartbeat, note) -> StreamsMember:
        reconciled = reconcile(updated, group.assignment_epoch, group.target.get(updated.member_id, EMPTY),
                               group.owners, note[3])
        self.store_reconciled(group, updated, reconciled)
        if req.shutdown_application:
            self.request_shutdown(group, reconciled.member_id)
        return reconciled

    def answer(self, group: StreamsGroup, before: StreamsMember, member: StreamsMember, req: StreamsHeartbeat,
               joining: bool, created: bool, note) -> dict:
        statuses, configured, partitions_of, _ = note
        response = {"error_code": 0, "error_message": None, "member_id": member.member_id,
                    "member_epoch": member.member_epoch,
                    "heartbeat_interval_ms": self.heartbeat_interval_ms(group.group_id),
                    "acceptable_recovery_lag_legacy": 0,
                    "task_offset_interval_ms": self.config(group.group_id, "streams.task.offset.interval.ms"),
                    "acceptable_recovery_lag": self.config(group.group_id, "streams.acceptable.recovery.lag"),
                    "topology_description_required": False,
                    "status": statuses,   # Kafka's Status has no null default: [] when there is none
                    "active_tasks": None, "standby_tasks": None, "warmup_tasks": None,
                    "endpoint_information_epoch": 0, "partitions_by_user_endpoint": None}
        if joining or member.assigned != before.assigned:
            response["active_tasks"] = wire_tasks(member.assigned.active)
            response["standby_tasks"] = wire_tasks(member.assigned.standby)
            response["warmup_tasks"] = wire_tasks(member.assigned.warmup)
            if member.user_endpoint is not None:
                group.endpoint_information_epoch += 1
        if group.endpoint_information_epoch != req.endpoint_information_epoch:
            response["partitions_by_user_endpoint"] = endpoint_partitions(group, member, partitions_of)
        if not created:
            response["endpoint_information_epoch"] = group.endpoint_information_epoch
        if configured.status is not None:
            statuses.append({"status_code": configured.status[0], "status_detail": configured.status[1]})
            response[INTERNAL_TOPICS] = dict(configured.to_create)
        if group.shutdown_request_member_id is not None:
            statuses.append({"status_code": SHUTDOWN_APPLICATION, "status_detail":
                             f"Streams group member {group.shutdown_request_member_id} encountered a fatal error "
                             f"and requested a shutdown for the entire application."})
        tags = dict(group.assignment_configs).get("rack.aware.assignment.tags", "").strip()
        if req.api_version >= 1 and tags:
            missing = [t for t in re.split(r"\s*,\s*", tags) if t not in dict(member.client_tags)]
            if missing:
                statuses.append({"status_code": MISSING_CLIENT_TAGS, "status_detail":
                                 f"Missing required client tags for rack-aware standby assignment: "
                                 f"[{', '.join(missing)}]. Configure them via 'client.tag.<tagKey>' in your "
                                 f"Streams config."})
        return response

    def _maybe_init_topology(self, group: StreamsGroup, req: StreamsHeartbeat) -> None:
        topology = from_request(req.topology)
        if group.topology is None:
            log.info("streams_topology_initialized", group=group.group_id, member=req.member_id, epoch=topology.epoch)
            group.topology = topology
        elif group.topology.epoch > topology.epoch:
            log.info("streams_member_stale_topology", group=group.group_id, member=req.member_id, epoch=topology.epoch)
        elif group.topology != topology:
            raise GroupError(E.INVALID_REQUEST, "Topology updates are not supported yet.")

    def assign(self, group: StreamsGroup) -> None:
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
            # Kafka 4.4.0's AssignmentRefiner, which is to add warm-up tasks, gives this target back
            # unchanged: no warm-up task is assigned, whatever streams.num.warmup.replicas says
            group.target = {mid: TasksTuple(dict(a.active_tasks), dict(a.standby_tasks), dict(a.warmup_tasks))
                            for mid, a in result.items()}
            for mid in group.members:
                group.target.setdefault(mid, EMPTY)
        else:
            group.target = {mid: EMPTY for mid in group.members}
        group.assignment_epoch = group.group_epoch
        log.info("streams_target_assignment", group=group.group_id, epoch=group.group_epoch,
                 members=len(group.members), ready=configured is not None and configured.ready)

    # ============================================================ removal and loading
    def member_removed(self, group: StreamsGroup, member_id: str) -> None:
        if group.shutdown_request_member_id is not None and not group.members:
            group.shutdown_request_member_id = None

    def loaded(self, group: StreamsGroup) -> None:
        """Each topology is configured against the topics there are (a heartbeat configures it
        again if they changed)."""
        if group.topology is not None:
            group.configured = configure(group.topology, self.partitions_of)


def _offsets(entries, kept: tuple) -> tuple:
    """MemberTaskOffsets.update: the reported offsets (the kept ones when not reported); a task
    reported twice is INVALID_REQUEST (Kafka 4.4)."""
    if entries is None:
        return kept
    seen: set[tuple[str, int]] = set()
    for e in entries:
        if (e.subtopology_id, e.partition) in seen:
            raise GroupError(E.INVALID_REQUEST, f"Task offsets contain a duplicate entry for subtopology "
                                                f"{e.subtopology_id} and partition {e.partition}.")
        seen.add((e.subtopology_id, e.partition))
    return tuple(sorted((e.subtopology_id, e.partition, e.offset) for e in entries))


def _assignment_inputs(m: StreamsMember) -> tuple:
    """GroupMetadataManager.hasEpochRelevantMemberConfigChanged: topology epoch, rack, client tags, process."""
    return m.topology_epoch, m.rack_id, m.client_tags, m.process_id


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
