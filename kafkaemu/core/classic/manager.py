"""Classic groups: JoinGroup, SyncGroup, Heartbeat, LeaveGroup, DescribeGroups, deletion and replay.

Behaviour follows Apache Kafka's GroupMetadataManager for classic groups. JoinGroup and SyncGroup
take a ``respond`` callable that may be called later (a reply parked until the join or sync phase
completes, released by another request or by a timer); the rebalance machinery and the timers are
in rebalance.py. A group id held by a consumer (KIP-848) group answers classic requests as Kafka
does without a migration policy.
"""
from __future__ import annotations

from dataclasses import replace

from ...logging import get_logger
from ...protocol.errors import ErrorCode
from ..context import CoordinatorContext
from ..group_api import GroupError, GroupType
from ..record_format import fits_record_key
from .group import ClassicGroup
from .member import Member, Reply
from . import records
from .rebalance import ClassicRebalance
from .records import StoredGroup, decode_group_value, decode_key
from .requests import Heartbeat, JoinGroup, LeaveGroup, SyncGroup, distinct_protocols, unknown_members_left
from .responses import current_join_answer, described_group, join_response, sync_response
from .state import DEAD_ANSWER, HEARTBEAT, JOIN, SYNC, ClassicGroupState

log = get_logger("kafkaemu.coordinator")
S = ClassicGroupState
# the states in which a commit keeps a member's session alive, read on every commit (an Enum member
# is a slow class attribute lookup in CPython 3.11)
_KEEPS_SESSION = (S.STABLE, S.PREPARING_REBALANCE)
E = ErrorCode


