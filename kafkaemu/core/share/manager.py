"""Share groups (KIP-932): ShareGroupHeartbeat, ShareGroupDescribe, member expiry, deletion.

Follows Apache Kafka's GroupMetadataManager.shareGroupHeartbeat: validate, get or create the group
and member, bump the group epoch when a subscription or the subscribed topics changed, recompute the
target assignment with the simple assignor when the group epoch is ahead, and move the member to its
target at the target epoch (share members have nothing to revoke). The answer carries the assignment
when the member joined or its assignment changed.

The timer ``("share-session", group, member)`` removes a member that stops heartbeating
(the group's share.session.timeout.ms, else group.share.session.timeout.ms). Topic metadata arrives with each heartbeat (name -> TopicMeta) and
the last one seen is kept for timers. As Kafka's maybeCreateInitializeShareGroupStateRequest, each
heartbeat records the partitions of the subscribed topics not yet initialized as initializing (in
its own write, ShareGroupStatePartitionMetadata: state_metadata.py); once that is written
the share data plane's ``assigned`` event (events.py) initializes their share state (they start where
share.auto.offset.reset says) and a write of its own records them initialized, or no longer
initializing if that failed. DeleteShareGroupOffsets and AlterShareGroupOffsets go the same
way (``delete_offsets``, ``alter_offsets``).

Every change is written to __consumer_offsets as Kafka's ShareGroup* records (records.py), each
heartbeat and session expiry as one coordinator write; ``replay`` and ``after_load`` rebuild the
groups on start (with their epochs, members and assignment; members' sessions restart then).
"""
from __future__ import annotations

from dataclasses import replace
from typing import Callable, Mapping

from ...logging import get_logger
from ...protocol.errors import ErrorCode
from ...protocol.operations import NOT_REQUESTED
from ..context import CoordinatorContext
from ..group_api import GroupError, GroupType
from ..modern import TopicMeta, error_response, wire_assignment
from ..record_format import fits_record_key
from . import assignor, records
from .events import ShareGroupEvents
from .group import Assignment, ShareGroup, ShareGroupState, ShareMember
from .requests import LEAVE_GROUP_MEMBER_EPOCH, ShareHeartbeat, validate_heartbeat
from .state_metadata import StateMetadata, TopicInit

log = get_logger("kafkaemu.share_groups")
E = ErrorCode


