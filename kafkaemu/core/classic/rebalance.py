"""The classic rebalance machinery under the classic group manager: member sessions, the join phase
with its initial delay, the sync phase, and writing the group's record (Kafka's GroupMetadataManager
for classic groups, its timer side).

Timers, keyed by tuples on the shared context's Timers:
``("heartbeat", group, member)`` a member's session (a new member's join timeout while it waits in
its first JoinGroup; a pending member's wait for its rejoin); ``("join", group)`` the end of the join
phase (the initial rebalance delay when the group was Empty); ``("sync", group)`` the members that
must still SyncGroup in this generation.
"""
from __future__ import annotations

from ...logging import get_logger
from ...protocol.errors import ErrorCode
from ..context import CoordinatorContext
from ..group_api import GroupType
from .group import ClassicGroup
from .member import Member
from .records import StoredGroup, StoredMember, encode_group_key, encode_group_value
from .responses import join_response, sync_response
from .state import ClassicGroupState

log = get_logger("kafkaemu.coordinator")
S = ClassicGroupState
E = ErrorCode


def _timestamp_or_default(group: ClassicGroup) -> int:
    return -1 if group.current_state_timestamp_ms is None else group.current_state_timestamp_ms


class ClassicRebalance:
    """What a classic group's requests set going, and its timers finish: used by the classic group
    manager (``ClassicGroupManager.rebalance``)."""

    def __init__(self, ctx: CoordinatorContext) -> None:
        self.ctx = ctx
        self.settings = ctx.settings.classic

    # ============================================================ groups
    def group(self, group_id: str) -> ClassicGroup | None:
        return self.ctx.group(group_id, GroupType.CLASSIC)

    @property
    def groups(self) -> dict[str, ClassicGroup]:
        return self.ctx.groups_of(GroupType.CLASSIC)

    def create_group(self, group_id: str) -> ClassicGroup:
        group = ClassicGroup(group_id, self.ctx.now_ms, on_transition=self.record_transition)
        self.ctx.groups[group_id] = group
        return group

    def record_transition(self, group: ClassicGroup, old: ClassicGroupState, new: ClassicGroupState) -> None:
        log.info("group_transition", group=group.group_id, from_state=old.value, to_state=new.value,
                 generation=group.generation_id)
        self.ctx.record_transition(group.group_id, old, new, group.generation_id)

    # ============================================================ records
    def store_group(self, group: ClassicGroup, assignment: dict[str, bytes]) -> None:
        members = tuple(StoredMember(
            member_id=m.member_id, group_instance_id=m.group_instance_id, client_id=m.client_id,
            client_host=m.client_host, rebalance_timeout_ms=m.rebalance_timeout_ms,
            session_timeout_ms=m.session_timeout_ms, subscription=m.metadata(group.protocol_name),
            assignment=assignment.get(m.member_id, b"")) for m in group.members.values())
        self._write(group, StoredGroup(
            protocol_type=group.protocol_type or "", generation=group.generation_id,
            protocol=group.protocol_name, leader=group.leader_id,
            current_state_timestamp_ms=_timestamp_or_default(group), members=members))

    def store_empty_group(self, group: ClassicGroup) -> None:
        self._write(group, StoredGroup("", 0, None, None, _timestamp_or_default(group), ()))

    def _write(self, group: ClassicGroup, value: StoredGroup) -> None:
        self.ctx.append(group.group_id, [(encode_group_key(group.group_id), encode_group_value(value))])

    # ============================================================ sessions
    @staticmethod
    def _heartbeat_key(group_id: str, member_id: str) -> tuple:
        return ("heartbeat", group_id, member_id)

    def schedule_session(self, group_id: str, member_id: str, timeout_ms: int) -> None:
        key = ("heartbeat", group_id, member_id)   # _heartbeat_key, inline: every heartbeat and commit
        # a session pushed back (a heartbeat, a commit) keeps its timer: always this callback
        if not self.ctx.postpone(key, timeout_ms):
            self.ctx.schedule(key, timeout_ms, lambda: self._expire_heartbeat(group_id, member_id))

    def reschedule_heartbeat(self, group: ClassicGroup, member: Member, timeout_ms: int | None = None) -> None:
        self.schedule_session(group.group_id, member.member_id,
                               member.session_timeout_ms if timeout_ms is None else timeout_ms)

    def cancel_heartbeat(self, group: ClassicGroup, member_id: str) -> None:
        self.ctx.cancel(self._heartbeat_key(group.group_id, member_id))

    def _expire_heartbeat(self, group_id: str, member_id: str) -> None:
        self.ctx.runtime.timer(group_id, self._heartbeat_key(group_id, member_id),
                               lambda: self._expire_heartbeat_now(group_id, member_id))

    def _expire_heartbeat_now(self, group_id: str, member_id: str) -> None:
        group = self.group(group_id)
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
        self.drop_member(group, member.member_id)
        if group.is_in(S.STABLE, S.COMPLETING_REBALANCE):
            self.maybe_prepare_rebalance_or_complete_join(group, f"removing member {member.member_id}")
        elif group.is_in(S.PREPARING_REBALANCE) and group.has_all_members_joined():
            self._complete_join(group)

    def drop_member(self, group: ClassicGroup, member_id: str) -> None:
        """Remove a member; any reply it still has parked is answered so its connection never stalls."""
        member = group.members.get(member_id)
        if member is not None:
            group.complete_join(member, join_response(E.UNKNOWN_MEMBER_ID))
            group.complete_sync(member, sync_response(E.UNKNOWN_MEMBER_ID))
        group.remove(member_id)
        self.cancel_heartbeat(group, member_id)

    # ============================================================ the join phase
    @staticmethod
    def join_key(group_id: str) -> tuple:
        return ("join", group_id)

    @staticmethod
    def sync_key(group_id: str) -> tuple:
        return ("sync", group_id)

    def maybe_prepare_rebalance_or_complete_join(self, group: ClassicGroup, reason: str) -> None:
        if group.can_rebalance():
            self.prepare_rebalance(group, reason)
        else:
            self.maybe_complete_join_phase(group)

    def maybe_complete_join_phase(self, group: ClassicGroup) -> None:
        if not group.is_in(S.PREPARING_REBALANCE):
            return
        if group.previous_state is S.EMPTY:
            return  # the initial rebalance waits for its delay timer
        if not group.has_all_members_joined():
            return
        self._complete_join(group)

    def prepare_rebalance(self, group: ClassicGroup, reason: str) -> None:
        if group.is_in(S.COMPLETING_REBALANCE):
            self.reset_and_propagate_assignment_error(group, E.REBALANCE_IN_PROGRESS)
        group.pending_sync_members.clear()
        self.ctx.cancel(self.sync_key(group.group_id))
        initial = group.is_in(S.EMPTY)
        if initial:
            delay = self.settings.initial_rebalance_delay_ms
            remaining = max(group.rebalance_timeout_ms() - delay, 0)
            self._schedule_initial_join(group.group_id, delay, remaining)
        log.info("preparing_rebalance", group=group.group_id, state=group.state.value,
                 generation=group.generation_id, reason=reason)
        group.transition_to(S.PREPARING_REBALANCE, self.ctx.now_ms)
        if not initial:
            self._maybe_complete_join_else_schedule(group)

    def _schedule_initial_join(self, group_id: str, delay_ms: int, remaining_ms: int) -> None:
        self.ctx.schedule(self.join_key(group_id), delay_ms, lambda: self.ctx.runtime.timer(
            group_id, self.join_key(group_id),
            lambda: self._try_complete_initial_rebalance(group_id, delay_ms, remaining_ms)))

    def _try_complete_initial_rebalance(self, group_id: str, delay_ms: int, remaining_ms: int) -> None:
        group = self.group(group_id)
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
            self._schedule_join_deadline(group)

    def _schedule_join_deadline(self, group: ClassicGroup) -> None:
        gid = group.group_id
        self.ctx.schedule(self.join_key(gid), group.rebalance_timeout_ms(), lambda: self.ctx.runtime.timer(
            gid, self.join_key(gid), lambda: self._complete_join_by_id(gid)))

    def _complete_join_by_id(self, group_id: str) -> None:
        group = self.group(group_id)
        if group is not None:
            self._complete_join(group)

    def _complete_join(self, group: ClassicGroup) -> None:
        gid = group.group_id
        self.ctx.cancel(self.join_key(gid))
        missing = [m for m in group.not_yet_rejoined() if not m.is_static]
        for m in missing:
            self.drop_member(group, m.member_id)
        if missing:
            log.info("removed_members_not_rejoined", group=gid, members=[m.member_id for m in missing])
        if group.is_in(S.DEAD):
            return
        if not group.maybe_elect_new_joined_leader() and group.members:
            # Only static members that did not rejoin remain: wait another rebalance timeout.
            self._schedule_join_deadline(group)
            return
        group.init_next_generation(self.ctx.now_ms)
        if group.is_in(S.EMPTY):
            log.info("group_empty", group=gid, generation=group.generation_id)
            self.store_group(group, {})
            return
        log.info("group_join_completed", group=gid, generation=group.generation_id,
                 members=len(group.members), protocol=group.protocol_name, leader=group.leader_id)
        members_view = group.join_members_view()
        for member in list(group.members.values()):
            is_leader = group.is_leader(member.member_id)
            group.complete_join(member, join_response(
                E.NONE, member.member_id, group.generation_id, group.protocol_type, group.protocol_name,
                group.leader_id, members_view if is_leader else []))
            self.reschedule_heartbeat(group, member)
            member.is_new = False
            group.pending_sync_members.add(member.member_id)
        generation = group.generation_id
        self.ctx.schedule(self.sync_key(gid), group.rebalance_timeout_ms(), lambda: self.ctx.runtime.timer(
            gid, self.sync_key(gid), lambda: self._expire_pending_sync(gid, generation)))

    # ============================================================ the sync phase
    def _expire_pending_sync(self, group_id: str, generation_id: int) -> None:
        group = self.group(group_id)
        if group is None or generation_id != group.generation_id:
            return
        if group.is_in(S.COMPLETING_REBALANCE, S.STABLE) and group.pending_sync_members:
            laggards = sorted(group.pending_sync_members)
            for mid in laggards:
                self.drop_member(group, mid)
            log.info("removed_members_not_synced", group=group_id, members=laggards)
            self.prepare_rebalance(group, "pending sync expired")

    def reset_and_propagate_assignment_error(self, group: ClassicGroup, error: ErrorCode) -> None:
        for m in group.members.values():
            m.assignment = b""
        self.propagate_assignment(group, error)

    def propagate_assignment(self, group: ClassicGroup, error: ErrorCode) -> None:
        ptype = group.protocol_type if error == E.NONE else None
        pname = group.protocol_name if error == E.NONE else None
        for m in list(group.members.values()):
            if group.complete_sync(m, sync_response(error, m.assignment, ptype, pname)):
                self.reschedule_heartbeat(group, m)

    def remove_pending_sync(self, group: ClassicGroup, member_id: str) -> None:
        group.pending_sync_members.discard(member_id)
        if not group.is_in(S.COMPLETING_REBALANCE, S.STABLE) or not group.pending_sync_members:
            self.ctx.cancel(self.sync_key(group.group_id))
