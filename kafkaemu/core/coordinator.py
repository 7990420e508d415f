"""The classic group coordinator: one method per request, time passed in, replies possibly parked.

Behaviour follows Apache Kafka's GroupMetadataManager / OffsetMetadataManager (classic groups).
Every public method takes ``now_ms`` first; JoinGroup and SyncGroup take a ``respond`` callable that
may be called later (a parked reply released by another request or by a timer). ``tick(now_ms)``
fires due timers; ``next_deadline_ms()`` says when the next one is due.

Records (offset commits, group metadata, tombstones) go to an injected sink
``sink(partition, [(key, value_or_None)], now_ms)`` for __consumer_offsets.
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass, replace
from typing import Callable, Iterable

import structlog

from ..config import DEFAULTS
from ..protocol.errors import ErrorCode
from .classic.group import CONSUMER_PROTOCOL_TYPE, ClassicGroup, GroupError
from .classic.member import Member, Reply
from .classic.requests import Heartbeat, JoinGroup, LeaveGroup, OffsetCommit, SyncGroup, distinct_protocols
from .classic.state import GroupState
from .consumer import records as consumer_records
from .consumer.group import TopicMeta
from .consumer.manager import ConsumerGroupCoordinator, ConsumerHeartbeat, ConsumerSettings, HeartbeatError
from .consumer.manager import error_response as consumer_error_response
from .offsets import records as rec
from .offsets.store import CommittedOffset, OffsetStore, is_expired
from .placement import partition_for
from .timers import Timers

log = structlog.get_logger("kafkaemu.coordinator")

Sink = Callable[[int, list[tuple[bytes, bytes | None]], int], None]
S = GroupState
E = ErrorCode

# DescribeGroups authorized_operations when asked and no authorizer is configured: READ|DELETE|DESCRIBE.
GROUP_AUTHORIZED_OPERATIONS = (1 << 3) | (1 << 6) | (1 << 8)
INT32_MIN = -(1 << 31)


@dataclass(frozen=True)
class CoordinatorSettings:
    """The group coordinator's part of BrokerConfig (whose defaults these are)."""
    offsets_topic_num_partitions: int = DEFAULTS.offsets_topic_num_partitions
    min_session_timeout_ms: int = DEFAULTS.group_min_session_timeout_ms
    max_session_timeout_ms: int = DEFAULTS.group_max_session_timeout_ms
    initial_rebalance_delay_ms: int = DEFAULTS.group_initial_rebalance_delay_ms
    max_group_size: int = DEFAULTS.group_max_size
    new_member_join_timeout_ms: int = 5 * 60 * 1000  # a constant in Kafka, not a setting
    offset_metadata_max_bytes: int = DEFAULTS.offset_metadata_max_bytes
    offsets_retention_ms: int = DEFAULTS.offsets_retention_minutes * 60 * 1000
    offsets_retention_check_interval_ms: int = DEFAULTS.offsets_retention_check_interval_ms
    consumer: ConsumerSettings = ConsumerSettings()

    @classmethod
    def from_config(cls, config) -> "CoordinatorSettings":
        return cls(
            offsets_topic_num_partitions=config.offsets_topic_num_partitions,
            min_session_timeout_ms=config.group_min_session_timeout_ms,
            max_session_timeout_ms=config.group_max_session_timeout_ms,
            initial_rebalance_delay_ms=config.group_initial_rebalance_delay_ms,
            max_group_size=config.group_max_size,
            offset_metadata_max_bytes=config.offset_metadata_max_bytes,
            offsets_retention_ms=config.offsets_retention_minutes * 60 * 1000,
            offsets_retention_check_interval_ms=config.offsets_retention_check_interval_ms,
            consumer=ConsumerSettings.from_config(config),
        )


@dataclass(frozen=True)
class Transition:
    at_ms: int
    group_id: str
    from_state: GroupState
    to_state: GroupState
    generation_id: int


def join_response(error: ErrorCode = E.NONE, member_id: str = "", generation_id: int = -1,
                  protocol_type: str | None = None, protocol_name: str | None = None,
                  leader: str | None = "", members: list | None = None, skip_assignment: bool = False) -> dict:
    return {"error_code": int(error), "member_id": member_id, "generation_id": generation_id,
            "protocol_type": protocol_type, "protocol_name": protocol_name, "leader": leader or "",
            "members": members or [], "skip_assignment": skip_assignment}


def sync_response(error: ErrorCode = E.NONE, assignment: bytes = b"", protocol_type: str | None = None,
                  protocol_name: str | None = None) -> dict:
    return {"error_code": int(error), "assignment": assignment, "protocol_type": protocol_type,
            "protocol_name": protocol_name}


def _int64(n: int) -> int:
    """``n`` wrapped to a signed 64-bit value, as Java's long arithmetic overflows."""
    return (n + (1 << 63)) % (1 << 64) - (1 << 63)


def _no_sink(partition: int, records: list, now_ms: int) -> None:
    pass


def _timestamp_or_default(group: ClassicGroup) -> int:
    return -1 if group.current_state_timestamp_ms is None else group.current_state_timestamp_ms