class ShareGroupManager:
    def __init__(self, ctx: CoordinatorContext, events: ShareGroupEvents | None = None) -> None:
        """``events``: the share data plane hearing of these groups (None: a coordinator without one,
        whose share groups have no share partitions)."""
        self.ctx = ctx
        self.settings = ctx.settings.share
        self.events = events
        self.topics: Mapping[str, TopicMeta] = {}
        self.on_assigned: list[Assigned] = []
        self.on_member_removed: list[Callable[[str, str], None]] = []   # (group id, member id)
        self.on_member_expired: list[Callable[[str, str], None]] = []   # removed for its silence
        self.on_group_deleted: list[Callable[[str], None]] = []
        self.on_offsets_deleted: list[Callable[[str, bytes], None]] = []   # (group id, topic id): its share state goes
        self.on_offsets_altered: list[Callable[[str, bytes, int, int], None]] = []   # (group, topic id, partition, start)

    def group(self, group_id: str) -> ShareGroup | None:
        return self.ctx.group(group_id, GroupType.SHARE)

    @property
    def groups(self):
        return self.ctx.groups_of(GroupType.SHARE)

    # ============================================================ heartbeat
    def heartbeat(self, req: ShareHeartbeat, topics: Mapping[str, TopicMeta]) -> dict:
        if not fits_record_key(req.group_id):
            return error_response(E.UNKNOWN_SERVER_ERROR)
        self.topics = topics
        try:
            validate_heartbeat(req)
            if req.member_epoch == LEAVE_GROUP_MEMBER_EPOCH:
                return self._leave(req)
            return self._heartbeat(req)
        except GroupError as exc:
            log.info("share_heartbeat_error", group=req.group_id, member=req.member_id,
                     epoch=req.member_epoch, error=int(exc.code), message=exc.message)
            return error_response(exc.code, exc.message)
        finally:
            group = self.group(req.group_id)
            if group is not None:
                self._persist(group)

    def _persist(self, group: ShareGroup) -> None:
        self.ctx.append(group.group_id, records.RecordDiff.changes(group))

    def _heartbeat(self, req: ShareHeartbeat) -> dict:
        joining = req.member_epoch == 0
        group = self._get_or_create_group(req.group_id, joining)
        if len(group.members) >= self.settings.max_size and req.member_id not in group.members:
            raise GroupError(E.GROUP_MAX_SIZE_REACHED,
                             f"The share group has reached its maximum capacity of {self.settings.max_size} members.")
        member = group.members.get(req.member_id)
        if member is None:
            if not joining:
                raise GroupError(E.UNKNOWN_MEMBER_ID,
                                 f"Member {req.member_id} is not a member of group {group.group_id}.")
            member = ShareMember(req.member_id)
            log.info("share_member_joining", group=group.group_id, member=req.member_id)
        else:
            _check_epoch(member, req.member_epoch)
        old_state = group.state
        updated = replace(
            member, rack_id=req.rack_id if req.rack_id is not None else member.rack_id,
            subscribed_topic_names=tuple(req.subscribed_topic_names) if req.subscribed_topic_names is not None
            else member.subscribed_topic_names,
            client_id=req.client_id, client_host=req.client_host)
        bump = member.member_id not in group.members or updated.subscribed_topic_names != member.subscribed_topic_names
        group.members[updated.member_id] = updated
        metadata = self._subscription_metadata(group)
        if metadata != group.subscription_metadata:
            group.subscription_metadata = metadata
            bump = True
        if bump:
            group.group_epoch += 1
            log.info("share_group_epoch_bumped", group=group.group_id, epoch=group.group_epoch,
                     member=updated.member_id)
        if group.group_epoch > group.assignment_epoch:
            self._update_target_assignment(group)
        target = group.target.get(updated.member_id, {})
        if updated.member_epoch != group.assignment_epoch or updated.assigned != target:
            updated = replace(updated, previous_member_epoch=updated.member_epoch,
                              member_epoch=group.assignment_epoch, assigned=target)
            group.members[updated.member_id] = updated
        self._schedule_session_timeout(group.group_id, updated.member_id)
        self._maybe_initialize(group)
        self._note_state(group, old_state)
        response = {"error_code": 0, "error_message": None, "member_id": updated.member_id,
                    "member_epoch": updated.member_epoch,
                    "heartbeat_interval_ms": self.ctx.group_configs.value(group.group_id, "share.heartbeat.interval.ms"),
                    "assignment": None}
        if joining or updated.assigned != member.assigned:
            response["assignment"] = wire_assignment(updated.assigned)
        return response

    def _get_or_create_group(self, group_id: str, joining: bool) -> ShareGroup:
        existing = self.ctx.groups.get(group_id)
        if existing is not None:
            if existing.type is GroupType.SHARE:
                return existing
            raise GroupError(E.GROUP_ID_NOT_FOUND, f"Group {group_id} is not a share group.")
        if not joining:
            raise GroupError(E.GROUP_ID_NOT_FOUND, f"Group {group_id} not found.")
        group = self.ctx.groups[group_id] = ShareGroup(group_id, self.ctx.now_ms)
        log.info("share_group_created", group=group_id)
        return group

    def _subscription_metadata(self, group: ShareGroup) -> dict[str, TopicMeta]:
        return {name: self.topics[name] for name in sorted(group.subscribed_topics()) if name in self.topics}

    def _update_target_assignment(self, group: ShareGroup) -> None:
        subscribed = group.subscription_metadata
        subscriptions = {mid: frozenset(subscribed[n].topic_id for n in m.subscribed_topic_names if n in subscribed)
                         for mid, m in group.members.items()}
        partitions = {t.topic_id: t.num_partitions for t in subscribed.values()}
        group.target = assignor.assign(subscriptions, group.target, partitions)
        group.assignment_epoch = group.group_epoch
        log.info("share_target_assignment", group=group.group_id, epoch=group.group_epoch, members=len(subscriptions))

    # ============================================================ share-group state initialization
    def _maybe_initialize(self, group: ShareGroup) -> None:
        """Partitions of the subscribed topics neither initialized nor initializing become
        initializing in this write; their share state is initialized once it is written."""
        meta = group.state_metadata or StateMetadata()
        subscribed = [(m.topic_id, m.name, m.num_partitions) for m in group.subscription_metadata.values()]
        new = meta.to_initialize(subscribed, self.ctx.now_ms)
        if new:
            group.state_metadata = meta.add_initializing(new)
            self._once_written(self._initialize, (group.group_id, new))

    def _once_written(self, fn: Callable, args: tuple) -> None:
        """``fn(*args)`` once the write under way is appended (never, if it fails); now without one.
        What the data plane changes (share partitions, sessions) is not undone with the group."""
        write = self.ctx.write
        if write is None:
            fn(*args)
        else:
            write.effect(fn, args)

    def _tell(self, event: Callable, *args) -> None:
        """One event to the share data plane, with the time of the write that decided it."""
        event(self.ctx.now_ms, *args)

    def _initialize(self, group_id: str, topics: dict[bytes, TopicInit], offsets: dict | None = None) -> None:
        """Initialize the share state of ``topics`` (at ``offsets[(topic id, partition)]`` when
        given: AlterShareGroupOffsets), then record the outcome as a write of its own."""
        events = self.events
        try:
            if events is not None and offsets is None:
                events.assigned(self.ctx.now_ms, group_id, {(tid, p) for tid, t in topics.items() for p in t.partitions})
            elif events is not None:
                for (tid, p), offset in offsets.items():
                    events.offsets_altered(self.ctx.now_ms, group_id, tid, p, offset)
            done = True
        except Exception as exc:   # Kafka's persister failing: the partitions are retried later
            log.warning("share_state_initialize_failed", group=group_id, error=str(exc)[:200])
            done = False
        self.ctx.runtime.run(group_id, self._initialized, (group_id, topics, done))

    def _initialized(self, group_id: str, topics: dict[bytes, TopicInit], done: bool) -> None:
        """Kafka's initializeShareGroupState (``done``) or uninitializeShareGroupState."""
        group = self.group(group_id)
        if group is None or group.state_metadata is None:
            return
        meta = group.state_metadata
        group.state_metadata = meta.mark_initialized(topics) if done else meta.uninitialize(topics)
        self._persist(group)

    def _note_state(self, group: ShareGroup, old: ShareGroupState) -> None:
        new = group.state
        if new is not old:
            log.info("share_group_transition", group=group.group_id, from_state=old.value, to_state=new.value,
                     epoch=group.group_epoch)
            self.ctx.record_transition(group.group_id, old, new, group.group_epoch)

    # ============================================================ the share offsets APIs
    def delete_offsets(self, group_id: str, topics: list[tuple[str, bytes | None]]) -> list[dict]:
        """DeleteShareGroupOffsets' topics (name, topic id or None when unknown), as Kafka's
        sharePartitionsEligibleForOffsetDeletion: an initialized topic (or one still deleting) goes
        to deleting in this write, its share state is deleted once written, and a write of its own
        takes it out of deleting (completeDeleteShareGroupOffsets); any other topic has no offsets."""
        group = self.group(group_id)
        meta = (group.state_metadata if group is not None else None) or StateMetadata()
        responses, deleting = [], {}
        for name, tid in topics:
            if tid is not None and (tid in meta.initialized or tid in meta.deleting):
                deleting[tid] = name
                responses.append(_offsets_deleted(name, tid, E.NONE, None))
            else:
                responses.append(_offsets_deleted(name, bytes(16), E.UNKNOWN_TOPIC_OR_PARTITION,
                                                  None if tid is None else "There is no offset information to delete."))
        if deleting and group is not None:
            group.state_metadata = meta.start_deleting(deleting)
            self._persist(group)
            self._once_written(self._delete_state, (group_id, deleting))
        return responses

    def _delete_state(self, group_id: str, topics: dict[bytes, str]) -> None:
        try:
            for tid in topics:
                if self.events is not None:
                    self.events.offsets_deleted(self.ctx.now_ms, group_id, tid)
        except Exception as exc:   # they stay deleting: the next delete of the topic or group retries
            log.warning("share_state_delete_failed", group=group_id, error=str(exc)[:200])
            return
        self.ctx.runtime.run(group_id, self._state_deleted, (group_id, topics))

    def _state_deleted(self, group_id: str, topics: dict[bytes, str]) -> None:
        group = self.group(group_id)
        if group is not None and group.state_metadata is not None:
            group.state_metadata = group.state_metadata.finish_deleting(topics)
            self._persist(group)

    def alter_offsets(self, group_id: str, offsets: dict[tuple[bytes, int], int], names: dict[bytes, str]) -> None:
        """AlterShareGroupOffsets' valid partitions ((topic id, partition) -> start offset), as Kafka's
        completeAlterShareGroupOffsets: initializing in this write, their share state initialized at
        those offsets once written, then initialized."""
        group = self.group(group_id)
        if group is None or not offsets:
            return
        parts: dict[bytes, set[int]] = {}
        for tid, p in offsets:
            parts.setdefault(tid, set()).add(p)
        new = {tid: TopicInit(names[tid], frozenset(ps), self.ctx.now_ms) for tid, ps in parts.items()}
        group.state_metadata = (group.state_metadata or StateMetadata()).add_initializing(new)
        self._persist(group)
        self._once_written(self._initialize, (group_id, new, dict(offsets)))

    def groups_with_topic(self, topic_id: bytes) -> list[str]:
        return [gid for gid, g in self.groups.items()
                if g.state_metadata is not None and g.state_metadata.mentions(topic_id)]

    def topic_deleted(self, group_id: str, topic_id: bytes) -> None:
        """Kafka's maybeCleanupShareGroupState: a deleted topic leaves every set of the record."""
        group = self.group(group_id)
        if group is not None and group.state_metadata is not None:
            group.state_metadata = group.state_metadata.topics_deleted([topic_id])
            self._persist(group)

    # ============================================================ leaving and expiry
    def _leave(self, req: ShareHeartbeat) -> dict:
        group = self.ctx.groups.get(req.group_id)
        if group is None or group.type is not GroupType.SHARE:
            raise GroupError(E.GROUP_ID_NOT_FOUND, f"Group {req.group_id} not found.")
        if req.member_id not in group.members:
            raise GroupError(E.UNKNOWN_MEMBER_ID, f"Member {req.member_id} is not a member of group {req.group_id}.")
        log.info("share_member_left", group=group.group_id, member=req.member_id)
        self.remove_member(group, req.member_id)
        return {"error_code": 0, "error_message": None, "member_id": req.member_id,
                "member_epoch": LEAVE_GROUP_MEMBER_EPOCH, "heartbeat_interval_ms": 0, "assignment": None}

    def remove_member(self, group: ShareGroup, member_id: str) -> None:
        old_state = group.state
        group.members.pop(member_id, None)
        group.target.pop(member_id, None)
        self.ctx.cancel(_session_key(group.group_id, member_id))
        group.subscription_metadata = self._subscription_metadata(group)
        group.group_epoch += 1
        if not group.members:
            group.target = {}
            group.assignment_epoch = group.group_epoch
        self._note_state(group, old_state)
        if self.events is not None:
            self._once_written(self._tell, (self.events.member_left, group.group_id, member_id))

    def remove_all_members(self, group_id: str) -> None:
        """Every member leaves (a control snapshot restore: their clients rejoin)."""
        group = self.group(group_id)
        if group is None:
            return
        for member_id in list(group.members):
            self.remove_member(group, member_id)
        self._persist(group)

    def _schedule_session_timeout(self, group_id: str, member_id: str) -> None:
        key = _session_key(group_id, member_id)
        self.ctx.schedule(key, self.ctx.group_configs.value(group_id, "share.session.timeout.ms"),
                          lambda: self.ctx.runtime.timer(group_id, key, lambda: self._expire_session(group_id, member_id)))

    def _expire_session(self, group_id: str, member_id: str) -> None:
        group = self.group(group_id)
        if group is None or member_id not in group.members:
            return
        log.info("share_member_session_expired", group=group_id, member=member_id)
        self.remove_member(group, member_id)
        self._persist(group)
        if self.events is not None:
            self._once_written(self._tell, (self.events.member_expired, group_id, member_id))

    def is_member(self, group_id: str, member_id: str) -> bool:
        group = self.group(group_id)
        return group is not None and member_id in group.members

    # ============================================================ other APIs on share groups
    def describe(self, group_id: str, topics_by_id: Mapping[bytes, str], authorized_operations: int) -> dict:
        """A ShareGroupDescribe entry."""
        if not group_id:
            return _described_error(E.INVALID_GROUP_ID, None, group_id)
        existing = self.ctx.groups.get(group_id)
        if existing is None or getattr(existing, "dead", False):
            return _described_error(E.GROUP_ID_NOT_FOUND, f"Group {group_id} not found.", group_id)
        if existing.type is not GroupType.SHARE:
            return _described_error(E.GROUP_ID_NOT_FOUND, f"Group {group_id} is not a share group.", group_id)

        def named(assignment: Assignment) -> dict:
            return {"topic_partitions": [
                {"topic_id": tid, "topic_name": topics_by_id.get(tid, ""), "partitions": sorted(parts)}
                for tid, parts in sorted(assignment.items()) if parts]}

        members = [{"member_id": m.member_id, "rack_id": m.rack_id, "member_epoch": m.member_epoch,
                    "client_id": m.client_id, "client_host": m.client_host,
                    "subscribed_topic_names": list(m.subscribed_topic_names), "assignment": named(m.assigned)}
                   for m in existing.members.values()]
        return {"error_code": 0, "error_message": None, "group_id": group_id, "group_state": existing.state.value,
                "group_epoch": existing.group_epoch, "assignment_epoch": existing.assignment_epoch,
                "assignor_name": assignor.NAME, "members": members, "authorized_operations": authorized_operations}

    def leave_group(self, req) -> dict:
        """A classic LeaveGroup naming a share group: Kafka answers that the group is unknown."""
        return {"error_code": int(E.GROUP_ID_NOT_FOUND), "members": []}

    def offset_committed(self, group: ShareGroup, member_id: str) -> None:
        """Never called: share groups refuse offset commits."""

    def delete_group(self, group: ShareGroup) -> None:
        for mid in list(group.members):
            self.ctx.cancel(_session_key(group.group_id, mid))
        old_state = group.state
        group.dead = True
        del self.ctx.groups[group.group_id]
        log.info("share_group_deleted", group=group.group_id)
        self._note_state(group, old_state)
        if self.events is not None:
            self._once_written(self._tell, (self.events.group_deleted, group.group_id))

    # ============================================================ replay of __consumer_offsets
    def replay(self, key: bytes, value: bytes | None) -> None:
        """Apply one ShareGroup* record (Kafka's GroupMetadataManager.replay for share groups)."""
        k = records.decode_key(key)
        group = self.group(k.group_id)
        if value is None:
            if group is None:
                return
            if k.member_id is not None:
                if k.version == records.MEMBER_METADATA:
                    group.members.pop(k.member_id, None)
                elif k.version == records.TARGET_MEMBER:
                    group.target.pop(k.member_id, None)
            elif k.version == records.GROUP_METADATA:
                del self.ctx.groups[k.group_id]
            elif k.version == records.STATE_PARTITION_METADATA:
                group.state_metadata = None
            return
        v = records.decode_value(k, value)
        if group is None:
            group = self._replayed_group(k.group_id)
        if k.version == records.GROUP_METADATA:
            group.group_epoch = v.epoch
        elif k.version == records.PARTITION_METADATA:
            group.subscription_metadata = {t.topic_name: TopicMeta(t.topic_name, bytes(t.topic_id), t.num_partitions)
                                           for t in v.topics}
        elif k.version == records.TARGET_METADATA:
            group.assignment_epoch = v.assignment_epoch
        elif k.version == records.TARGET_MEMBER:
            group.target[k.member_id] = _assignment(v.topic_partitions)
        elif k.version == records.STATE_PARTITION_METADATA:
            group.state_metadata = StateMetadata.from_record(v, self.ctx.now_ms)
        else:
            member = group.members.get(k.member_id) or ShareMember(k.member_id)
            if k.version == records.MEMBER_METADATA:
                member = replace(member, rack_id=v.rack_id, client_id=v.client_id, client_host=v.client_host,
                                 subscribed_topic_names=tuple(v.subscribed_topic_names))
            else:
                member = replace(member, member_epoch=v.member_epoch, previous_member_epoch=v.previous_member_epoch,
                                 assigned=_assignment(v.assigned_partitions))
            group.members[k.member_id] = member

    def _replayed_group(self, group_id: str) -> ShareGroup:
        existing = self.ctx.groups.get(group_id)
        if existing is not None and not existing.is_empty():
            raise ValueError(f"group {group_id} is not a share group")
        # An Empty classic group here only held offsets replayed before the share group's records.
        group = self.ctx.groups[group_id] = ShareGroup(group_id, self.ctx.now_ms)
        return group

    def after_load(self) -> None:
        """Once every record is replayed: members' sessions restart now."""
        for group in self.groups.values():
            records.RecordDiff.loaded(group)
            for member_id in group.members:
                self._schedule_session_timeout(group.group_id, member_id)


