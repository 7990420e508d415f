"""The one lifecycle of consumer, share and streams groups (Kafka's GroupMetadataManager, the parts
of consumerGroupHeartbeat, shareGroupHeartbeat and streamsGroupHeartbeat that are the same).

A heartbeat: the group id must fit a record key; the request is validated (``validate``); a leaving
epoch leaves, any other beats. A beat gets or creates the group and the member (epoch checks), lets
the kind update the member (``update_member``: whether the group epoch bumps), bumps it, recomputes
the target assignment when the group epoch is ahead of it (``assign``), moves the member towards its
target (``reconcile``), restarts its session and answers (``answer``). Whatever changed is persisted
as the difference from what was last written (record_format.RecordDiff).

One revert policy, Kafka's: a heartbeat that fails (GroupError) changes nothing. Kafka's
CoordinatorRuntime applies an operation's records only once it returns them; an operation that
throws leaves the shard at its last written snapshot. Here the runtime reverts the write under way
to the snapshot it took (``CoordinatorRuntime.revert``) and the member gets the error.

Static members (consumer and streams heartbeats with an instance id; Kafka's
getOrMaybeSubscribeStaticConsumerGroupMember and getOrMaybeCreateStaticStreamsGroupMember): the
group knows each by its instance id. Joining with an instance id a live member holds is
UNRELEASED_INSTANCE_ID; one whose member left with epoch -2 gives that member's place (assignment,
target) to the new member id at epoch 0 (``rejoined``); a beat or leave from any other member id
than the holder's is FENCED_INSTANCE_ID, an unknown instance id UNKNOWN_MEMBER_ID. Leaving with -2
keeps the member (``left_for_now``) until its session times out; -1 removes it.

Timers: ``(<kind>-session, group, member)`` fences a member that stops heartbeating (the group's
session timeout); ``(<kind>-rebalance, group, member)`` one still revoking when its rebalance timeout
ends, at the epoch it was revoking at. Removing a member (leave, fence, expiry, a LeaveGroup of an
admin) bumps the group epoch so the others are given what it had. ``after_load`` restarts the
sessions of replayed members.

A kind subclasses ``ModernGroupManager`` with its name, group type, group class, records module and
replay, and supplies the hooks: ``new_group`` (the class), ``update_member``, ``assign``,
``reconcile``, ``answer`` and, for kinds with static members, ``left_for_now``; ``validate`` comes
from its requests module, the session timeout and heartbeat interval from its settings and the
group's configs.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Any

from ...logging import get_logger
from ...protocol.errors import ErrorCode
from ..context import CoordinatorContext
from ..group_api import GroupError, GroupType
from ..group_configs import GroupConfigs
from ..classic.requests import unknown_members_left
from ..record_format import fits_record_key
from .group import ModernGroup
from .replay import replay
from .wire import error_response

log = get_logger("kafkaemu.modern_groups")
E = ErrorCode
LEAVE_GROUP_STATIC_MEMBER_EPOCH = -2


def instance_id_of(req) -> str | None:
    """The heartbeat's instance id (share heartbeats have none)."""
    return getattr(req, "instance_id", None)


