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

The lifecycle (leave vs beat, the revert of a failed heartbeat, persistence, timers, fencing,
deletion, loading) is modern/lifecycle.py's; this module supplies the consumer kind's hooks, its
static members' hooks and the online downgrade. Every change is written to __consumer_offsets as Kafka's
ConsumerGroup* records (records.py); replay.py rebuilds the groups on start.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Callable

from ...logging import get_logger
from ...protocol.errors import ErrorCode
from ..context import CoordinatorContext
from ..modern import wire_assignment
from ..modern.lifecycle import ModernGroupManager
from ..group_configs import GroupConfigs
from ..ports import MayDescribe
from . import records, replay
from .assignors import Assignment
from .classic_members import ClassicMembers
from .group import ConsumerGroup, TopicMeta
from .member import LEAVE_GROUP_STATIC_MEMBER_EPOCH, ConsumerMember, MemberState, \
    kafka_uuid_string
from .reconciliation import reconcile
from .requests import ConsumerHeartbeat, validate_heartbeat
from .responses import described_error, described_group
from .regex_resolution import maybe_resolve, resolved_topics
from .target_assignment import (assignor_name, available_assignors, subscription_metadata, topics_matching,
                                update_target_assignment)

log = get_logger("kafkaemu.consumer_groups")
E = ErrorCode
Downgrade = Callable[[ConsumerGroup, str], bool]   # (group, leaving member id) -> whether it converted the group