def _assignment(entries) -> dict[bytes, frozenset[int]]:
    return {bytes(e.topic_id): frozenset(e.partitions) for e in entries if e.partitions}


def _offsets_deleted(name: str, topic_id: bytes, code: ErrorCode, message: str | None) -> dict:
    return {"topic_name": name, "topic_id": topic_id, "error_code": int(code), "error_message": message}


def _session_key(group_id: str, member_id: str) -> tuple:
    return ("share-session", group_id, member_id)


def _check_epoch(member: ShareMember, received: int) -> None:
    if received > member.member_epoch:
        raise GroupError(E.FENCED_MEMBER_EPOCH,
                         f"The share group member has a greater member epoch ({received}) than the one known by "
                         f"the group coordinator ({member.member_epoch}). The member must abandon all its "
                         f"partitions and rejoin.")
    if received < member.member_epoch and received != member.previous_member_epoch:
        raise GroupError(E.FENCED_MEMBER_EPOCH,
                         f"The share group member has a smaller member epoch ({received}) than the one known by "
                         f"the group coordinator ({member.member_epoch}). The member must abandon all its "
                         f"partitions and rejoin.")


def _described_error(code: ErrorCode, message: str | None, group_id: str) -> dict:
    return {"error_code": int(code), "error_message": message, "group_id": group_id, "group_state": "",
            "group_epoch": 0, "assignment_epoch": 0, "assignor_name": "", "members": [],
            "authorized_operations": NOT_REQUESTED}
