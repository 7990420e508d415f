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

The lifecycle (leave vs beat, the revert of a failed heartbeat, persistence, the session timer,
removal, deletion, loading) is modern/lifecycle.py's; this module supplies the share kind's hooks.
Every change is written to __consumer_offsets as Kafka's ShareGroup* records (records.py), each
heartbeat and session expiry as one coordinator write; replay.py rebuilds the groups on start.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Callable, Mapping

from ...logging import get_logger
from ...protocol.errors import ErrorCode
from ...protocol.operations import NOT_REQUESTED
from ..context import CoordinatorContext
from ..modern import TopicMeta, wire_assignment
from ..modern.lifecycle import ModernGroupManager
from ..group_configs import GroupConfigs
from . import assignor, replay
from .events import ShareGroupEvents
from .group import Assignment, ShareGroup, ShareMember
from .requests import LEAVE_GROUP_MEMBER_EPOCH, ShareHeartbeat, validate_heartbeat
from .state_metadata import StateMetadata, TopicInit

log = get_logger("kafkaemu.share_groups")
E = ErrorCode


class ShareGroupManager(ModernGroupManager, name="share", group_class=ShareGroup, replayer=replay):
    leave_epochs = frozenset({LEAVE_GROUP_MEMBER_EPOCH})   # share members have no static membership

    def __init__(self, ctx: CoordinatorContext, group_config: GroupConfigs,
                 events: ShareGroupEvents | None = None) -> None:
        """``group_config``: the groups' configs (group_configs.py);
        ``events``: the share data plane hearing of these groups (None: a coordinator without one,
        whose share groups have no share partitions)."""
        super().__init__(ctx, ctx.settings.share, group_config)
        self.topics: Mapping[str, TopicMeta] = {}
        self.events = events

    # ============================================================ heartbeat
    def heartbeat(self, req: ShareHeartbeat, topics: Mapping[str, TopicMeta]) -> dict:
        self.topics = topics
        return super().heartbeat(req)

    def validate(self, req: ShareHeartbeat) -> None:
        validate_heartbeat(req)

    def update_member(self, group: ShareGroup, member: ShareMember, req: ShareHeartbeat):
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
        return updated, bump, None

    def reconcile(self, group: ShareGroup, updated: ShareMember, req, note) -> ShareMember:
        """A share member has nothing to revoke: it takes its target at the target epoch."""
        target = group.target.get(updated.member_id, {})
        if updated.member_epoch != group.assignment_epoch or updated.assigned != target:
            updated = replace(updated, previous_member_epoch=updated.member_epoch,
                              member_epoch=group.assignment_epoch, assigned=target)
            group.members[updated.member_id] = updated
        self._maybe_initialize(group)
        return updated

    def answer(self, group: ShareGroup, before: ShareMember, member: ShareMember, req: ShareHeartbeat,
               joining: bool, created: bool, note) -> dict:
        response = {"error_code": 0, "error_message": None, "member_id": member.member_id,
                    "member_epoch": member.member_epoch,
                    "heartbeat_interval_ms": self.heartbeat_interval_ms(group.group_id),
                    "assignment": None}
        if joining or member.assigned != before.assigned:
            response["assignment"] = wire_assignment(member.assigned)
        return response

    def _subscription_metadata(self, group: ShareGroup) -> dict[str, TopicMeta]:
        return {name: self.topics[name] for name in sorted(group.subscribed_topics()) if name in self.topics}

    def assign(self, group: ShareGroup) -> None:
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
        self.persist(group)

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
            self.persist(group)
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
            self.persist(group)

    def offsets_group_error(self, group_id: str, must_be_empty: bool, may_be_new: bool) -> tuple[ErrorCode, str | None]:
        """(error, message) of the share offsets APIs' group: GROUP_ID_NOT_FOUND for an unknown group
        (unless ``may_be_new``: the request creates it) or one of another kind, NON_EMPTY_GROUP for
        one with members when ``must_be_empty``."""
        group = self.ctx.groups.get(group_id)
        if group is None and may_be_new:
            return E.NONE, None
        if group is None or group.type is not self.type:
            return E.GROUP_ID_NOT_FOUND, f"Group {group_id} not found."
        if must_be_empty and not group.is_empty():
            return E.NON_EMPTY_GROUP, None
        return E.NONE, None

    def alter_offsets(self, group_id: str, offsets: dict[tuple[bytes, int], int], names: dict[bytes, str]) -> None:
        """AlterShareGroupOffsets' valid partitions ((topic id, partition) -> start offset), as Kafka's
        completeAlterShareGroupOffsets: initializing in this write, their share state initialized at
        those offsets once written, then initialized. A group that does not exist yet is created
        (getOrMaybeCreateShareGroup), empty at group and assignment epoch 1 (ModernGroup)."""
        if not offsets:
            return
        group = self.group(group_id)
        if group is None:
            group = self.ctx.groups[group_id] = ShareGroup(group_id, self.ctx.now_ms)
            log.info("share_group_created", group=group_id, by="AlterShareGroupOffsets")
        parts: dict[bytes, set[int]] = {}
        for tid, p in offsets:
            parts.setdefault(tid, set()).add(p)
        new = {tid: TopicInit(names[tid], frozenset(ps), self.ctx.now_ms) for tid, ps in parts.items()}
        group.state_metadata = (group.state_metadata or StateMetadata()).add_initializing(new)
        self.persist(group)
        self._once_written(self._initialize, (group_id, new, dict(offsets)))

    def groups_with_topic(self, topic_id: bytes) -> list[str]:
        return [gid for gid, g in self.groups.items()
                if g.state_metadata is not None and g.state_metadata.mentions(topic_id)]

    def topic_deleted(self, group_id: str, topic_id: bytes) -> None:
        """Kafka's maybeCleanupShareGroupState: a deleted topic leaves every set of the record."""
        group = self.group(group_id)
        if group is not None and group.state_metadata is not None:
            group.state_metadata = group.state_metadata.topics_deleted([topic_id])
            self.persist(group)

    # ============================================================ removal, expiry, deletion
    def _tell(self, event: Callable, *args) -> None:
        """One event to the share data plane, with the time of the write that decided it."""
        event(self.ctx.now_ms, *args)

    def member_removed(self, group: ShareGroup, member_id: str) -> None:
        group.subscription_metadata = self._subscription_metadata(group)
        if self.events is not None:
            self._once_written(self._tell, (self.events.member_left, group.group_id, member_id))

    def member_expired(self, group_id: str, member_id: str) -> None:
        if self.events is not None:
            self._once_written(self._tell, (self.events.member_expired, group_id, member_id))

    def group_deleted(self, group: ShareGroup) -> None:
        if self.events is not None:
            self._once_written(self._tell, (self.events.group_deleted, group.group_id))

    # ============================================================ other APIs on share groups
    def describe(self, group_id: str, topics_by_id: Mapping[bytes, str], authorized_operations: int) -> dict:
        """A ShareGroupDescribe entry."""
        if not group_id:
            return _described_error(E.INVALID_GROUP_ID, None, group_id)
        existing = self.ctx.groups.get(group_id)
        if existing is None or getattr(existing, "dead", False):
            return _described_error(E.GROUP_ID_NOT_FOUND, f"Group {group_id} not found.", group_id)
        if existing.type is not self.type:
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


def _offsets_deleted(name: str, topic_id: bytes, code: ErrorCode, message: str | None) -> dict:
    return {"topic_name": name, "topic_id": topic_id, "error_code": int(code), "error_message": message}


def _described_error(code: ErrorCode, message: str | None, group_id: str) -> dict:
    return {"error_code": int(code), "error_message": message, "group_id": group_id, "group_state": "",
            "group_epoch": 0, "assignment_epoch": 0, "assignor_name": "", "members": [],
            "authorized_operations": NOT_REQUESTED}