class ConsumerGroupManager(ModernGroupManager, name="consumer", group_class=ConsumerGroup, replayer=replay):
    not_found = "Consumer group {} not found."
    replaces_empty_classic = True

    def __init__(self, ctx: CoordinatorContext, group_config: GroupConfigs, downgrade: Downgrade,
                 may_describe: MayDescribe | None = None) -> None:
        """``group_config``: the groups' configs (group_configs.py); ``downgrade``: the coordinator's
        online downgrade; ``may_describe``: while authorization is on, whether a principal may
        DESCRIBE a topic (regex subscriptions)."""
        super().__init__(ctx, ctx.settings.consumer, group_config)
        self.topics: dict[str, TopicMeta] = {}
        self._assignors = available_assignors(self.settings.assignors)
        self.downgrade = downgrade
        self.describe_topic = may_describe
        self.classic = ClassicMembers(self)   # its members speaking the classic protocol

    def session_timeout_ms(self, group_id: str, member_id: str | None = None) -> int:
        group = self.group(group_id) if member_id is not None else None
        member = group.members.get(member_id) if group is not None else None
        if member is not None and member.classic is not None:
            return member.classic.session_timeout_ms   # a classic member keeps its own session timeout
        return self.config(group_id, self._session_timeout_config)

    def adopt(self, group: ConsumerGroup) -> None:
        """A group converted from a classic one (online upgrade): its members' sessions start now."""
        self.ctx.groups[group.group_id] = group
        for member in group.members.values():
            self.schedule_session_timeout(group.group_id, member.member_id)
        log.info("classic_group_upgraded", group=group.group_id, members=len(group.members),
                 epoch=group.group_epoch)

    def forget(self, group: ConsumerGroup) -> None:
        """A group converted to a classic one (online downgrade): its timers and written state go."""
        for mid in list(group.members):
            self.cancel_timers(group.group_id, mid)
        records.RecordDiff.forget(group)

    # ============================================================ heartbeat
    def heartbeat(self, req: ConsumerHeartbeat, topics: dict[str, TopicMeta]) -> dict:
        self.topics = topics
        return super().heartbeat(req)

    def validate(self, req: ConsumerHeartbeat) -> None:
        validate_heartbeat(req, self._assignors)

    def member_id_of(self, req: ConsumerHeartbeat) -> str:
        return req.member_id or kafka_uuid_string()

    def update_member(self, group: ConsumerGroup, member: ConsumerMember, req: ConsumerHeartbeat):
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
            client_id=req.client_id, client_host=req.client_host,
            classic=None)   # a consumer-protocol heartbeat: the member no longer speaks the classic protocol
        is_new = member.member_id not in group.members
        # As Kafka: a changed server assignor alone does not bump the epoch; the next bump uses it.
        bump = is_new or (updated.subscribed_topic_names != member.subscribed_topic_names
                          or updated.subscribed_topic_regex != member.subscribed_topic_regex)
        if self.describe_topic is not None:
            bump = self._resolve_regexes(group, updated, req) or bump
        return updated, self.store_member(group, updated, bump), None

    def store_member(self, group: ConsumerGroup, updated: ConsumerMember, bump: bool) -> bool:
        """Store the member; the group epoch bumps when its subscription (``bump``) or the group's
        subscribed topics' metadata changed (Kafka's consumerGroupHeartbeat, for either protocol's member)."""
        group.put_member(updated)
        metadata = subscription_metadata(group, self.topics, self.resolved(group))
        if metadata != group.subscription_metadata:
            group.subscription_metadata = metadata
            bump = True
        return bump

    def assign(self, group: ConsumerGroup) -> None:
        update_target_assignment(group, self.topics, self._assignors, self.resolved(group))

    def reconcile(self, group: ConsumerGroup, updated: ConsumerMember, req, note) -> ConsumerMember:
        return self.reconcile_owned(group, updated, req.owned)

    def reconcile_owned(self, group: ConsumerGroup, updated: ConsumerMember, owned) -> ConsumerMember:
        """Move ``updated`` toward its target given what it says it owns."""
        epochs = group.partition_epochs(excluding=updated.member_id)
        reconciled = reconcile(updated, group.assignment_epoch, group.target.get(updated.member_id, {}),
                               lambda tid, p: epochs.get((tid, p), -1), owned)
        self.store_reconciled(group, updated, reconciled)
        return reconciled

    def answer(self, group: ConsumerGroup, before: ConsumerMember, member: ConsumerMember, req: ConsumerHeartbeat,
               joining: bool, created: bool, note) -> dict:
        full = joining or (req.rebalance_timeout_ms != -1
                           and (req.subscribed_topic_names is not None or req.subscribed_topic_regex is not None)
                           and req.owned is not None)
        response = {"error_code": 0, "error_message": None, "member_id": member.member_id,
                    "member_epoch": member.member_epoch,
                    "heartbeat_interval_ms": self.heartbeat_interval_ms(group.group_id), "assignment": None}
        if full or member.assigned != before.assigned:
            response["assignment"] = wire_assignment(member.assigned)
        return response

    def revoking(self, member: ConsumerMember) -> bool:
        return member.state is MemberState.UNREVOKED_PARTITIONS

    def owns_only_assigned(self, member: ConsumerMember, req: ConsumerHeartbeat) -> bool:
        return _is_subset(req.owned, member.assigned)

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

    # ------------------------------------------------------------ static members
    def instance_released(self, existing: ConsumerMember) -> bool:
        """A member speaking the classic protocol holds its instance id for no consumer-protocol member
        (Kafka checks the release only when neither speaks it)."""
        return existing.uses_classic_protocol or super().instance_released(existing)

    def left_for_now(self, member: ConsumerMember) -> ConsumerMember:
        return replace(member, member_epoch=LEAVE_GROUP_STATIC_MEMBER_EPOCH, pending_revocation={})

    # ------------------------------------------------------------ fencing
    def fence(self, group: ConsumerGroup, member_id: str) -> None:
        """Remove a member, release its partitions and bump the group epoch (Kafka's fence member);
        if it was the last member using the consumer protocol, the coordinator may turn the group
        back into a classic one (online downgrade)."""
        if self.downgrade(group, member_id):
            self.cancel_timers(group.group_id, member_id)
            return
        super().fence(group, member_id)

    def member_removed(self, group: ConsumerGroup, member_id: str) -> None:
        group.subscription_metadata = subscription_metadata(group, self.topics, self.resolved(group))

    def cancel_timers(self, group_id: str, member_id: str) -> None:
        super().cancel_timers(group_id, member_id)
        self.classic.cancel_timers(group_id, member_id)

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


def _is_subset(owned: dict[bytes, set[int]] | None, assigned: Assignment) -> bool:
    if owned is None:
        return False
    return all(set(parts) <= set(assigned.get(tid, ())) for tid, parts in owned.items() if parts)
