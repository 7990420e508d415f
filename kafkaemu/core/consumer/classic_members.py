"""Members of a consumer group that speak the classic protocol (Apache Kafka's
GroupMetadataManager.classicGroupJoinToConsumerGroup, classicGroupSyncToConsumerGroup and
classicGroupHeartbeatToConsumerGroup): a classic consumer joining a consumer group (or left in one
by an online upgrade) is a member like the others — subscription, epoch, target assignment,
reconciliation — reached through JoinGroup, SyncGroup and Heartbeat.

JoinGroup is a heartbeat that (re)joins: the subscription and owned partitions come from the
member's first protocol's metadata; the answer is immediate, with the member's epoch as the
generation and no members (the member never leads: the coordinator assigns). SyncGroup returns the
member's assignment in its protocol's version. A Heartbeat answers REBALANCE_IN_PROGRESS whenever
the member must rejoin to move on: the group epoch passed its epoch, it has partitions to revoke, or
partitions it waits for were released. The session timeout is the member's own; a member told to
rejoin must do so within its rebalance timeout, and one that joined must SyncGroup within it, or it
is fenced (Kafka's consumer group join and sync timeouts).
"""
from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from ...logging import get_logger
from ...protocol.errors import ErrorCode
from ..consumer_protocol import decode_subscription, encode_assignment, owned_partitions, protocol_version
from ..group_api import GroupError
from .group import ConsumerGroup
from .member import ClassicMeta, ConsumerMember, MemberState, kafka_uuid_string

if TYPE_CHECKING:
    from .manager import ConsumerGroupManager

log = get_logger("kafkaemu.coordinator")
E = ErrorCode
CONSUMER_PROTOCOL_TYPE = "consumer"