class ModernGroupManager:
    name: str                     # "consumer", "share", "streams": timer keys, log events, messages
    group_class: type[ModernGroup]   # its ``type`` and ``records`` (RecordDiff, KEY_VERSIONS) are the kind's
    replayer: Any                 # the kind's replay module (``apply`` a record's value, ``remove`` on a tombstone)
    leave_epochs: frozenset[int] = frozenset({-1, -2})   # leaving, and a static member leaving for now
    held = "partitions"           # what a member holds, as Kafka's messages name it
    not_found = "Group {} not found."
    check_epoch_on_join = True    # whether an epoch-0 heartbeat of a known member is checked
    replaces_empty_classic = False   # whether joining turns an Empty classic group into one of this kind
    settles_empty_target = True   # whether the last member's removal settles the target assignment

    type: GroupType
    records: Any

    def __init_subclass__(cls, name=None, group_class=None, replayer=None, **kwargs) -> None:
        """A kind declares itself: ``class XGroupManager(ModernGroupManager, name=..., group_class=...,
        replayer=...)``; its type and records are its group class's."""
        super().__init_subclass__(**kwargs)
        if group_class is not None:
            cls.name, cls.group_class, cls.replayer = name, group_class, replayer
            cls.type, cls.records = group_class.type, group_class.records

    def __init__(self, ctx: CoordinatorContext, settings, group_config: GroupConfigs) -> None:
        """``settings``: the kind's broker settings; ``group_config``: the groups' configs
        (``<kind>.session.timeout.ms``..., set on the group or else the broker setting)."""
        self.ctx = ctx
        self.settings = settings
        self.group_config = group_config
        self._session = f"{self.name}-session"
        self._rebalance = f"{self.name}-rebalance"
        self._session_timeout_config = f"{self.name}.session.timeout.ms"
        self._heartbeat_interval_config = f"{self.name}.heartbeat.interval.ms"

    def group(self, group_id: str):
        return self.ctx.group(group_id, self.type)

    @property
    def groups(self):
        return self.ctx.groups_of(self.type)

    # ============================================================ heartbeat
    def heartbeat(self, req, *context) -> dict:
        """Leave or beat; a failed heartbeat changes nothing and answers the error."""
        if not fits_record_key(req.group_id):
            return self.error_answer(E.UNKNOWN_SERVER_ERROR)
        try:
            self.validate(req)
            if req.member_epoch in self.leave_epochs:
                response = self.leave(req)
            else:
                response = self.beat(req, *context)
        except GroupError as exc:
            self.ctx.runtime.revert()
            log.info(f"{self.name}_heartbeat_error", group=req.group_id, member=req.member_id,
                     epoch=req.member_epoch, error=int(exc.code), message=exc.message)
            # GroupCoordinatorService.handleOperationException answers UNKNOWN_SERVER_ERROR without its message
            return self.error_answer(exc.code, None if exc.code == E.UNKNOWN_SERVER_ERROR else exc.message)
        group = self.group(req.group_id)
        if group is not None:
            self.persist(group)
        return response

    def error_answer(self, code: ErrorCode, message: str | None = None) -> dict:
        return error_response(code, message)

    def persist(self, group: ModernGroup) -> None:
        self.ctx.append(group.group_id, self.records.RecordDiff.changes(group))

    def beat(self, req, *context) -> dict:
        joining = req.member_epoch == 0
        group, created = self.group_for_beat(req.group_id, joining)
        self.check_size(group, req, joining)
        member = self.member_for(group, req, joining, self.member_id_of(req))
        old_state = group.state
        updated, bump, note = self.update_member(group, member, req, *context)
        self.bump_and_assign(group, updated.member_id, bump)
        reconciled = self.reconcile(group, updated, req, note)
        self.schedule_session_timeout(group.group_id, reconciled.member_id)
        self.note_state(group, old_state)
        return self.answer(group, member, reconciled, req, joining, created, note)

    # --- the hooks of a kind ---------------------------------------------------------------
    def validate(self, req) -> None:
        """Raise GroupError for a malformed request (Kafka's checks before any group is looked at)."""

    def update_member(self, group: ModernGroup, member, req, *context) -> tuple[Any, bool, Any]:
        """Store the member as the request updates it; return it, whether the group epoch bumps, and
        what ``reconcile`` and ``answer`` need besides (or None)."""
        raise NotImplementedError

    def assign(self, group: ModernGroup) -> None:
        """A new target assignment at the group epoch."""
        raise NotImplementedError

    def reconcile(self, group: ModernGroup, member, req, note):
        """Move the member towards its target; return it as stored."""
        raise NotImplementedError

    def answer(self, group: ModernGroup, before, member, req, joining: bool, created: bool, note) -> dict:
        raise NotImplementedError

    def config(self, group_id: str, name: str):
        """The group's value of a group config: set on the group, else the kind's broker setting."""
        return self.group_config.value(group_id, name)

    def session_timeout_ms(self, group_id: str, member_id: str | None = None) -> int:
        return self.config(group_id, self._session_timeout_config)

    def heartbeat_interval_ms(self, group_id: str) -> int:
        return self.config(group_id, self._heartbeat_interval_config)

    def revoking(self, member) -> bool:
        """Whether the member is revoking what it holds (its rebalance timeout runs)."""
        return False

    def member_removed(self, group: ModernGroup, member_id: str) -> None:
        """After the member left the group, before the epoch bumps."""

    def member_expired(self, group_id: str, member_id: str) -> None:
        """A member's session ran out (after its removal)."""

    def group_deleted(self, group: ModernGroup) -> None:
        """A group was deleted (after its tombstones are decided)."""

    def loaded(self, group: ModernGroup) -> None:
        """A group was replayed from its records."""

    # --- the group and the member ----------------------------------------------------------
    def group_for_beat(self, group_id: str, joining: bool) -> tuple[ModernGroup, bool]:
        """The group, and whether this heartbeat created it; an Empty classic group (offsets only)
        becomes one of this kind when the kind allows it, its offsets kept."""
        existing = self.ctx.groups.get(group_id)
        if existing is not None:
            if existing.type is self.type:
                return existing, False
            if not (joining and self.replaces_empty_classic and existing.type is GroupType.CLASSIC
                    and existing.is_empty()):
                raise GroupError(E.GROUP_ID_NOT_FOUND, f"Group {group_id} is not a {self.name} group.")
        elif not joining:
            raise GroupError(E.GROUP_ID_NOT_FOUND, self.not_found.format(group_id))
        group = self.group_class(group_id, self.ctx.now_ms)
        if existing is not None:
            self.ctx.append(group_id, existing.tombstone_records())
            log.info(f"classic_group_replaced_by_{self.name}_group", group=group_id)
        self.ctx.groups[group_id] = group
        log.info(f"{self.name}_group_created", group=group_id)
        return group, True

    def check_size(self, group: ModernGroup, req, joining: bool) -> None:
        """A static member taking its instance's place never counts as one more."""
        if group.static_member(instance_id_of(req)) is not None:
            return
        max_size = self.settings.max_size
        if len(group.members) >= max_size and req.member_id not in group.members:
            raise GroupError(E.GROUP_MAX_SIZE_REACHED,
                             f"The {self.name} group has reached its maximum capacity of {max_size} members.")

    def member_id_of(self, req) -> str:
        return req.member_id

    def member_for(self, group: ModernGroup, req, joining: bool, member_id: str):
        """The member the heartbeat is of: a new one joining, or a known one at a valid epoch; with
        an instance id, the static member of that instance."""
        instance_id = instance_id_of(req)
        if instance_id is not None:
            return self.static_member_for(group, req, joining, member_id, instance_id)
        member = group.members.get(member_id)
        if member is None:
            if not joining:
                raise GroupError(E.UNKNOWN_MEMBER_ID,
                                 f"Member {member_id} is not a member of group {group.group_id}.")
            log.info(f"{self.name}_member_joining", group=group.group_id, member=member_id)
            return self.group_class.member_class(member_id)
        if self.check_epoch_on_join or not joining:
            self.check_epoch(member, req)
        return member

    # --- static members (Kafka's getOrMaybeSubscribeStatic... / getOrMaybeCreateStatic...Member) --
    def static_member_for(self, group: ModernGroup, req, joining: bool, member_id: str, instance_id: str):
        """Joining, an instance id nobody holds makes a new member; one held by a member that left
        for now (epoch -2) gives that member's place, tasks or partitions and target to the new
        member id at epoch 0; one held by a live member is UNRELEASED_INSTANCE_ID. A beat must come
        from the member holding the instance id (FENCED_INSTANCE_ID otherwise) at a valid epoch."""
        existing = group.static_member(instance_id)
        if joining:
            if existing is None:
                member = group.members.get(member_id)
                if member is not None:
                    if self.check_epoch_on_join:
                        self.check_epoch(member, req)
                    return member
                log.info(f"{self.name}_static_member_joining", group=group.group_id, member=member_id,
                         instance=instance_id)
                return self.group_class.member_class(member_id, instance_id=instance_id)
            if not self.instance_released(existing):
                raise GroupError(E.UNRELEASED_INSTANCE_ID,
                                 f"Static member {member_id} with instance id {instance_id} cannot join the group "
                                 f"because the instance id is owned by {existing.member_id} member.")
            new = self.rejoined(existing, member_id)
            self.cancel_timers(group.group_id, existing.member_id)
            group.replace_member(existing.member_id, new)
            log.info(f"{self.name}_static_member_replaced", group=group.group_id, instance=instance_id,
                     old_member=existing.member_id, member=member_id)
            return new
        self.check_static_member(existing, member_id, instance_id)
        self.check_epoch(existing, req)
        return existing

    @staticmethod
    def check_static_member(existing, member_id: str, instance_id: str) -> None:
        """throwIfStaticMemberIsUnknown, then throwIfInstanceIdIsFenced."""
        if existing is None:
            raise GroupError(E.UNKNOWN_MEMBER_ID, f"Instance id {instance_id} is unknown.")
        if existing.member_id != member_id:
            raise GroupError(E.FENCED_INSTANCE_ID,
                             f"Static member {member_id} with instance id {instance_id} was fenced by member "
                             f"{existing.member_id}.")

    def instance_released(self, existing) -> bool:
        """Whether a new member may take this static member's instance id: it left for now."""
        return existing.member_epoch == LEAVE_GROUP_STATIC_MEMBER_EPOCH

    def rejoined(self, existing, member_id: str):
        """The member a static member becomes when its instance rejoins under ``member_id``: the same
        assignment, at epoch 0."""
        return replace(existing, member_id=member_id, member_epoch=0, previous_member_epoch=0)

    def left_for_now(self, member):
        """The static member as it stays after leaving with epoch -2: nothing pending revocation."""
        raise NotImplementedError

    def owns_only_assigned(self, member, req) -> bool:
        """Whether what the member reports owning is within what it was assigned (a member one epoch
        behind may have lost the answer that bumped it)."""
        return True

    def check_epoch(self, member, req) -> None:
        received = req.member_epoch
        if received > member.member_epoch:
            raise GroupError(E.FENCED_MEMBER_EPOCH,
                             f"The {self.name} group member has a greater member epoch ({received}) than the one "
                             f"known by the group coordinator ({member.member_epoch}). The member must abandon "
                             f"all its {self.held} and rejoin.")
        if received < member.member_epoch and (received != member.previous_member_epoch
                                               or not self.owns_only_assigned(member, req)):
            raise GroupError(E.FENCED_MEMBER_EPOCH,
                             f"The {self.name} group member has a smaller member epoch ({received}) than the one "
                             f"known by the group coordinator ({member.member_epoch}). The member must abandon "
                             f"all its {self.held} and rejoin.")

    def bump_and_assign(self, group: ModernGroup, member_id: str, bump: bool, **log_fields) -> None:
        if bump:
            group.group_epoch += 1
            log.info(f"{self.name}_group_epoch_bumped", group=group.group_id, epoch=group.group_epoch,
                     member=member_id, **log_fields)
        if group.group_epoch > group.assignment_epoch:
            self.assign(group)

    def store_reconciled(self, group: ModernGroup, before, after) -> None:
        """The reconciled member is stored; a member now revoking must be done within its rebalance
        timeout, and any other has none running."""
        group.put_member(after)
        if after == before:
            return
        log.info(f"{self.name}_member_reconciled", group=group.group_id, member=after.member_id,
                 epoch=after.member_epoch)
        if self.revoking(after):
            self.schedule_rebalance_timeout(group.group_id, after)
        else:
            self.ctx.cancel((self._rebalance, group.group_id, after.member_id))

    def note_state(self, group: ModernGroup, old) -> None:
        new = group.state
        if new is not old:
            group.state_changed(self.ctx.now_ms)
            log.info(f"{self.name}_group_transition", group=group.group_id, from_state=old.value,
                     to_state=new.value, epoch=group.group_epoch)
            self.ctx.record_transition(group.group_id, old, new, group.group_epoch)

    # ============================================================ leaving, fencing, expiry
    def leave(self, req) -> dict:
        """Epoch -1 removes the member; a static member (an instance id) leaving with -2 stays, its
        assignment kept, until its session times out or its instance rejoins."""
        group = self.group(req.group_id)
        if group is None:
            raise GroupError(E.GROUP_ID_NOT_FOUND, self.not_found.format(req.group_id))
        instance_id = instance_id_of(req)
        if instance_id is None:
            if req.member_id not in group.members:
                raise GroupError(E.UNKNOWN_MEMBER_ID,
                                 f"Member {req.member_id} is not a member of group {req.group_id}.")
            log.info(f"{self.name}_member_left", group=group.group_id, member=req.member_id, epoch=req.member_epoch)
            self.fence(group, req.member_id)
            return self.left_answer(req)
        member = group.static_member(instance_id)
        self.check_static_member(member, req.member_id, instance_id)
        if req.member_epoch == LEAVE_GROUP_STATIC_MEMBER_EPOCH:
            old_state = group.state
            group.put_member(self.left_for_now(member))
            self.ctx.cancel((self._rebalance, group.group_id, member.member_id))
            log.info(f"{self.name}_static_member_left_temporarily", group=group.group_id, member=member.member_id,
                     instance=instance_id)
            self.note_state(group, old_state)
            return self.left_answer(req)
        log.info(f"{self.name}_static_member_left", group=group.group_id, member=member.member_id,
                 instance=instance_id)
        self.fence(group, member.member_id)
        return self.left_answer(req)

    def left_answer(self, req) -> dict:
        return {"error_code": 0, "error_message": None, "member_id": req.member_id,
                "member_epoch": req.member_epoch, "heartbeat_interval_ms": 0, "assignment": None}

    def remove_member(self, group: ModernGroup, member_id: str) -> None:
        """The member goes with its timers, and the group epoch moves on so the others are given
        what it had (Kafka's fence / remove member)."""
        old_state = group.state
        group.remove_member(member_id)
        self.cancel_timers(group.group_id, member_id)
        self.member_removed(group, member_id)
        group.group_epoch += 1
        if not group.members and self.settles_empty_target:
            # Nobody is left to heartbeat a new target assignment into being; settle it now.
            group.target = {}
            group.assignment_epoch = group.group_epoch
        log.info(f"{self.name}_member_removed", group=group.group_id, member=member_id, epoch=group.group_epoch)
        self.note_state(group, old_state)

    def fence(self, group: ModernGroup, member_id: str) -> None:
        """Remove the member and persist the group."""
        self.remove_member(group, member_id)
        self.persist(group)

    def remove_members(self, group_id: str, member_ids: list[str] | None = None) -> None:
        """These members (every one without ``member_ids``) leave at once, as if their sessions had
        run out (test controls: a snapshot restore, a removal)."""
        group = self.group(group_id)
        if group is None:
            return
        for member_id in list(group.members) if member_ids is None else member_ids:
            if member_id in group.members:
                self.remove_member(group, member_id)
        self.persist(group)

    def remove_all_members(self, group_id: str) -> None:
        self.remove_members(group_id)

    def session_key(self, group_id: str, member_id: str) -> tuple:
        return (self._session, group_id, member_id)

    def schedule_session_timeout(self, group_id: str, member_id: str) -> None:
        key = (self._session, group_id, member_id)
        self.ctx.schedule(key, self.session_timeout_ms(group_id, member_id), lambda: self.ctx.runtime.timer(
            group_id, key, lambda: self._expire(group_id, member_id, None)))

    def schedule_rebalance_timeout(self, group_id: str, member) -> None:
        """A member revoking must be done within its rebalance timeout, at this epoch."""
        member_id, epoch = member.member_id, member.member_epoch
        key = (self._rebalance, group_id, member_id)
        self.ctx.schedule(key, member.rebalance_timeout_ms, lambda: self.ctx.runtime.timer(
            group_id, key, lambda: self._expire(group_id, member_id, epoch)))

    def cancel_timers(self, group_id: str, member_id: str) -> None:
        self.ctx.cancel((self._session, group_id, member_id))
        self.ctx.cancel((self._rebalance, group_id, member_id))

    def _expire(self, group_id: str, member_id: str, revoking_epoch: int | None) -> None:
        """A session ran out, or (``revoking_epoch``) the member did not revoke in time."""
        group = self.group(group_id)
        member = group.members.get(member_id) if group is not None else None
        if member is None:
            return
        if revoking_epoch is not None and (member.member_epoch != revoking_epoch or not self.revoking(member)):
            return
        log.info(f"{self.name}_member_expired", group=group_id, member=member_id,
                 reason="session" if revoking_epoch is None else "rebalance timeout")
        self.fence(group, member_id)
        self.member_expired(group_id, member_id)

    # ============================================================ other APIs
    def leave_group(self, req) -> dict:
        """A classic LeaveGroup naming a group of this kind: Kafka's classicGroupLeave finds no classic
        or consumer group, and GroupCoordinatorService answers each member UNKNOWN_MEMBER_ID."""
        return unknown_members_left(req)

    def offset_committed(self, group: ModernGroup, member_id: str) -> None:
        """Nothing: a member's session is kept by its heartbeats alone."""

    def delete_group(self, group: ModernGroup) -> None:
        """Forget a group whose tombstones are written (DeleteGroups, or its offsets all expired)."""
        for mid in list(group.members):
            self.cancel_timers(group.group_id, mid)
        old_state = group.state
        group.dead = True
        del self.ctx.groups[group.group_id]
        self.records.RecordDiff.forget(group)
        log.info(f"{self.name}_group_deleted", group=group.group_id)
        self.note_state(group, old_state)
        self.group_deleted(group)

    # ============================================================ loading
    def replay(self, key: bytes, value: bytes | None) -> None:
        """Apply one of the kind's __consumer_offsets records (modern/replay.py, then the kind's ``replayer``)."""
        replay(self.ctx, self, key, value)

    def after_load(self) -> None:
        """Once every record is replayed: members' sessions restart now; revocations get their timeout."""
        for group in self.groups.values():
            self.records.RecordDiff.loaded(group)
            self.loaded(group)
            for member in group.members.values():
                self.schedule_session_timeout(group.group_id, member.member_id)
                if self.revoking(member):
                    self.schedule_rebalance_timeout(group.group_id, member)