class ClassicGroupManager:
    """The classic protocol's requests on classic groups; the rebalance machinery they drive (member
    sessions, the join and sync phases, the group's record) is ``rebalance``, a collaborator."""
    type = GroupType.CLASSIC
    records = records

    def __init__(self, ctx: CoordinatorContext) -> None:
        self.ctx = ctx
        self.settings = ctx.settings.classic
        self.rebalance = ClassicRebalance(ctx)

    def group(self, group_id: str) -> ClassicGroup | None:
        return self.ctx.group(group_id, GroupType.CLASSIC)

    @property
    def groups(self):
        return self.ctx.groups_of(GroupType.CLASSIC)

    def create_group(self, group_id: str) -> ClassicGroup:
        """An Empty group (a first JoinGroup, or offsets committed without one)."""
        return self.rebalance.create_group(group_id)

    # ============================================================ JoinGroup
    # ============================================================ online migration
    def forget(self, group: ClassicGroup) -> None:
        """A group converted to a consumer group (online upgrade): its parked JoinGroup and
        SyncGroup replies answer REBALANCE_IN_PROGRESS (the members rejoin the new group), its
        timers go, and it leaves the directory."""
        for member in group.members.values():
            group.complete_join(member, join_response(E.REBALANCE_IN_PROGRESS, member.member_id))
            group.complete_sync(member, sync_response(E.REBALANCE_IN_PROGRESS))
            self.rebalance.cancel_heartbeat(group, member.member_id)
        self.ctx.cancel(self.rebalance.join_key(group.group_id))
        self.ctx.cancel(self.rebalance.sync_key(group.group_id))
        del self.ctx.groups[group.group_id]

    def adopt_downgraded(self, group: ClassicGroup) -> None:
        """A group converted from a consumer group (online downgrade), its members holding their
        assignments: written, its members' sessions started, and a rebalance begun."""
        self.rebalance.store_group(group, group.assignments())
        for member in group.members.values():
            self.rebalance.reschedule_heartbeat(group, member)
        log.info("consumer_group_downgraded", group=group.group_id, members=len(group.members),
                 generation=group.generation_id)
        self.rebalance.prepare_rebalance(group, f"Downgrade group {group.group_id} from consumer to classic.")

    def join_group(self, req: JoinGroup, respond: Reply) -> None:
        req = replace(req, protocols=distinct_protocols(req.protocols))
        s = self.settings
        if not req.group_id:
            return respond(join_response(E.INVALID_GROUP_ID, req.member_id))
        if not s.min_session_timeout_ms <= req.session_timeout_ms <= s.max_session_timeout_ms:
            return respond(join_response(E.INVALID_SESSION_TIMEOUT, req.member_id))
        if req.group_id in self.ctx.groups and self.group(req.group_id) is None:
            # A share group (consumer groups serve classic members themselves: the coordinator routes).
            return respond(join_response(E.INCONSISTENT_GROUP_PROTOCOL, req.member_id))
        if not fits_record_key(req.group_id):
            return respond(join_response(E.UNKNOWN_SERVER_ERROR, req.member_id))
        is_unknown = req.member_id == ""
        group = self.group(req.group_id)
        new_group = group is None
        if group is None:
            if not is_unknown:
                return respond(join_response(E.UNKNOWN_MEMBER_ID, req.member_id))
            group = self.rebalance.create_group(req.group_id)
        if not self._accept_joining_member(group, req.member_id):
            self.rebalance.drop_member(group, req.member_id)
            respond(join_response(E.GROUP_MAX_SIZE_REACHED, ""))
        elif is_unknown:
            self._join_new_member(group, req, respond)
        else:
            self._join_existing_member(group, req, respond)
        if new_group and not self.ctx.has_records():
            self.rebalance.store_empty_group(group)   # a new group is written even if the join wrote nothing

    def _accept_joining_member(self, group: ClassicGroup, member_id: str) -> bool:
        limit = self.settings.max_size
        if group.is_in(S.EMPTY, S.DEAD):
            return True
        if group.is_in(S.PREPARING_REBALANCE):
            m = group.members.get(member_id)
            return (m is not None and m.is_awaiting_join) or group.num_awaiting_join < limit
        return member_id in group.members or len(group.members) < limit

    def _join_new_member(self, group: ClassicGroup, req: JoinGroup, respond: Reply) -> None:
        names = [name for name, _ in req.protocols]
        if group.is_in(S.DEAD):
            return respond(join_response(DEAD_ANSWER, ""))
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
            self.rebalance.schedule_session(group.group_id, new_id, req.session_timeout_ms)
            return respond(join_response(E.MEMBER_ID_REQUIRED, new_id))
        return self._add_member_then_rebalance(group, req, new_id, respond)

    def _join_existing_member(self, group: ClassicGroup, req: JoinGroup, respond: Reply) -> None:
        mid = req.member_id
        names = [name for name, _ in req.protocols]
        if group.is_in(S.DEAD):
            return respond(join_response(DEAD_ANSWER, mid))
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
        step = JOIN[group.state]
        if step.__class__ is ErrorCode:
            return respond(join_response(step, mid))
        member = group.member(mid)
        if step == "rejoin":
            return self._update_member_then_rebalance(group, member, req, respond, "member rejoining")
        if step == "join_completing":
            if member.matches(req.protocols):
                # Same metadata: the member probably lost the JoinGroup answer; repeat it.
                return respond(current_join_answer(group, mid, with_members=group.is_leader(mid)))
            return self._update_member_then_rebalance(group, member, req, respond, "member metadata changed")
        if group.is_leader(mid):   # join_stable
            # The leader rejoining forces a rebalance (it may have seen topic metadata change).
            return self._update_member_then_rebalance(group, member, req, respond, "leader rejoined")
        if not member.matches(req.protocols):
            return self._update_member_then_rebalance(group, member, req, respond, "member metadata changed")
        return respond(current_join_answer(group, mid, with_members=False))

    def _update_member_then_rebalance(self, group: ClassicGroup, member: Member, req: JoinGroup,
                                      respond: Reply, reason: str) -> None:
        group.update_member(member, req.protocols, req.rebalance_timeout_ms, req.session_timeout_ms, respond)
        self.rebalance.maybe_prepare_rebalance_or_complete_join(group, reason)

    def _add_member_then_rebalance(self, group: ClassicGroup, req: JoinGroup, member_id: str,
                                   respond: Reply) -> None:
        member = Member(member_id, req.group_instance_id, req.client_id, req.client_host,
                        req.rebalance_timeout_ms, req.session_timeout_ms, req.protocol_type,
                        list(req.protocols), is_new=True)
        if group.is_in(S.PREPARING_REBALANCE) and group.previous_state is S.EMPTY:
            group.new_member_added = True
        group.add(member, respond)
        # A parked new member cannot heartbeat; bound its wait so abandoned joins do not linger.
        self.rebalance.reschedule_heartbeat(group, member, self.settings.new_member_join_timeout_ms)
        log.info("member_added", group=group.group_id, member=member_id, instance=req.group_instance_id)
        self.rebalance.maybe_prepare_rebalance_or_complete_join(group, f"adding member {member_id}")

    def _update_static_member(self, group: ClassicGroup, req: JoinGroup, old_id: str, new_id: str,
                              respond: Reply) -> None:
        current_leader = group.leader_id
        member = group.replace_static_member(req.group_instance_id, old_id, new_id)
        self.rebalance.cancel_heartbeat(group, old_id)
        self.rebalance.reschedule_heartbeat(group, member)
        group.update_member(member, req.protocols, req.rebalance_timeout_ms, req.session_timeout_ms, respond)
        if group.is_in(S.STABLE):
            if group.protocol_name == group.select_protocol():
                # Same protocol: take the old slot and assignment without a rebalance (KIP-345).
                self.rebalance.store_group(group, group.assignments())
                if req.api_version >= 9:
                    is_leader = group.is_leader(new_id)
                    group.complete_join(member, current_join_answer(
                        group, new_id, with_members=is_leader, skip_assignment=is_leader))
                else:
                    # The old leader id is returned so a restarted leader does not redo a trivial assignment.
                    group.complete_join(member, current_join_answer(
                        group, new_id, with_members=False, leader=current_leader or ""))
            else:
                self.rebalance.maybe_prepare_rebalance_or_complete_join(group, "static member changed protocol")
        elif group.is_in(S.COMPLETING_REBALANCE):
            # The leader may already hold the old id in its assignment; redo the rebalance.
            self.rebalance.prepare_rebalance(group, "static member rejoined during CompletingRebalance")
        else:
            self.rebalance.maybe_complete_join_phase(group)

    # ============================================================ SyncGroup
    def sync_group(self, req: SyncGroup, respond: Reply) -> None:
        if not req.group_id:
            return respond(sync_response(E.INVALID_GROUP_ID))
        group = self.group(req.group_id)      # None for a consumer group too
        if group is None or group.is_empty():
            return respond(sync_response(E.UNKNOWN_MEMBER_ID))
        if group.is_in(S.DEAD):
            return respond(sync_response(DEAD_ANSWER))
        try:
            group.validate_member(req.member_id, req.group_instance_id)
        except GroupError as exc:
            return respond(sync_response(exc.code))
        if req.generation_id != group.generation_id:
            return respond(sync_response(E.ILLEGAL_GENERATION))
        if ((req.protocol_type is not None and req.protocol_type != group.protocol_type)
                or (req.protocol_name is not None and req.protocol_name != group.protocol_name)):
            return respond(sync_response(E.INCONSISTENT_GROUP_PROTOCOL))
        step = SYNC[group.state]
        if step.__class__ is ErrorCode:
            return respond(sync_response(step))
        member = group.member(req.member_id)
        if step == "await_assignment":
            if member.awaiting_sync is not None:      # a duplicate SyncGroup: release the superseded one
                member.awaiting_sync(sync_response(E.REBALANCE_IN_PROGRESS))
            member.awaiting_sync = respond
            self.rebalance.remove_pending_sync(group, req.member_id)
            if group.is_leader(req.member_id):
                self._complete_sync(group, req)
            return
        # current_assignment: a late SyncGroup gets the member's current assignment.
        self.rebalance.remove_pending_sync(group, req.member_id)
        respond(sync_response(E.NONE, member.assignment, group.protocol_type, group.protocol_name))

    def _complete_sync(self, group: ClassicGroup, leader_req: SyncGroup) -> None:
        assignment = {mid: leader_req.assignments.get(mid, b"") for mid in group.members}
        log.info("assignment_received", group=group.group_id, leader=leader_req.member_id,
                 generation=group.generation_id, members=len(group.members))
        self.rebalance.store_group(group, assignment)
        for mid, m in group.members.items():
            m.assignment = assignment[mid]
        self.rebalance.propagate_assignment(group, E.NONE)
        group.transition_to(S.STABLE, self.ctx.now_ms)

    def assignment_not_written(self, group_id: str, generation_id: int, error: ErrorCode) -> None:
        """The leader's SyncGroup could not write the assignment (its write is undone): as Kafka's
        append callback, every member waiting in SyncGroup gets the error and the group rebalances."""
        group = self.group(group_id)
        if group is not None and group.is_in(S.COMPLETING_REBALANCE) and group.generation_id == generation_id:
            self.rebalance.reset_and_propagate_assignment_error(group, error)
            self.rebalance.maybe_prepare_rebalance_or_complete_join(
                group, f"error {error.name} when storing group assignment during SyncGroup")

    # ============================================================ Heartbeat
    def heartbeat(self, req: Heartbeat) -> ErrorCode:
        if not req.group_id:
            return E.INVALID_GROUP_ID
        group = self.group(req.group_id)      # None for a consumer group too
        if group is None:
            return E.UNKNOWN_MEMBER_ID
        if group.is_in(S.DEAD):
            return DEAD_ANSWER
        try:
            group.validate_member(req.member_id, req.group_instance_id)
        except GroupError as exc:
            return exc.code
        if req.generation_id != group.generation_id:
            return E.ILLEGAL_GENERATION
        answer, keeps_session = HEARTBEAT[group.state]
        if keeps_session:
            self.rebalance.reschedule_heartbeat(group, group.member(req.member_id))
        return answer

    def offset_committed(self, group: ClassicGroup, member_id: str) -> None:
        """Offset commits keep a classic member's session alive (Kafka: Stable or PreparingRebalance)."""
        if group.state in _KEEPS_SESSION:
            self.rebalance.reschedule_heartbeat(group, group.member(member_id))

    # ============================================================ LeaveGroup
    def leave_group(self, req: LeaveGroup) -> dict:
        """Newest shape: top-level error plus one result per leaving member."""
        if not req.group_id:
            return {"error_code": int(E.INVALID_GROUP_ID), "members": []}
        group = self.group(req.group_id)
        if group is None:
            return unknown_members_left(req)
        if group.is_in(S.DEAD):
            return {"error_code": int(DEAD_ANSWER), "members": []}
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
                self.rebalance.cancel_heartbeat(group, who.member_id)
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
                self.rebalance.maybe_prepare_rebalance_or_complete_join(group, f"members left: {left}")
            elif group.is_in(S.PREPARING_REBALANCE):
                self.rebalance.maybe_complete_join_phase(group)
        return {"error_code": 0, "members": results}

    def _remove_current_member(self, group: ClassicGroup, member_id: str, reason: str | None) -> None:
        log.info("member_left", group=group.group_id, member=member_id, reason=reason)
        self.rebalance.drop_member(group, member_id)

    # ============================================================ admin
    def describe(self, group_id: str, authorized_operations: int) -> dict:
        """A DescribeGroups entry; an unknown id, or a consumer group's, is described as Dead (as Kafka)."""
        return described_group(group_id, self.group(group_id), authorized_operations)

    def delete_group(self, group: ClassicGroup) -> None:
        """Forget a group whose tombstones are written (DeleteGroups, or its offsets all expired)."""
        group.transition_to(S.DEAD, self.ctx.now_ms)
        del self.ctx.groups[group.group_id]
        log.info("group_deleted", group=group.group_id)

    # ============================================================ replay of __consumer_offsets
    def replay(self, key: bytes, value: bytes | None) -> None:
        """Apply one GroupMetadata record (Kafka's GroupMetadataManager.replay for classic groups)."""
        group_id = decode_key(key).group_id
        old = self.group(group_id)
        if old is not None:
            for mid in list(old.members):
                self.rebalance.cancel_heartbeat(old, mid)
        if value is None:
            if old is not None:
                del self.ctx.groups[group_id]
            return
        if group_id in self.ctx.groups and old is None:
            raise ValueError(f"group {group_id} is not a classic group")
        self.ctx.groups[group_id] = self._loaded_group(group_id, decode_group_value(value))

    def _loaded_group(self, group_id: str, stored: StoredGroup) -> ClassicGroup:
        group = ClassicGroup(group_id, self.ctx.now_ms, S.STABLE if stored.members else S.EMPTY,
                             on_transition=self.rebalance.record_transition)
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
        return group

    def after_load(self) -> None:
        """Once every record is replayed: every member's session restarts now."""
        for group in self.groups.values():
            for member in group.members.values():
                self.rebalance.reschedule_heartbeat(group, member)
