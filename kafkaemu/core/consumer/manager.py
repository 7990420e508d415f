"""KIP-848 consumer groups: ConsumerGroupHeartbeat, ConsumerGroupDescribe, fencing, timers, replay.

Follows Apache Kafka's GroupMetadataManager.consumerGroupHeartbeat: validate, get or create the
group and member, bump the group epoch when a subscription or the subscribed topics' metadata
changed, recompute the target assignment with the server assignor when the group epoch is ahead,
then reconcile the member (reconciliation.reconcile) and answer with its epoch and, when it
changed or the request was a full one, its assignment.

Time, timers and the groups of every kind come from the shared context: the timer
``("consumer-session", group, member)`` fences a member that stops heartbeating, and
``("consumer-rebalance", group, member)`` one that does not revoke within its rebalance timeout.
Topic metadata arrives with each request (``topics``: name -> TopicMeta, any mapping; the server
passes a live view of its topics) and the last one seen is kept for timers. A member joining an Empty classic group (one holding only offsets) turns it into
a consumer group; any other classic group keeps its id.

Every change is written to __consumer_offsets as Kafka's ConsumerGroup* records (records.py);
``replay`` and ``after_load`` rebuild the groups on start.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Callable

from ...logging import get_logger
from ...protocol.errors import ErrorCode
from ..context import CoordinatorContext
from ..group_api import GroupError, GroupType
from ..record_format import fits_record_key
from . import records
from .assignors import Assignment
from .classic_members import ClassicMembers
from .group import ConsumerGroup, ConsumerGroupState, TopicMeta
from .member import (LEAVE_GROUP_MEMBER_EPOCH, LEAVE_GROUP_STATIC_MEMBER_EPOCH, ClassicMeta, ConsumerMember,
                     MemberState,
                     kafka_uuid_string)
from .reconciliation import reconcile
from .requests import ConsumerHeartbeat, validate_heartbeat
from .responses import described_error, described_group, error_response, wire_assignment
from .regex_resolution import DescribeTopic, maybe_resolve, resolved_topics
from .target_assignment import assignor_name, available_assignors, subscription_metadata, topics_matching

log = get_logger("kafkaemu.consumer_groups")
E = ErrorCode


class ConsumerGroupManager(ClassicMembers):
    def __init__(self, ctx: CoordinatorContext) -> None:
        self.ctx = ctx
        self.settings = ctx.settings.consumer
        self.topics: dict[str, TopicMeta] = {}
        self._assignors = available_assignors(self.settings.assignors)
        # the coordinator's online downgrade (group, leaving member id) -> whether it converted the group
        self.downgrade: Callable[[ConsumerGroup, str], bool] = lambda group, member_id: False
        # while authorization is on: whether a principal may DESCRIBE a topic (regex subscriptions)
        self.describe_topic: DescribeTopic | None = None

    def session_timeout_ms(self, group_id: str) -> int:
        return self.ctx.group_configs.value(group_id, "consumer.session.timeout.ms")

    def heartbeat_interval_ms(self, group_id: str) -> int:
        return self.ctx.group_configs.value(group_id, "consumer.heartbeat.interval.ms")

    def adopt(self, group: ConsumerGroup) -> None:
        """A group converted from a classic one (online upgrade): its members' sessions start now."""
        self.ctx.groups[group.group_id] = group
        for member in group.members.values():
            self._schedule_session_timeout(group.group_id, member.member_id)
        log.info("classic_group_upgraded", group=group.group_id, members=len(group.members),
                 epoch=group.group_epoch)

    def forget(self, group: ConsumerGroup) -> None:
        """A group converted to a classic one (online downgrade): its timers and written state go."""
        for mid in list(group.members):
            self._cancel_timers(group.group_id, mid)
        records.RecordDiff.forget(group)

    def group(self, group_id: str) -> ConsumerGroup | None:
        return self.ctx.group(group_id, GroupType.CONSUMER)

    @property
    def groups(self) -> dict[str, ConsumerGroup]:
        return self.ctx.groups_of(GroupType.CONSUMER)

    # ============================================================ heartbeat
    def heartbeat(self, req: ConsumerHeartbeat, topics: dict[str, TopicMeta]) -> dict:
        if not fits_record_key(req.group_id):
            return error_response(E.UNKNOWN_SERVER_ERROR)
        self.topics = topics
        try:
            validate_heartbeat(req, self._assignors)
            if req.member_epoch in (LEAVE_GROUP_MEMBER_EPOCH, LEAVE_GROUP_STATIC_MEMBER_EPOCH):
                return self._leave(req)
            return self._heartbeat(req)
        except GroupError as exc:
            log.info("consumer_heartbeat_error", group=req.group_id, member=req.member_id,
                     epoch=req.member_epoch, error=int(exc.code), message=exc.message)
            return error_response(exc.code, exc.message)
        finally:
            group = self.group(req.group_id)
            if group is not None:
                self._persist(group)

    # ------------------------------------------------------------ records
    def _persist(self, group: ConsumerGroup) -> None:
        self.ctx.append(group.group_id, records.RecordDiff.changes(group))

    def after_load(self) -> None:
        """Once every record is replayed: members' sessions restart now; revocations get their timeout."""
        for group in self.groups.values():
            records.RecordDiff.loaded(group)
            for member in group.members.values():
                self._schedule_session_timeout(group.group_id, member.member_id)
                if member.state is MemberState.UNREVOKED_PARTITIONS:
                    self._schedule_rebalance_timeout(group.group_id, member)

    def _heartbeat(self, req: ConsumerHeartbeat) -> dict:
        joining = req.member_epoch == 0
        group = self._get_or_create_group(req.group_id, joining)
        if len(group.members) >= self.settings.max_size and req.member_id not in group.members:
            raise GroupError(E.GROUP_MAX_SIZE_REACHED,
                             f"The consumer group has reached its maximum capacity of "
                             f"{self.settings.max_size} members.")
        member_id = req.member_id or kafka_uuid_string()
        if req.instance_id is None:
            member = self._dynamic_member(group, member_id, req)
        else:
            member = self._static_member(group, member_id, req)
        old_state = group.state

        updated = replace(
            member,
            instance_id=req.instance_id if req.instance_id is not None else member.instance_id,
            rack_id=req.rack_id if req.rack_id is not None else member.rack_id,
            rebalance_timeout_ms=req.rebalance_timeout_ms if req.rebalance_timeout_ms != -1
            else member.rebalance_timeout_ms,
            server_assignor=req.server_assignor if req.server_assignor is not None else member.server_assignor,
            subscribed_topic_names=tuple(req.subscribed_topic_names) if req.subscribed_topic_names is not None
            else member.subscribed_topic_names,
            subscribed_topic_regex=req.subscribed_topic_regex if req.subscribed_topic_regex is not None
            else member.subscribed_topic_regex,
            client_id=req.client_id, client_host=req.client_host)
        is_new = member.member_id not in group.members
        # As Kafka: a changed server assignor alone does not bump the epoch; the next bump uses it.
        bump = is_new or (updated.subscribed_topic_names != member.subscribed_topic_names
                          or updated.subscribed_topic_regex != member.subscribed_topic_regex)
        if self.describe_topic is not None:
            bump = self._resolve_regexes(group, updated, req) or bump
        reconciled = self._update_and_reconcile(group, updated, bump, req.owned)
        self._note_state(group, old_state)

        full = joining or (req.rebalance_timeout_ms != -1
                           and (req.subscribed_topic_names is not None or req.subscribed_topic_regex is not None)
                           and req.owned is not None)
        response = {"error_code": 0, "error_message": None, "member_id": reconciled.member_id,
                    "member_epoch": reconciled.member_epoch,
                    "heartbeat_interval_ms": self.heartbeat_interval_ms(group.group_id), "assignment": None}
        if full or reconciled.assigned != member.assigned:
            response["assignment"] = wire_assignment(reconciled.assigned)
        return response

    def _resolve_regexes(self, group: ConsumerGroup, updated: ConsumerMember, req: ConsumerHeartbeat) -> bool:
        regexes = {m.subscribed_topic_regex for mid, m in group.members.items()
                   if m.subscribed_topic_regex and mid != updated.member_id}
        if updated.subscribed_topic_regex:
            regexes.add(updated.subscribed_topic_regex)
        return maybe_resolve(group, regexes, lambda regex: frozenset(topics_matching(regex, self.topics)),
                             self.describe_topic, req.principal, req.principal_host, self.ctx.now_ms,
                             self.settings.regex_refresh_interval_ms)

    def resolved(self, group: ConsumerGroup):
        """What the group's regexes resolve to while authorization is on; None (live matches) while off."""
        return None if self.describe_topic is None else resolved_topics(group.regexes)

    def _get_or_create_group(self, group_id: str, joining: bool) -> ConsumerGroup:
        existing = self.ctx.groups.get(group_id)
        if existing is not None and existing.type is GroupType.CONSUMER:
            return existing
        if existing is not None and not (joining and existing.is_empty() and existing.type is GroupType.CLASSIC):
            raise GroupError(E.GROUP_ID_NOT_FOUND, f"Group {group_id} is not a consumer group.")
        if not joining:
            raise GroupError(E.GROUP_ID_NOT_FOUND, f"Consumer group {group_id} not found.")
        group = ConsumerGroup(group_id, self.ctx.now_ms)
        if existing is not None:
            # An Empty classic group (perhaps holding offsets) becomes a consumer group; offsets stay.
            self.ctx.append(group_id, existing.tombstone_records())
            log.info("classic_group_replaced_by_consumer_group", group=group_id)
        self.ctx.groups[group_id] = group
        log.info("consumer_group_created", group=group_id)
        return group

    def _dynamic_member(self, group: ConsumerGroup, member_id: str, req: ConsumerHeartbeat) -> ConsumerMember:
        member = group.members.get(member_id)
        if member is None:
            if req.member_epoch != 0:
                raise GroupError(E.UNKNOWN_MEMBER_ID,
                                 f"Member {member_id} is not a member of group {group.group_id}.")
            log.info("consumer_member_joining", group=group.group_id, member=member_id)
            return ConsumerMember(member_id)
        self._check_epoch(member, req)
        return member

    def _static_member(self, group: ConsumerGroup, member_id: str, req: ConsumerHeartbeat) -> ConsumerMember:
        existing = group.static_member(req.instance_id)
        if req.member_epoch == 0:
            if existing is None:
                member = group.members.get(member_id)
                if member is not None:
                    self._check_epoch(member, req)
                    return member
                log.info("consumer_static_member_joining", group=group.group_id, member=member_id,
                         instance=req.instance_id)
                return ConsumerMember(member_id, instance_id=req.instance_id)
            if existing.member_epoch != LEAVE_GROUP_STATIC_MEMBER_EPOCH:
                raise GroupError(E.UNRELEASED_INSTANCE_ID,
                                 f"Static member {member_id} with instance id {req.instance_id} cannot join "
                                 f"the group because the instance id is owned by {existing.member_id} member.")
            # The rejoining instance takes the old member's place: same assignment and target, epoch 0.
            new = replace(existing, member_id=member_id, member_epoch=0, previous_member_epoch=0)
            self._cancel_timers(group.group_id, existing.member_id)
            group.replace_member(existing.member_id, new)
            log.info("consumer_static_member_replaced", group=group.group_id, instance=req.instance_id,
                     old_member=existing.member_id, member=member_id)
            return new
        if existing is None:
            raise GroupError(E.UNKNOWN_MEMBER_ID, f"Instance id {req.instance_id} is unknown.")
        if existing.member_id != member_id:
            raise GroupError(E.FENCED_INSTANCE_ID,
                             f"Static member {member_id} with instance id {req.instance_id} was fenced by "
                             f"member {existing.member_id}.")
        self._check_epoch(existing, req)
        return existing

    @staticmethod
    def _check_epoch(member: ConsumerMember, req: ConsumerHeartbeat) -> None:
        received = req.member_epoch
        if received > member.member_epoch:
            raise GroupError(E.FENCED_MEMBER_EPOCH,
                             f"The consumer group member has a greater member epoch ({received}) than the one "
                             f"known by the group coordinator ({member.member_epoch}). The member must abandon "
                             f"all its partitions and rejoin.")
        if received < member.member_epoch:
            # The previous epoch with a subset of the assignment: the bumped-epoch answer may have been lost.
            if received != member.previous_member_epoch or not _is_subset(req.owned, member.assigned):
                raise GroupError(E.FENCED_MEMBER_EPOCH,
                                 f"The consumer group member has a smaller member epoch ({received}) than the "
                                 f"one known by the group coordinator ({member.member_epoch}). The member must "
                                 f"abandon all its partitions and rejoin.")

    def _update_and_reconcile(self, group: ConsumerGroup, updated: ConsumerMember, bump: bool, owned,
                              **log_fields) -> ConsumerMember:
        """Store ``updated`` (bumping the group epoch if asked), move it toward its target given what it
        says it owns, and restart its session timer."""
        self._put_member(group, updated, bump, **log_fields)
        epochs = group.partition_epochs(excluding=updated.member_id)
        reconciled = reconcile(updated, group.assignment_epoch, group.target.get(updated.member_id, {}),
                               lambda tid, p: epochs.get((tid, p), -1), owned)
        self._store_reconciled(group, updated, reconciled)
        self._schedule_session_timeout(group.group_id, reconciled.member_id)
        return reconciled

    def _store_reconciled(self, group: ConsumerGroup, before: ConsumerMember, after: ConsumerMember) -> None:
        group.put_member(after)
        if after == before:
            return
        log.info("consumer_member_reconciled", group=group.group_id, member=after.member_id,
                 epoch=after.member_epoch, state=after.state.value)
        if after.state is MemberState.UNREVOKED_PARTITIONS:
            self._schedule_rebalance_timeout(group.group_id, after)
        else:
            self.ctx.cancel(self._rebalance_key(group.group_id, after.member_id))

    def _note_state(self, group: ConsumerGroup, old: ConsumerGroupState) -> None:
        new = group.state
        if new is not old:
            group.state_timestamp_ms = self.ctx.now_ms
            log.info("consumer_group_transition", group=group.group_id, from_state=old.value,
                     to_state=new.value, epoch=group.group_epoch)
            self.ctx.record_transition(group.group_id, old, new, group.group_epoch)

    # ------------------------------------------------------------ leaving and fencing
    def _leave(self, req: ConsumerHeartbeat) -> dict:
        group = self.group(req.group_id)
        if group is None:
            raise GroupError(E.GROUP_ID_NOT_FOUND, f"Consumer group {req.group_id} not found.")
        response = {"error_code": 0, "error_message": None, "member_id": req.member_id,
                    "member_epoch": req.member_epoch, "heartbeat_interval_ms": 0, "assignment": None}
        if req.instance_id is None:
            member = group.members.get(req.member_id)
            if member is None:
                raise GroupError(E.UNKNOWN_MEMBER_ID,
                                 f"Member {req.member_id} is not a member of group {group.group_id}.")
            log.info("consumer_member_left", group=group.group_id, member=req.member_id)
            self.fence(group, member.member_id)
            return response
        member = group.static_member(req.instance_id)
        if member is None:
            raise GroupError(E.UNKNOWN_MEMBER_ID, f"Instance id {req.instance_id} is unknown.")
        if member.member_id != req.member_id:
            raise GroupError(E.FENCED_INSTANCE_ID,
                             f"Static member {req.member_id} with instance id {req.instance_id} was fenced by "
                             f"member {member.member_id}.")
        if req.member_epoch == LEAVE_GROUP_STATIC_MEMBER_EPOCH:
            # A temporary leave: the instance keeps its assignment until its session times out.
            old_state = group.state
            group.put_member(replace(member, member_epoch=LEAVE_GROUP_STATIC_MEMBER_EPOCH, pending_revocation={}))
            self.ctx.cancel(self._rebalance_key(group.group_id, member.member_id))
            log.info("consumer_static_member_left_temporarily", group=group.group_id, member=member.member_id,
                     instance=req.instance_id)
            self._note_state(group, old_state)
            return response
        log.info("consumer_static_member_left", group=group.group_id, member=member.member_id,
                 instance=req.instance_id)
        self.fence(group, member.member_id)
        return response

    def fence(self, group: ConsumerGroup, member_id: str) -> None:
        """Remove a member, release its partitions and bump the group epoch (Kafka's fence member);
        if it was the last member using the consumer protocol, the coordinator may turn the group
        back into a classic one (online downgrade)."""
        if self.downgrade(group, member_id):
            self._cancel_timers(group.group_id, member_id)
            return
        old_state = group.state
        group.remove_member(member_id)
        self._cancel_timers(group.group_id, member_id)
        group.subscription_metadata = subscription_metadata(group, self.topics, self.resolved(group))
        group.group_epoch += 1
        if not group.members:
            # Nobody is left to heartbeat a new target assignment into being; settle it now.
            group.target = {}
            group.assignment_epoch = group.group_epoch
        log.info("consumer_member_fenced", group=group.group_id, member=member_id, epoch=group.group_epoch)
        self._note_state(group, old_state)
        self._persist(group)

    @staticmethod
    def _session_key(group_id: str, member_id: str) -> tuple:
        return ("consumer-session", group_id, member_id)

    @staticmethod
    def _rebalance_key(group_id: str, member_id: str) -> tuple:
        return ("consumer-rebalance", group_id, member_id)

    def _schedule_session_timeout(self, group_id: str, member_id: str) -> None:
        key = self._session_key(group_id, member_id)
        group = self.group(group_id)
        member = group.members.get(member_id) if group is not None else None
        timeout = member.classic.session_timeout_ms if member is not None and member.classic is not None \
            else self.session_timeout_ms(group_id)   # a classic member keeps its own session timeout
        self.ctx.schedule(key, timeout, lambda: self.ctx.runtime.timer(
            group_id, key, lambda: self._expire_session(group_id, member_id)))

    def _schedule_rebalance_timeout(self, group_id: str, member: ConsumerMember) -> None:
        """A member revoking partitions must be done within its rebalance timeout, at this epoch."""
        member_id, epoch = member.member_id, member.member_epoch
        key = self._rebalance_key(group_id, member_id)
        self.ctx.schedule(key, member.rebalance_timeout_ms, lambda: self.ctx.runtime.timer(
            group_id, key, lambda: self._expire_rebalance(group_id, member_id, epoch)))

    def _cancel_timers(self, group_id: str, member_id: str) -> None:
        self.ctx.cancel(self._session_key(group_id, member_id))
        self.ctx.cancel(self._rebalance_key(group_id, member_id))
        self._cancel_classic_timers(group_id, member_id)

    def _expire_session(self, group_id: str, member_id: str) -> None:
        group = self.group(group_id)
        if group is None or member_id not in group.members:
            return
        log.info("consumer_member_session_expired", group=group_id, member=member_id)
        self.fence(group, member_id)

    def _expire_rebalance(self, group_id: str, member_id: str, epoch: int) -> None:
        group = self.group(group_id)
        member = group.members.get(member_id) if group is not None else None
        if member is None or member.member_epoch != epoch:
            return
        log.info("consumer_member_rebalance_timeout", group=group_id, member=member_id, epoch=epoch)
        self.fence(group, member_id)

    # ============================================================ other APIs on consumer groups
    def describe(self, group_id: str, topics_by_id: dict[bytes, str], authorized_operations: int) -> dict:
        """A ConsumerGroupDescribe entry (``topics_by_id`` names the assigned topics)."""
        if not group_id:
            return described_error(E.INVALID_GROUP_ID, None, group_id)
        group = self.group(group_id)
        if group is None and self.ctx.groups.get(group_id) is not None:   # another kind of group
            return described_error(E.GROUP_ID_NOT_FOUND, f"Group {group_id} is not a consumer group.", group_id)
        if group is None or group.dead:
            return described_error(E.GROUP_ID_NOT_FOUND, f"Group {group_id} not found.", group_id)
        return described_group(group, topics_by_id, assignor_name(group, self._assignors), authorized_operations)

    def leave_group(self, req) -> dict:
        """A classic LeaveGroup naming members of a consumer group (admin removeMembersFromConsumerGroup)."""
        group = self.group(req.group_id)
        return {"error_code": 0, "members": [
            {"member_id": who.member_id, "group_instance_id": who.group_instance_id,
             "error_code": int(self._remove_member(group, who.member_id, who.group_instance_id))}
            for who in req.members]}

    def _remove_member(self, group: ConsumerGroup, member_id: str, instance_id: str | None) -> ErrorCode:
        if instance_id is not None:
            member = group.static_member(instance_id)
            if member is None:
                return E.UNKNOWN_MEMBER_ID
            if member_id and member.member_id != member_id:
                return E.FENCED_INSTANCE_ID
        else:
            member = group.members.get(member_id)
            if member is None:
                return E.UNKNOWN_MEMBER_ID
        self.fence(group, member.member_id)
        return E.NONE

    def offset_committed(self, group: ConsumerGroup, member_id: str) -> None:
        """Nothing to do: a consumer group member's session is kept by its heartbeats alone."""

    def delete_group(self, group: ConsumerGroup) -> None:
        """Forget a group whose tombstones are written (DeleteGroups, or its offsets all expired)."""
        for mid in list(group.members):
            self._cancel_timers(group.group_id, mid)
        old_state = group.state
        group.dead = True
        del self.ctx.groups[group.group_id]
        records.RecordDiff.forget(group)
        log.info("consumer_group_deleted", group=group.group_id)
        self._note_state(group, old_state)

    # ============================================================ replay of __consumer_offsets
    def replay(self, key: bytes, value: bytes | None) -> None:
        """Apply one ConsumerGroup* record (Kafka's GroupMetadataManager.replay for consumer groups)."""
        k = records.decode_key(key)
        group = self.group(k.group_id)
        if value is None:
            if group is None:
                return
            if k.member_id is not None:
                if k.version == records.MEMBER_METADATA:
                    group.remove_member(k.member_id)
                elif k.version == records.TARGET_MEMBER:
                    group.target.pop(k.member_id, None)
            elif k.version == records.GROUP_METADATA:
                del self.ctx.groups[k.group_id]
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
        else:
            member = group.members.get(k.member_id) or ConsumerMember(k.member_id)
            if k.version == records.MEMBER_METADATA:
                member = replace(member, instance_id=v.instance_id, rack_id=v.rack_id, client_id=v.client_id,
                                 client_host=v.client_host, subscribed_topic_names=tuple(v.subscribed_topic_names),
                                 subscribed_topic_regex=v.subscribed_topic_regex,
                                 rebalance_timeout_ms=v.rebalance_timeout_ms, server_assignor=v.server_assignor,
                                 classic=classic_meta(v.classic_member_metadata))
            else:
                member = replace(member, member_epoch=v.member_epoch, previous_member_epoch=v.previous_member_epoch,
                                 state=records.STATES.get(v.state, MemberState.STABLE),
                                 assigned=_assignment(v.assigned_partitions),
                                 pending_revocation=_assignment(v.partitions_pending_revocation))
            group.put_member(member)

    def _replayed_group(self, group_id: str) -> ConsumerGroup:
        existing = self.ctx.groups.get(group_id)
        if existing is not None and not existing.is_empty():
            raise ValueError(f"group {group_id} is not a consumer group")
        # An Empty classic group here only held offsets replayed before the consumer group's records.
        group = self.ctx.groups[group_id] = ConsumerGroup(group_id, self.ctx.now_ms)
        return group


def classic_meta(value) -> ClassicMeta | None:
    if value is None:
        return None
    return ClassicMeta(value.session_timeout_ms, tuple((p.name, bytes(p.metadata)) for p in value.supported_protocols))


def _assignment(entries) -> dict[bytes, frozenset[int]]:
    return {bytes(e.topic_id): frozenset(e.partitions) for e in entries if e.partitions}


def _is_subset(owned: dict[bytes, set[int]] | None, assigned: Assignment) -> bool:
    if owned is None:
        return False
    return all(set(parts) <= set(assigned.get(tid, ())) for tid, parts in owned.items() if parts)