class ClassicMembers:
    """The classic-protocol members of the consumer groups ``groups`` manages: their JoinGroup,
    SyncGroup and Heartbeat, and their join and sync timers; everything else about them (storing,
    reconciling, sessions, fencing, persisting) is the consumer group lifecycle's."""

    def __init__(self, groups: "ConsumerGroupManager") -> None:
        self.groups = groups
        self.ctx = groups.ctx

    # ------------------------------------------------------------------ JoinGroup
    def join(self, group: ConsumerGroup, req, respond, topics) -> None:
        self.groups.topics = topics
        member_id = req.member_id or kafka_uuid_string()
        try:
            if member_id not in group.members and len(group.members) >= self.groups.settings.max_size:
                raise GroupError(E.GROUP_MAX_SIZE_REACHED)
            names = [name for name, _ in req.protocols]
            if not _supports(group, req.protocol_type, names):
                raise GroupError(E.INCONSISTENT_GROUP_PROTOCOL)
            if not req.member_id and req.group_instance_id is None and req.api_version >= 4:
                return respond(join_response(E.MEMBER_ID_REQUIRED, member_id))
            try:
                subscription = decode_subscription(req.protocols[0][1])
            except ValueError as exc:
                raise GroupError(E.INCONSISTENT_GROUP_PROTOCOL) from exc
            member = self._classic_member(group, member_id, req)
        except GroupError as exc:
            return respond(join_response(exc.code, req.member_id))
        old_state = group.state
        updated = replace(member, instance_id=req.group_instance_id, rack_id=getattr(subscription, "rack_id", None),
                          rebalance_timeout_ms=req.rebalance_timeout_ms, server_assignor=None,
                          subscribed_topic_names=tuple(subscription.topics), client_id=req.client_id,
                          client_host=req.client_host,
                          classic=ClassicMeta(req.session_timeout_ms, tuple(req.protocols)))
        bump = updated.member_id not in group.members or \
            updated.subscribed_topic_names != member.subscribed_topic_names
        reconciled = self._update_and_reconcile(group, updated, bump, owned_partitions(subscription, self.groups.topics))
        self.ctx.cancel(_join_key(group.group_id, reconciled.member_id))
        self._schedule_classic_timeout(_sync_key(group.group_id, reconciled.member_id), group.group_id,
                                       reconciled.member_id, reconciled.rebalance_timeout_ms)
        self.groups.note_state(group, old_state)
        self.groups.persist(group)
        respond({"error_code": 0, "generation_id": reconciled.member_epoch, "protocol_type": CONSUMER_PROTOCOL_TYPE,
                 "protocol_name": req.protocols[0][0], "leader": "", "skip_assignment": False,
                 "member_id": reconciled.member_id, "members": []})

    def _classic_member(self, group: ConsumerGroup, member_id: str, req) -> ConsumerMember:
        if req.group_instance_id is None:
            existing = group.members.get(member_id)
            if existing is not None and not existing.uses_classic_protocol:
                raise GroupError(E.UNKNOWN_MEMBER_ID)
            return existing or ConsumerMember(member_id)
        existing = group.static_member(req.group_instance_id)
        if existing is None:
            return ConsumerMember(member_id, instance_id=req.group_instance_id)
        if req.member_id and existing.member_id != req.member_id:
            raise GroupError(E.FENCED_INSTANCE_ID)
        if existing.member_id != member_id:   # a static member rejoining under a new id takes the old one's place
            self.groups.cancel_timers(group.group_id, existing.member_id)
            replaced = replace(existing, member_id=member_id)
            group.replace_member(existing.member_id, replaced)
            return replaced
        return existing

    # ------------------------------------------------------------------ SyncGroup
    def sync(self, group: ConsumerGroup, req, respond) -> None:
        try:
            member = self._validate_classic_member(group, req.member_id, req.group_instance_id, req.generation_id)
            first = member.classic.protocols[0]
            if (req.protocol_type is not None and req.protocol_type != CONSUMER_PROTOCOL_TYPE) or \
                    (req.protocol_name is not None and req.protocol_name != first[0]):
                raise GroupError(E.INCONSISTENT_GROUP_PROTOCOL)
            if group.group_epoch > member.member_epoch and member.state is not MemberState.UNREVOKED_PARTITIONS:
                raise GroupError(E.REBALANCE_IN_PROGRESS)
        except GroupError as exc:
            return respond(sync_response(exc.code))
        self.groups.schedule_session_timeout(group.group_id, member.member_id)
        self.ctx.cancel(_sync_key(group.group_id, member.member_id))
        names = {meta.topic_id: name for name, meta in group.subscription_metadata.items()}
        version = protocol_version(first[1])
        respond({"error_code": 0, "protocol_type": req.protocol_type, "protocol_name": req.protocol_name,
                 "assignment": encode_assignment(member.assigned, names, version)})

    # ------------------------------------------------------------------ Heartbeat
    def heartbeat(self, group: ConsumerGroup, req) -> ErrorCode:
        try:
            member = self._validate_classic_member(group, req.member_id, req.group_instance_id, req.generation_id)
        except GroupError as exc:
            return exc.code
        self.groups.schedule_session_timeout(group.group_id, member.member_id)
        if member.member_epoch < group.group_epoch or member.state is MemberState.UNREVOKED_PARTITIONS or \
                (member.state is MemberState.UNRELEASED_PARTITIONS and not _waiting_on_unreleased(group, member)):
            key = _join_key(group.group_id, member.member_id)
            if not self.ctx.timers.is_scheduled(key):
                self._schedule_classic_timeout(key, group.group_id, member.member_id, member.rebalance_timeout_ms)
            return E.REBALANCE_IN_PROGRESS
        return E.NONE

    def _schedule_classic_timeout(self, key: tuple, group_id: str, member_id: str, timeout_ms: int) -> None:
        self.ctx.schedule(key, timeout_ms, lambda: self.ctx.runtime.timer(
            group_id, key, lambda: self._classic_timed_out(group_id, member_id, key[0])))

    def _classic_timed_out(self, group_id: str, member_id: str, what: str) -> None:
        group = self.groups.group(group_id)
        if group is not None and member_id in group.members:
            log.info("consumer_classic_member_timed_out", group=group_id, member=member_id, waiting_for=what)
            self.groups.fence(group, member_id)

    def cancel_timers(self, group_id: str, member_id: str) -> None:
        self.ctx.cancel(_join_key(group_id, member_id))
        self.ctx.cancel(_sync_key(group_id, member_id))

    def _validate_classic_member(self, group: ConsumerGroup, member_id: str, instance_id: str | None,
                                 generation_id: int) -> ConsumerMember:
        if instance_id is None:
            member = group.members.get(member_id)
        else:
            member = group.static_member(instance_id)
            if member is not None and member.member_id != member_id:
                raise GroupError(E.FENCED_INSTANCE_ID)
        if member is None or not member.uses_classic_protocol:
            raise GroupError(E.UNKNOWN_MEMBER_ID)
        if generation_id != member.member_epoch:
            raise GroupError(E.ILLEGAL_GENERATION)
        return member

    def _update_and_reconcile(self, group: ConsumerGroup, updated: ConsumerMember, bump: bool,
                              owned) -> ConsumerMember:
        """A classic member's join as a heartbeat: stored, the epoch bumped and the target
        assignment recomputed if need be, reconciled given what it owns, its session restarted."""
        groups = self.groups
        bump = groups.store_member(group, updated, bump)
        groups.bump_and_assign(group, updated.member_id, bump, classic=True)
        reconciled = groups.reconcile_owned(group, updated, owned)
        groups.schedule_session_timeout(group.group_id, reconciled.member_id)
        return reconciled


def _join_key(group_id: str, member_id: str) -> tuple:
    return ("consumer-classic-join", group_id, member_id)


def _sync_key(group_id: str, member_id: str) -> tuple:
    return ("consumer-classic-sync", group_id, member_id)


def join_response(error: ErrorCode, member_id: str) -> dict:
    return {"error_code": int(error), "member_id": member_id, "generation_id": -1, "protocol_type": None,
            "protocol_name": None, "leader": "", "members": [], "skip_assignment": False}


def sync_response(error: ErrorCode) -> dict:
    return {"error_code": int(error), "assignment": b"", "protocol_type": None, "protocol_name": None}


def _supports(group: ConsumerGroup, protocol_type: str, names: list[str]) -> bool:
    """Kafka's ConsumerGroup.supportsClassicProtocols: the consumer protocol type, and a protocol
    every classic member of the group supports."""
    if protocol_type != CONSUMER_PROTOCOL_TYPE or not names:
        return False
    classic = [m for m in group.members.values() if m.uses_classic_protocol]
    return any(all(name in (n for n, _ in m.classic.protocols) for m in classic) for name in names)


def _waiting_on_unreleased(group: ConsumerGroup, member: ConsumerMember) -> bool:
    """Whether a partition of the member's target is still owned by another member."""
    epochs = group.partition_epochs(excluding=member.member_id)
    target = group.target.get(member.member_id, {})
    return any((tid, p) in epochs for tid, parts in target.items() for p in parts
               if p not in member.assigned.get(tid, ()))