class GroupCoordinator:
    def __init__(self, settings: CoordinatorSettings | None = None, sink: Sink | None = None, now_ms: int = 0,
                 transition_log_size: int = 100000) -> None:
        self.settings = settings or CoordinatorSettings()
        self.sink: Sink = sink or _no_sink
        self.groups: dict[str, ClassicGroup] = {}
        self.offsets = OffsetStore()
        self.timers = Timers()
        self.transitions: deque[Transition] = deque(maxlen=transition_log_size)
        self.transition_listeners: list[Callable[[Transition], None]] = []
        self._now = now_ms
        # KIP-848 groups share the group id namespace and the timers; see consumer_coordinator.py.
        self.consumer = ConsumerGroupCoordinator(self.timers, lambda: self._now, self.settings.consumer,
                                                 on_group_removed=self._replace_empty_classic_group,
                                                 on_transition=self._record_consumer_transition,
                                                 append=self._append)
        self._schedule_retention_check()

    # ============================================================ time
    def tick(self, now_ms: int) -> None:
        """Fire every timer due at ``now_ms``, each at its own deadline's time."""
        self.timers.poll(now_ms, self._set_time)
        self._now = max(self._now, now_ms)

    def _set_time(self, deadline_ms: int) -> None:
        self._now = max(self._now, deadline_ms)

    def next_deadline_ms(self) -> int | None:
        return self.timers.next_deadline()

    def _begin(self, now_ms: int) -> None:
        self.tick(now_ms)

    def _end(self) -> None:
        # Timers due now (a zero initial rebalance delay) complete within the request that set them.
        self.timers.poll(self._now)

    # ============================================================ placement / lookup
    def partition_for(self, group_id: str) -> int:
        return partition_for(group_id, self.settings.offsets_topic_num_partitions)

    def group(self, group_id: str) -> ClassicGroup | None:
        return self.groups.get(group_id)

    def _create_group(self, group_id: str) -> ClassicGroup:
        group = ClassicGroup(group_id, self._now, on_transition=self._record_transition)
        self.groups[group_id] = group
        return group

    def _record_transition(self, group: ClassicGroup, old: GroupState, new: GroupState) -> None:
        t = Transition(self._now, group.group_id, old, new, group.generation_id)
        self.transitions.append(t)
        log.info("group_transition", group=group.group_id, from_state=old.value, to_state=new.value,
                 generation=group.generation_id)
        for listener in list(self.transition_listeners):
            listener(t)

    def _record_consumer_transition(self, group_id: str, old, new, group_epoch: int) -> None:
        """Consumer group states (ConsumerGroupState) share the record; generation_id is the group epoch."""
        t = Transition(self._now, group_id, old, new, group_epoch)
        self.transitions.append(t)
        for listener in list(self.transition_listeners):
            listener(t)

    # ============================================================ records
    def _append(self, group_id: str, records: list[tuple[bytes, bytes | None]]) -> None:
        if records:
            self._append_count += 1
            self.sink(self.partition_for(group_id), records, self._now)

    def _store_group(self, group: ClassicGroup, assignment: dict[str, bytes]) -> None:
        members = tuple(rec.StoredMember(
            member_id=m.member_id, group_instance_id=m.group_instance_id, client_id=m.client_id,
            client_host=m.client_host, rebalance_timeout_ms=m.rebalance_timeout_ms,
            session_timeout_ms=m.session_timeout_ms, subscription=m.metadata(group.protocol_name),
            assignment=assignment.get(m.member_id, b"")) for m in group.members.values())
        value = rec.StoredGroup(
            protocol_type=group.protocol_type or "", generation=group.generation_id,
            protocol=group.protocol_name, leader=group.leader_id,
            current_state_timestamp_ms=_timestamp_or_default(group), members=members)
        self._append(group.group_id, [(rec.encode_group_key(group.group_id), rec.encode_group_value(value))])

    def _store_empty_group(self, group: ClassicGroup) -> None:
        value = rec.StoredGroup("", 0, None, None, _timestamp_or_default(group), ())
        self._append(group.group_id, [(rec.encode_group_key(group.group_id), rec.encode_group_value(value))])

    # ============================================================ timers
    @staticmethod
    def _heartbeat_key(group_id: str, member_id: str) -> tuple:
        return ("heartbeat", group_id, member_id)

    @staticmethod
    def _join_key(group_id: str) -> tuple:
        return ("join", group_id)

    @staticmethod
    def _sync_key(group_id: str) -> tuple:
        return ("sync", group_id)

    def _reschedule_heartbeat(self, group: ClassicGroup, member: Member, timeout_ms: int | None = None) -> None:
        gid, mid = group.group_id, member.member_id
        timeout = member.session_timeout_ms if timeout_ms is None else timeout_ms
        self.timers.schedule(self._heartbeat_key(gid, mid), self._now + timeout,
                             lambda: self._expire_heartbeat(gid, mid))

    def _cancel_heartbeat(self, group: ClassicGroup, member_id: str) -> None:
        self.timers.cancel(self._heartbeat_key(group.group_id, member_id))

    def _expire_heartbeat(self, group_id: str, member_id: str) -> None:
        group = self.groups.get(group_id)
        if group is None or group.is_in(S.DEAD):
            return
        if group.is_pending_member(member_id):
            log.info("pending_member_expired", group=group_id, member=member_id)
            group.remove(member_id)
            if group.is_in(S.PREPARING_REBALANCE) and group.has_all_members_joined():
                self._complete_join(group)
            return
        member = group.members.get(member_id)
        if member is None or member.has_satisfied_heartbeat():
            return
        log.info("member_session_expired", group=group_id, member=member_id)
        self._remove_member_and_update(group, member)

    def _remove_member_and_update(self, group: ClassicGroup, member: Member) -> None:
        group.complete_join(member, join_response(E.UNKNOWN_MEMBER_ID))
        self._drop_member(group, member.member_id)
        if group.is_in(S.STABLE, S.COMPLETING_REBALANCE):
            self._maybe_prepare_rebalance_or_complete_join(group, f"removing member {member.member_id}")
        elif group.is_in(S.PREPARING_REBALANCE) and group.has_all_members_joined():
            self._complete_join(group)

    def _drop_member(self, group: ClassicGroup, member_id: str) -> None:
        """Remove a member; any reply it still has parked is answered so its connection never stalls."""
        member = group.members.get(member_id)
        if member is not None:
            group.complete_join(member, join_response(E.UNKNOWN_MEMBER_ID))
            group.complete_sync(member, sync_response(E.UNKNOWN_MEMBER_ID))
        group.remove(member_id)
        self._cancel_heartbeat(group, member_id)

    # ============================================================ JoinGroup
    def join_group(self, now_ms: int, req: JoinGroup, respond: Reply) -> None:
        self._begin(now_ms)
        try:
            self._join_group(replace(req, protocols=distinct_protocols(req.protocols)), respond)
        finally:
            self._end()

    def _join_group(self, req: JoinGroup, respond: Reply) -> None:
        s = self.settings
        if not req.group_id:
            return respond(join_response(E.INVALID_GROUP_ID, req.member_id))
        if not s.min_session_timeout_ms <= req.session_timeout_ms <= s.max_session_timeout_ms:
            return respond(join_response(E.INVALID_SESSION_TIMEOUT, req.member_id))
        if req.group_id in self.consumer.groups:
            # Kafka converts between protocols per group.consumer.migration.policy; kafkaemu does not.
            return respond(join_response(E.INCONSISTENT_GROUP_PROTOCOL, req.member_id))
        if not rec.fits_record_key(req.group_id):
            return respond(join_response(E.UNKNOWN_SERVER_ERROR, req.member_id))
        is_unknown = req.member_id == ""
        group = self.groups.get(req.group_id)
        new_group = group is None
        if group is None:
            if not is_unknown:
                return respond(join_response(E.UNKNOWN_MEMBER_ID, req.member_id))
            group = self._create_group(req.group_id)
        appended_before = self._append_count
        if not self._accept_joining_member(group, req.member_id):
            self._drop_member(group, req.member_id)
            respond(join_response(E.GROUP_MAX_SIZE_REACHED, ""))
        elif is_unknown:
            self._join_new_member(group, req, respond)
        else:
            self._join_existing_member(group, req, respond)
        if new_group and self._append_count == appended_before:
            self._store_empty_group(group)

    _append_count = 0

    def _accept_joining_member(self, group: ClassicGroup, member_id: str) -> bool:
        limit = self.settings.max_group_size
        if group.is_in(S.EMPTY, S.DEAD):
            return True
        if group.is_in(S.PREPARING_REBALANCE):
            m = group.members.get(member_id)
            return (m is not None and m.is_awaiting_join) or group.num_awaiting_join < limit
        return member_id in group.members or len(group.members) < limit

    def _join_new_member(self, group: ClassicGroup, req: JoinGroup, respond: Reply) -> None:
        names = [name for name, _ in req.protocols]
        if group.is_in(S.DEAD):
            return respond(join_response(E.COORDINATOR_NOT_AVAILABLE, ""))
        if not group.supports_protocols(req.protocol_type, names):
            return respond(join_response(E.INCONSISTENT_GROUP_PROTOCOL, ""))
        new_id = group.generate_member_id(req.client_id, req.group_instance_id)
        if req.group_instance_id is not None:
            existing = group.static_member_id(req.group_instance_id)
            if existing is not None:
                log.info("static_member_rejoined", group=group.group_id, instance=req.group_instance_id,
                         old_member=existing, member=new_id, state=group.state.value)
                return self._update_static_member(group, req, existing, new_id, respond)
            return self._add_member_then_rebalance(group, req, new_id, respond)
        if req.api_version >= 4:
            # KIP-394: hand out the id and let the member rejoin with it; it stays pending until then.
            group.add_pending_member(new_id)
            gid = group.group_id
            self.timers.schedule(self._heartbeat_key(gid, new_id), self._now + req.session_timeout_ms,
                                 lambda: self._expire_heartbeat(gid, new_id))
            return respond(join_response(E.MEMBER_ID_REQUIRED, new_id))
        return self._add_member_then_rebalance(group, req, new_id, respond)

    def _join_existing_member(self, group: ClassicGroup, req: JoinGroup, respond: Reply) -> None:
        mid = req.member_id
        names = [name for name, _ in req.protocols]
        if group.is_in(S.DEAD):
            return respond(join_response(E.COORDINATOR_NOT_AVAILABLE, mid))
        if not group.supports_protocols(req.protocol_type, names):
            return respond(join_response(E.INCONSISTENT_GROUP_PROTOCOL, mid))
        if group.is_pending_member(mid):
            if req.group_instance_id is not None:
                return respond(join_response(E.UNKNOWN_SERVER_ERROR, mid))
            return self._add_member_then_rebalance(group, req, mid, respond)
        try:
            group.validate_member(mid, req.group_instance_id)
        except GroupError as exc:
            return respond(join_response(exc.code, mid))
        member = group.member(mid)
        if group.is_in(S.PREPARING_REBALANCE):
            return self._update_member_then_rebalance(group, member, req, respond, "member rejoining")
        if group.is_in(S.COMPLETING_REBALANCE):
            if member.matches(req.protocols):
                # Same metadata: the member probably lost the JoinGroup answer; repeat it.
                return respond(self._current_join_answer(group, mid, with_members=group.is_leader(mid)))
            return self._update_member_then_rebalance(group, member, req, respond, "member metadata changed")
        if group.is_in(S.STABLE):
            if group.is_leader(mid):
                # The leader rejoining forces a rebalance (it may have seen topic metadata change).
                return self._update_member_then_rebalance(group, member, req, respond, "leader rejoined")
            if not member.matches(req.protocols):
                return self._update_member_then_rebalance(group, member, req, respond, "member metadata changed")
            return respond(self._current_join_answer(group, mid, with_members=False))
        return respond(join_response(E.UNKNOWN_MEMBER_ID, mid))

    def _current_join_answer(self, group: ClassicGroup, member_id: str, with_members: bool,
                             leader: str | None = None, skip_assignment: bool = False) -> dict:
        return join_response(E.NONE, member_id, group.generation_id, group.protocol_type, group.protocol_name,
                             group.leader_id if leader is None else leader,
                             group.join_members_view() if with_members else [], skip_assignment)

    def _update_member_then_rebalance(self, group: ClassicGroup, member: Member, req: JoinGroup,
                                      respond: Reply, reason: str) -> None:
        group.update_member(member, req.protocols, req.rebalance_timeout_ms, req.session_timeout_ms, respond)
        self._maybe_prepare_rebalance_or_complete_join(group, reason)

    def _add_member_then_rebalance(self, group: ClassicGroup, req: JoinGroup, member_id: str,
                                   respond: Reply) -> None:
        member = Member(member_id, req.group_instance_id, req.client_id, req.client_host,
                        req.rebalance_timeout_ms, req.session_timeout_ms, req.protocol_type,
                        list(req.protocols), is_new=True)
        if group.is_in(S.PREPARING_REBALANCE) and group.previous_state is S.EMPTY:
            group.new_member_added = True
        group.add(member, respond)
        # A parked new member cannot heartbeat; bound its wait so abandoned joins do not linger.
        self._reschedule_heartbeat(group, member, self.settings.new_member_join_timeout_ms)
        log.info("member_added", group=group.group_id, member=member_id, instance=req.group_instance_id)
        self._maybe_prepare_rebalance_or_complete_join(group, f"adding member {member_id}")

    def _update_static_member(self, group: ClassicGroup, req: JoinGroup, old_id: str, new_id: str,
                              respond: Reply) -> None:
        current_leader = group.leader_id
        member = group.replace_static_member(req.group_instance_id, old_id, new_id)
        self._cancel_heartbeat(group, old_id)
        self._reschedule_heartbeat(group, member)
        group.update_member(member, req.protocols, req.rebalance_timeout_ms, req.session_timeout_ms, respond)
        if group.is_in(S.STABLE):
            if group.protocol_name == group.select_protocol():
                # Same protocol: take the old slot and assignment without a rebalance (KIP-345).
                self._store_group(group, group.assignments())
                if req.api_version >= 9:
                    is_leader = group.is_leader(new_id)
                    group.complete_join(member, self._current_join_answer(
                        group, new_id, with_members=is_leader, skip_assignment=is_leader))
                else:
                    # The old leader id is returned so a restarted leader does not redo a trivial assignment.
                    group.complete_join(member, self._current_join_answer(
                        group, new_id, with_members=False, leader=current_leader or ""))
            else:
                self._maybe_prepare_rebalance_or_complete_join(group, "static member changed protocol")
        elif group.is_in(S.COMPLETING_REBALANCE):
            # The leader may already hold the old id in its assignment; redo the rebalance.
            self._prepare_rebalance(group, "static member rejoined during CompletingRebalance")
        else:
            self._maybe_complete_join_phase(group)

    # ------------------------------------------------------------ rebalance machinery
    def _maybe_prepare_rebalance_or_complete_join(self, group: ClassicGroup, reason: str) -> None:
        if group.can_rebalance():
            self._prepare_rebalance(group, reason)
        else:
            self._maybe_complete_join_phase(group)

    def _maybe_complete_join_phase(self, group: ClassicGroup) -> None:
        if not group.is_in(S.PREPARING_REBALANCE):
            return
        if group.previous_state is S.EMPTY:
            return  # the initial rebalance waits for its delay timer
        if not group.has_all_members_joined():
            return
        self._complete_join(group)

    def _prepare_rebalance(self, group: ClassicGroup, reason: str) -> None:
        if group.is_in(S.COMPLETING_REBALANCE):
            self._reset_and_propagate_assignment_error(group, E.REBALANCE_IN_PROGRESS)
        group.pending_sync_members.clear()
        self.timers.cancel(self._sync_key(group.group_id))
        initial = group.is_in(S.EMPTY)
        if initial:
            delay = self.settings.initial_rebalance_delay_ms
            remaining = max(group.rebalance_timeout_ms() - delay, 0)
            self._schedule_initial_join(group.group_id, delay, remaining)
        log.info("preparing_rebalance", group=group.group_id, state=group.state.value,
                 generation=group.generation_id, reason=reason)
        group.transition_to(S.PREPARING_REBALANCE, self._now)
        if not initial:
            self._maybe_complete_join_else_schedule(group)

    def _schedule_initial_join(self, group_id: str, delay_ms: int, remaining_ms: int) -> None:
        self.timers.schedule(self._join_key(group_id), self._now + delay_ms,
                             lambda: self._try_complete_initial_rebalance(group_id, delay_ms, remaining_ms))

    def _try_complete_initial_rebalance(self, group_id: str, delay_ms: int, remaining_ms: int) -> None:
        group = self.groups.get(group_id)
        if group is None:
            return
        if group.new_member_added and remaining_ms != 0:
            group.new_member_added = False
            new_delay = min(self.settings.initial_rebalance_delay_ms, remaining_ms)
            new_remaining = max(remaining_ms - delay_ms, 0)
            self._schedule_initial_join(group_id, new_delay, new_remaining)
        else:
            self._complete_join(group)

    def _maybe_complete_join_else_schedule(self, group: ClassicGroup) -> None:
        if group.has_all_members_joined():
            self._complete_join(group)
        else:
            gid = group.group_id
            self.timers.schedule(self._join_key(gid), self._now + group.rebalance_timeout_ms(),
                                 lambda: self._complete_join_by_id(gid))

    def _complete_join_by_id(self, group_id: str) -> None:
        group = self.groups.get(group_id)
        if group is not None:
            self._complete_join(group)

    def _complete_join(self, group: ClassicGroup) -> None:
        gid = group.group_id
        self.timers.cancel(self._join_key(gid))
        missing = [m for m in group.not_yet_rejoined() if not m.is_static]
        for m in missing:
            self._drop_member(group, m.member_id)
        if missing:
            log.info("removed_members_not_rejoined", group=gid, members=[m.member_id for m in missing])
        if group.is_in(S.DEAD):
            return
        if not group.maybe_elect_new_joined_leader() and group.members:
            # Only static members that did not rejoin remain: wait another rebalance timeout.
            self.timers.schedule(self._join_key(gid), self._now + group.rebalance_timeout_ms(),
                                 lambda: self._complete_join_by_id(gid))
            return
        group.init_next_generation(self._now)
        if group.is_in(S.EMPTY):
            log.info("group_empty", group=gid, generation=group.generation_id)
            self._store_group(group, {})
            return
        log.info("group_join_completed", group=gid, generation=group.generation_id,
                 members=len(group.members), protocol=group.protocol_name, leader=group.leader_id)
        members_view = group.join_members_view()
        for member in list(group.members.values()):
            is_leader = group.is_leader(member.member_id)
            group.complete_join(member, join_response(
                E.NONE, member.member_id, group.generation_id, group.protocol_type, group.protocol_name,
                group.leader_id, members_view if is_leader else []))
            self._reschedule_heartbeat(group, member)
            member.is_new = False
            group.pending_sync_members.add(member.member_id)
        generation = group.generation_id
        self.timers.schedule(self._sync_key(gid), self._now + group.rebalance_timeout_ms(),
                             lambda: self._expire_pending_sync(gid, generation))

    def _expire_pending_sync(self, group_id: str, generation_id: int) -> None:
        group = self.groups.get(group_id)
        if group is None or generation_id != group.generation_id:
            return
        if group.is_in(S.COMPLETING_REBALANCE, S.STABLE) and group.pending_sync_members:
            laggards = sorted(group.pending_sync_members)
            for mid in laggards:
                self._drop_member(group, mid)
            log.info("removed_members_not_synced", group=group_id, members=laggards)
            self._prepare_rebalance(group, "pending sync expired")

    def _reset_and_propagate_assignment_error(self, group: ClassicGroup, error: ErrorCode) -> None:
        for m in group.members.values():
            m.assignment = b""
        self._propagate_assignment(group, error)

    def _propagate_assignment(self, group: ClassicGroup, error: ErrorCode) -> None:
        ptype = group.protocol_type if error == E.NONE else None
        pname = group.protocol_name if error == E.NONE else None
        for m in list(group.members.values()):
            if group.complete_sync(m, sync_response(error, m.assignment, ptype, pname)):
                self._reschedule_heartbeat(group, m)

    def _remove_pending_sync(self, group: ClassicGroup, member_id: str) -> None:
        group.pending_sync_members.discard(member_id)
        if not group.is_in(S.COMPLETING_REBALANCE, S.STABLE) or not group.pending_sync_members:
            self.timers.cancel(self._sync_key(group.group_id))

    # ============================================================ SyncGroup
    def sync_group(self, now_ms: int, req: SyncGroup, respond: Reply) -> None:
        self._begin(now_ms)
        try:
            self._sync_group(req, respond)
        finally:
            self._end()

    def _sync_group(self, req: SyncGroup, respond: Reply) -> None:
        if not req.group_id:
            return respond(sync_response(E.INVALID_GROUP_ID))
        if req.group_id in self.consumer.groups:
            return respond(sync_response(E.UNKNOWN_MEMBER_ID))
        group = self.groups.get(req.group_id)
        if group is None or group.is_empty():
            return respond(sync_response(E.UNKNOWN_MEMBER_ID))
        if group.is_in(S.DEAD):
            return respond(sync_response(E.COORDINATOR_NOT_AVAILABLE))
        try:
            group.validate_member(req.member_id, req.group_instance_id)
        except GroupError as exc:
            return respond(sync_response(exc.code))
        if req.generation_id != group.generation_id:
            return respond(sync_response(E.ILLEGAL_GENERATION))
        if ((req.protocol_type is not None and req.protocol_type != group.protocol_type)
                or (req.protocol_name is not None and req.protocol_name != group.protocol_name)):
            return respond(sync_response(E.INCONSISTENT_GROUP_PROTOCOL))
        if group.is_in(S.PREPARING_REBALANCE):
            return respond(sync_response(E.REBALANCE_IN_PROGRESS))
        member = group.member(req.member_id)
        if group.is_in(S.COMPLETING_REBALANCE):
            if member.awaiting_sync is not None:      # a duplicate SyncGroup: release the superseded one
                member.awaiting_sync(sync_response(E.REBALANCE_IN_PROGRESS))
            member.awaiting_sync = respond
            self._remove_pending_sync(group, req.member_id)
            if group.is_leader(req.member_id):
                assignment = {mid: req.assignments.get(mid, b"") for mid in group.members}
                log.info("assignment_received", group=group.group_id, leader=req.member_id,
                         generation=group.generation_id, members=len(group.members))
                try:
                    self._store_group(group, assignment)
                except Exception:
                    # A record that cannot be written (a member string too long for it): Kafka's
                    # failed append answers every member UNKNOWN_SERVER_ERROR and rebalances.
                    log.exception("group_record_failed", group=group.group_id[:256])
                    self._reset_and_propagate_assignment_error(group, E.UNKNOWN_SERVER_ERROR)
                    self._maybe_prepare_rebalance_or_complete_join(group, "group record could not be written")
                    return
                for mid, m in group.members.items():
                    m.assignment = assignment[mid]
                self._propagate_assignment(group, E.NONE)
                group.transition_to(S.STABLE, self._now)
            return
        # Stable: a late SyncGroup gets the member's current assignment.
        self._remove_pending_sync(group, req.member_id)
        respond(sync_response(E.NONE, member.assignment, group.protocol_type, group.protocol_name))

    # ============================================================ Heartbeat
    def heartbeat(self, now_ms: int, req: Heartbeat) -> dict:
        self._begin(now_ms)
        try:
            return {"error_code": int(self._heartbeat(req))}
        finally:
            self._end()

    def _heartbeat(self, req: Heartbeat) -> ErrorCode:
        if not req.group_id:
            return E.INVALID_GROUP_ID
        if req.group_id in self.consumer.groups:
            return E.UNKNOWN_MEMBER_ID
        group = self.groups.get(req.group_id)
        if group is None:
            return E.UNKNOWN_MEMBER_ID
        if group.is_in(S.DEAD):
            return E.COORDINATOR_NOT_AVAILABLE
        try:
            group.validate_member(req.member_id, req.group_instance_id)
        except GroupError as exc:
            return exc.code
        if req.generation_id != group.generation_id:
            return E.ILLEGAL_GENERATION
        if group.is_in(S.EMPTY):
            return E.UNKNOWN_MEMBER_ID
        self._reschedule_heartbeat(group, group.member(req.member_id))
        if group.is_in(S.PREPARING_REBALANCE):
            return E.REBALANCE_IN_PROGRESS
        return E.NONE

    # ============================================================ LeaveGroup
    def leave_group(self, now_ms: int, req: LeaveGroup) -> dict:
        """Newest shape: top-level error plus one result per leaving member."""
        self._begin(now_ms)
        try:
            return self._leave_group(req)
        finally:
            self._end()

    def _leave_group(self, req: LeaveGroup) -> dict:
        if not req.group_id:
            return {"error_code": int(E.INVALID_GROUP_ID), "members": []}
        consumer_group = self.consumer.groups.get(req.group_id)
        if consumer_group is not None:
            return {"error_code": 0, "members": [
                {"member_id": who.member_id, "group_instance_id": who.group_instance_id,
                 "error_code": self.consumer.leave_by_classic_request(consumer_group, who.member_id,
                                                                      who.group_instance_id)}
                for who in req.members]}
        group = self.groups.get(req.group_id)
        if group is None:
            return {"error_code": int(E.UNKNOWN_MEMBER_ID), "members": []}
        if group.is_in(S.DEAD):
            return {"error_code": int(E.COORDINATOR_NOT_AVAILABLE), "members": []}
        results = []
        left = []
        for who in req.members:
            code = E.NONE
            if who.member_id == "":
                # Administrative removal by group.instance.id.
                existing = group.static_member_id(who.group_instance_id) if who.group_instance_id else None
                if existing is not None:
                    self._remove_current_member(group, existing, who.reason)
                    left.append(existing)
                else:
                    code = E.UNKNOWN_MEMBER_ID
            elif group.is_pending_member(who.member_id):
                group.remove(who.member_id)
                self._cancel_heartbeat(group, who.member_id)
                left.append(who.member_id)
            else:
                try:
                    group.validate_member(who.member_id, who.group_instance_id)
                    self._remove_current_member(group, who.member_id, who.reason)
                    left.append(who.member_id)
                except GroupError as exc:
                    code = exc.code
            results.append({"member_id": who.member_id, "group_instance_id": who.group_instance_id,
                            "error_code": int(code)})
        if left:
            if group.is_in(S.STABLE, S.COMPLETING_REBALANCE):
                self._maybe_prepare_rebalance_or_complete_join(group, f"members left: {left}")
            elif group.is_in(S.PREPARING_REBALANCE):
                self._maybe_complete_join_phase(group)
        return {"error_code": 0, "members": results}

    def _remove_current_member(self, group: ClassicGroup, member_id: str, reason: str | None) -> None:
        log.info("member_left", group=group.group_id, member=member_id, reason=reason)
        self._drop_member(group, member_id)

    # ============================================================ OffsetCommit
    def commit_offsets(self, now_ms: int, req: OffsetCommit,
                       partition_exists: Callable[[str, int], bool] | None = None) -> dict:
        """Returns the response topics in request order (newest shape)."""
        self._begin(now_ms)
        try:
            return self._commit_offsets(req, partition_exists)
        finally:
            self._end()

    def _commit_offsets(self, req: OffsetCommit, partition_exists) -> dict:
        group_error = E.NONE
        group = self.groups.get(req.group_id)
        created = None
        consumer_group = self.consumer.groups.get(req.group_id)
        try:
            if consumer_group is not None:
                self.consumer.validate_offset_commit(consumer_group, req.member_id, req.generation_id,
                                                     req.api_version)
            elif group is None:
                if req.generation_id < 0:
                    group = created = self._create_group(req.group_id)   # a "simple" group, for offsets only
                else:
                    raise GroupError(E.GROUP_ID_NOT_FOUND if req.api_version >= 9 else E.ILLEGAL_GENERATION)
            if consumer_group is None:
                self._validate_offset_commit(group, req)
        except GroupError as exc:
            group_error = exc.code
        except HeartbeatError as exc:
            group_error = E(exc.code)
        if group_error == E.NONE and consumer_group is None and group.is_in(S.STABLE, S.PREPARING_REBALANCE):
            # Classic commits keep the member's session alive.
            self._reschedule_heartbeat(group, group.member(req.member_id))
        # Java long arithmetic, as Kafka's expireTimestampMs: a huge retention wraps to the past.
        expire = None if req.retention_time_ms == -1 else _int64(self._now + req.retention_time_ms)
        topics_out, commits = [], []
        limit = self.settings.offset_metadata_max_bytes
        for topic, partitions in req.topics:
            parts_out = []
            for p in partitions:
                if partition_exists is not None and not partition_exists(topic, p.partition):
                    code = E.UNKNOWN_TOPIC_OR_PARTITION
                elif group_error != E.NONE:
                    code = group_error
                elif p.metadata is not None and len(p.metadata) > limit:
                    code = E.OFFSET_METADATA_TOO_LARGE
                else:
                    code = E.NONE
                    commit_ts = self._now if p.commit_timestamp_ms == -1 else p.commit_timestamp_ms
                    commits.append((topic, p.partition,
                                    CommittedOffset(p.offset, p.leader_epoch, p.metadata or "", commit_ts, expire)))
                parts_out.append({"partition_index": p.partition, "error_code": int(code)})
            topics_out.append({"name": topic, "partitions": parts_out})
        # All or nothing: every record is built before anything changes; if one cannot be (a field its
        # record format cannot hold), the whole request fails as Kafka fails a write it cannot append.
        try:
            records = [(rec.encode_offset_key(req.group_id, topic, partition), rec.encode_offset_value(committed))
                       for topic, partition, committed in commits]
        except Exception:
            log.exception("offset_commit_record_failed", group=req.group_id[:256])
            if created is not None:
                del self.groups[req.group_id]
            unknown = int(E.UNKNOWN_TOPIC_OR_PARTITION)   # answered before the coordinator in Kafka
            return {"topics": [{"name": t["name"], "partitions": [
                p if p["error_code"] == unknown else dict(p, error_code=int(E.UNKNOWN_SERVER_ERROR))
                for p in t["partitions"]]} for t in topics_out]}
        self._append(req.group_id, records)
        for topic, partition, committed in commits:
            self.offsets.put(req.group_id, topic, partition, committed)
        return {"topics": topics_out}

    @staticmethod
    def _validate_offset_commit(group: ClassicGroup, req: OffsetCommit) -> None:
        if group.is_in(S.DEAD):
            raise GroupError(E.COORDINATOR_NOT_AVAILABLE)
        if req.generation_id < 0 and group.is_in(S.EMPTY):
            return  # admin client or a consumer without group management
        if req.generation_id >= 0 or req.member_id or req.group_instance_id is not None:
            group.validate_member(req.member_id, req.group_instance_id)
            if req.generation_id != group.generation_id:
                raise GroupError(E.ILLEGAL_GENERATION)
        elif not group.is_in(S.EMPTY):
            raise GroupError(E.UNKNOWN_MEMBER_ID)
        if group.is_in(S.COMPLETING_REBALANCE):
            raise GroupError(E.REBALANCE_IN_PROGRESS)

    # ============================================================ OffsetFetch
    def fetch_offsets(self, now_ms: int, group_id: str, topics: list[tuple[str, list[int]]] | None,
                      member_id: str | None = None, member_epoch: int = -1) -> dict:
        """One group's answer in the OffsetFetch v8 group shape; ``topics=None`` means every committed one.
        ``member_id``/``member_epoch`` (v9) are checked against a consumer group's member."""
        self._begin(now_ms)
        consumer_group = self.consumer.groups.get(group_id)
        if consumer_group is not None:
            try:
                self.consumer.validate_offset_fetch(consumer_group, member_id, member_epoch)
            except HeartbeatError as exc:
                self._end()
                return {"group_id": group_id, "error_code": exc.code, "topics": []}
        group = self.groups.get(group_id)
        dead = group is not None and group.is_in(S.DEAD)
        stored = {} if dead else self.offsets.group(group_id)
        out = []
        if topics is None:
            for topic, parts in stored.items():
                out.append({"name": topic, "partitions": [
                    self._fetched(p, c) for p, c in sorted(parts.items())]})
        else:
            for topic, partitions in topics:
                parts = stored.get(topic, {})
                out.append({"name": topic, "partitions": [self._fetched(p, parts.get(p)) for p in partitions]})
        self._end()
        return {"group_id": group_id, "topics": out, "error_code": 0}

    @staticmethod
    def _fetched(partition: int, c: CommittedOffset | None) -> dict:
        if c is None:
            return {"partition_index": partition, "committed_offset": -1, "committed_leader_epoch": -1,
                    "metadata": "", "error_code": 0}
        return {"partition_index": partition, "committed_offset": c.offset, "committed_leader_epoch": c.leader_epoch,
                "metadata": c.metadata, "error_code": 0}

    # ============================================================ OffsetDelete
    def delete_offsets(self, now_ms: int, group_id: str, topics: list[tuple[str, list[int]]],
                       partition_exists: Callable[[str, int], bool] | None = None) -> dict:
        self._begin(now_ms)
        try:
            if not group_id:
                return {"error_code": int(E.INVALID_GROUP_ID), "topics": []}
            group = self.groups.get(group_id) or self.consumer.groups.get(group_id)
            if group is None or (isinstance(group, ClassicGroup) and group.is_in(S.DEAD)):
                return {"error_code": int(E.GROUP_ID_NOT_FOUND), "topics": []}
            if isinstance(group, ClassicGroup) and group.is_in(S.STABLE, S.PREPARING_REBALANCE,
                                                               S.COMPLETING_REBALANCE) \
                    and group.protocol_type != CONSUMER_PROTOCOL_TYPE:
                return {"error_code": int(E.NON_EMPTY_GROUP), "topics": []}
            out, records = [], []
            for topic, partitions in topics:
                subscribed = group.is_subscribed_to_topic(topic)
                parts_out = []
                for p in partitions:
                    if partition_exists is not None and not partition_exists(topic, p):
                        code = E.UNKNOWN_TOPIC_OR_PARTITION
                    elif subscribed:
                        code = E.GROUP_SUBSCRIBED_TO_TOPIC
                    else:
                        code = E.NONE
                        if self.offsets.remove(group_id, topic, p):
                            records.append((rec.encode_offset_key(group_id, topic, p), None))
                    parts_out.append({"partition_index": p, "error_code": int(code)})
                out.append({"name": topic, "partitions": parts_out})
            self._append(group_id, records)
            return {"error_code": 0, "topics": out}
        finally:
            self._end()

    # ============================================================ admin
    def describe_groups(self, now_ms: int, group_ids: list[str],
                        include_authorized_operations: bool = False) -> list[dict]:
        self._begin(now_ms)
        ops = GROUP_AUTHORIZED_OPERATIONS if include_authorized_operations else INT32_MIN
        out = []
        for gid in group_ids:
            group = self.groups.get(gid)
            if group is None:
                # Unknown, or a consumer (KIP-848) group: Kafka's classicGroup() lookup fails for both.
                out.append({"error_code": 0, "group_id": gid, "group_state": S.DEAD.value, "protocol_type": "",
                            "protocol_data": "", "members": [], "authorized_operations": ops})
                continue
            stable = group.is_in(S.STABLE)
            members = [{
                "member_id": m.member_id, "group_instance_id": m.group_instance_id,
                "client_id": m.client_id, "client_host": m.client_host,
                "member_metadata": m.metadata(group.protocol_name) if stable else b"",
                "member_assignment": m.assignment if stable else b"",
            } for m in group.members.values()]
            out.append({"error_code": 0, "group_id": gid, "group_state": group.state.value,
                        "protocol_type": group.protocol_type or "",
                        "protocol_data": (group.protocol_name or "") if stable else "",
                        "members": members, "authorized_operations": ops})
        self._end()
        return out

    def list_groups(self, now_ms: int, states_filter: Iterable[str] = (),
                    types_filter: Iterable[str] = ()) -> list[dict]:
        self._begin(now_ms)
        states = {s.strip().lower() for s in states_filter}
        types = {t.strip().lower() for t in types_filter}
        out = []
        for gid, group in self.groups.items():
            if group.is_in(S.DEAD):
                continue
            if states and group.state.lower_name not in states:
                continue
            if types and "classic" not in types:
                continue
            out.append({"group_id": gid, "protocol_type": group.protocol_type or "",
                        "group_state": group.state.value, "group_type": "classic"})
        for gid, cgroup in self.consumer.groups.items():
            if states and cgroup.state.lower_name not in states:
                continue
            if types and "consumer" not in types:
                continue
            out.append({"group_id": gid, "protocol_type": CONSUMER_PROTOCOL_TYPE,
                        "group_state": cgroup.state.value, "group_type": "consumer"})
        self._end()
        return out

    def delete_groups(self, now_ms: int, group_ids: list[str]) -> list[dict]:
        self._begin(now_ms)
        out = []
        for gid in group_ids:
            group = self.groups.get(gid)
            cgroup = self.consumer.groups.get(gid)
            if cgroup is not None:
                if cgroup.members:
                    code = E.NON_EMPTY_GROUP
                else:
                    self._delete_consumer_group(gid)
                    code = E.NONE
            elif group is None or group.is_in(S.DEAD):
                code = E.GROUP_ID_NOT_FOUND
            elif not group.is_in(S.EMPTY):
                code = E.NON_EMPTY_GROUP
            else:
                self._delete_group(group)
                code = E.NONE
            out.append({"group_id": gid, "error_code": int(code)})
        self._end()
        return out

    def _delete_group(self, group: ClassicGroup) -> None:
        gid = group.group_id
        records = [(rec.encode_offset_key(gid, t, p), None) for t, p in self.offsets.remove_group(gid)]
        records.append((rec.encode_group_key(gid), None))
        self._append(gid, records)
        group.transition_to(S.DEAD, self._now)
        del self.groups[gid]
        log.info("group_deleted", group=gid)

    def _delete_consumer_group(self, gid: str) -> None:
        records = [(rec.encode_offset_key(gid, t, p), None) for t, p in self.offsets.remove_group(gid)]
        self._append(gid, records)
        self.consumer.delete(gid)

    # ============================================================ consumer groups (KIP-848)
    def consumer_group_heartbeat(self, now_ms: int, req: ConsumerHeartbeat, topics: dict[str, TopicMeta]) -> dict:
        self._begin(now_ms)
        try:
            if not rec.fits_record_key(req.group_id):
                return consumer_error_response(E.UNKNOWN_SERVER_ERROR)
            return self.consumer.heartbeat(req, topics, self._classic_state)
        finally:
            self._end()

    def consumer_group_describe(self, now_ms: int, group_ids: list[str], topics_by_id: dict[bytes, str],
                                include_authorized_operations: bool = False) -> list[dict]:
        self._begin(now_ms)
        try:
            return [self.consumer.describe(gid, topics_by_id, include_authorized_operations,
                                           GROUP_AUTHORIZED_OPERATIONS) if gid else
                    {"error_code": int(E.INVALID_GROUP_ID), "error_message": None, "group_id": gid,
                     "group_state": "", "group_epoch": 0, "assignment_epoch": 0, "assignor_name": "",
                     "members": [], "authorized_operations": INT32_MIN}
                    for gid in group_ids]
        finally:
            self._end()

    def _classic_state(self, group_id: str) -> str | None:
        group = self.groups.get(group_id)
        return None if group is None or group.is_in(S.DEAD) else group.state.value

    def _replace_empty_classic_group(self, group_id: str) -> None:
        """An Empty classic group (perhaps only holding offsets) becomes a consumer group; offsets stay."""
        group = self.groups.pop(group_id, None)
        if group is not None:
            self._append(group_id, [(rec.encode_group_key(group_id), None)])
            log.info("classic_group_replaced_by_consumer_group", group=group_id)

    # ============================================================ retention
    def _schedule_retention_check(self) -> None:
        self.timers.schedule(("offsets-retention",), self._now + self.settings.offsets_retention_check_interval_ms,
                             self._run_retention)

    def _run_retention(self) -> None:
        self.expire_offsets(self._now)
        self._schedule_retention_check()

    def on_topic_deleted(self, now_ms: int, topic: str) -> int:
        """Kafka's onPartitionsDeleted: drop every group's committed offsets of a deleted topic
        (tombstones in __consumer_offsets), so a topic re-created under the name starts clean."""
        self._now = max(self._now, now_ms)
        removed = 0
        for gid in self.offsets.groups():
            partitions = list(self.offsets.group(gid).get(topic, {}))
            for p in partitions:
                self.offsets.remove(gid, topic, p)
            self._append(gid, [(rec.encode_offset_key(gid, topic, p), None) for p in partitions])
            removed += len(partitions)
        if removed:
            log.info("offsets_of_deleted_topic_removed", topic=topic, offsets=removed)
        return removed

    def expire_offsets(self, now_ms: int) -> int:
        """Kafka's cleanupGroupMetadata: expire old offsets; delete Empty groups left without any."""
        self._now = max(self._now, now_ms)
        expired_total = 0
        retention = self.settings.offsets_retention_ms
        for gid in list(set(self.groups) | set(self.offsets.groups()) | set(self.consumer.groups)):
            group = self.groups.get(gid)
            base_of = self._expiration_base(group)
            records = []
            all_expired = True
            if base_of is not None:
                cgroup = self.consumer.groups.get(gid)
                for topic, parts in list(self.offsets.group(gid).items()):
                    if (group is not None and group.is_subscribed_to_topic(topic) and group.protocol_type) \
                            or (cgroup is not None and cgroup.is_subscribed_to_topic(topic)):
                        all_expired = False
                        continue
                    for p, c in list(parts.items()):
                        if is_expired(c, base_of(c), self._now, retention):
                            self.offsets.remove(gid, topic, p)
                            records.append((rec.encode_offset_key(gid, topic, p), None))
                        else:
                            all_expired = False
            elif self.offsets.has_group(gid):
                all_expired = False
            expired_total += len(records)
            self._append(gid, records)
            if all_expired and group is not None and group.is_in(S.EMPTY):
                self._delete_group(group)
            elif all_expired and gid in self.consumer.groups and not self.consumer.groups[gid].members:
                self._delete_consumer_group(gid)
        return expired_total

    @staticmethod
    def _expiration_base(group: ClassicGroup | None):
        if group is None or not group.protocol_type:
            return lambda c: c.commit_timestamp_ms
        if group.is_in(S.EMPTY):
            ts = group.current_state_timestamp_ms
            return (lambda c: ts) if ts is not None else (lambda c: c.commit_timestamp_ms)
        if group.protocol_type == CONSUMER_PROTOCOL_TYPE and group.subscribed_topics is not None \
                and group.is_in(S.STABLE):
            return lambda c: c.commit_timestamp_ms
        return None

    # ============================================================ replay of __consumer_offsets
    def replay(self, key: bytes, value: bytes | None) -> None:
        """Apply one __consumer_offsets record, as on loading the partition."""
        if consumer_records.is_consumer_key(key):
            ck = consumer_records.decode_key(key)
            self.consumer.replay(ck, value)
            placeholder = self.groups.get(ck.group_id)
            if value is not None and placeholder is not None and placeholder.is_in(S.EMPTY):
                del self.groups[ck.group_id]   # the Empty classic group the consumer group replaced
            return
        k = rec.decode_key(key)
        if isinstance(k, rec.OffsetKey):
            if value is None:
                self.offsets.remove(k.group, k.topic, k.partition)
            else:
                self.offsets.put(k.group, k.topic, k.partition, rec.decode_offset_value(value))
                if k.group not in self.groups and k.group not in self.consumer.groups:
                    self._create_group(k.group)
            return
        if value is None:
            group = self.groups.pop(k.group, None)
            if group is not None:
                for mid in list(group.members):
                    self._cancel_heartbeat(group, mid)
            return
        self._load_group(k.group, rec.decode_group_value(value))

    def _load_group(self, group_id: str, stored: rec.StoredGroup) -> None:
        old = self.groups.get(group_id)
        if old is not None:
            for mid in list(old.members):
                self._cancel_heartbeat(old, mid)
        group = ClassicGroup(group_id, self._now, S.STABLE if stored.members else S.EMPTY,
                             on_transition=self._record_transition)
        group.generation_id = stored.generation
        group.protocol_type = stored.protocol_type or None
        group.protocol_name = stored.protocol
        group.current_state_timestamp_ms = (None if stored.current_state_timestamp_ms == -1
                                            else stored.current_state_timestamp_ms)
        for sm in stored.members:
            group.add(Member(sm.member_id, sm.group_instance_id, sm.client_id, sm.client_host,
                             sm.rebalance_timeout_ms, sm.session_timeout_ms, stored.protocol_type,
                             [(stored.protocol or "", sm.subscription)], sm.assignment))
        group.leader_id = stored.leader if stored.leader in group.members else group.leader_id
        group.subscribed_topics = group.compute_subscribed_topics()
        self.groups[group_id] = group

    def load(self, records: Iterable[tuple[bytes, bytes | None]], now_ms: int) -> None:
        """Rebuild state from __consumer_offsets records in log order; members' sessions restart now.

        A record of an unknown type is logged and skipped, as Kafka's CoordinatorLoaderImpl does (a
        client with client.id ``__admin_client`` may write anything there). A record that does not
        decode is logged and skipped too; Kafka would fail loading that partition instead, leaving its
        groups without a coordinator, which kafkaemu does not emulate.
        """
        self._now = max(self._now, now_ms)
        skipped = 0
        for key, value in records:
            try:
                self.replay(key, value)
            except rec.UnknownRecordType as exc:
                skipped += 1
                log.warning("offsets_record_skipped", reason="unknown record type", key_version=exc.version)
            except Exception as exc:
                skipped += 1
                log.error("offsets_record_skipped", reason="undecodable", error=str(exc)[:200],
                          key=key[:64].hex(), value_bytes=None if value is None else len(value))
        if skipped:
            log.warning("offsets_records_skipped", count=skipped)
        for group in self.groups.values():
            for member in group.members.values():
                self._reschedule_heartbeat(group, member)
        self.consumer.after_load()
