"""Online migration between classic and consumer groups (Kafka 4.x's
``group.consumer.migration.policy``, GroupMetadataManager.convertToConsumerGroup and
convertToClassicGroup with ConsumerGroup.fromClassicGroup / ClassicGroup.fromConsumerGroup).

Upgrade: a ``group.protocol=consumer`` member joining a classic group of the consumer protocol
type turns it into a consumer group. Each classic member becomes a member speaking the classic
protocol, at the group's generation as its epoch, holding its last assignment (also its target),
with its subscription, rack and protocols read from its metadata; the group epoch is the
generation. Downgrade: when the last member using the consumer protocol leaves a group whose other
members all speak the classic protocol, it becomes a classic group again at the group epoch, each
member's assignment its target one serialized in its protocol's version, and a rebalance begins.

The conversion is pure; the coordinator writes the records (the old group's tombstones, then the
new group's) in the same write as the request that caused it.
"""
from __future__ import annotations

from collections.abc import Mapping

from ..protocol.errors import ErrorCode
from .classic.group import ClassicGroup
from .classic.manager import ClassicGroupManager
from .classic.member import Member
from .classic.state import ClassicGroupState
from .consumer.group import ConsumerGroup, TopicMeta
from .consumer.manager import ConsumerGroupManager
from .consumer.requests import ConsumerHeartbeat, validate_heartbeat
from .consumer.member import ClassicMeta, ConsumerMember, MemberState
from .consumer.target_assignment import subscription_metadata
from .group_api import GroupError
from .consumer_protocol import decode_assignment, decode_subscription, encode_assignment
from .record_format import split

CONSUMER_PROTOCOL_TYPE = "consumer"


class OnlineMigration:
    """Converts a group within the write of the request that calls for it (the records: the old
    group's tombstones, then the new group's)."""

    def __init__(self, ctx, classic: ClassicGroupManager, consumer: ConsumerGroupManager) -> None:
        self.ctx = ctx
        self.classic = classic
        self.consumer = consumer

    def maybe_upgrade(self, req: ConsumerHeartbeat, topics: Mapping[str, TopicMeta]) -> None:
        """Before a ConsumerGroupHeartbeat: a member joining a classic group that may be upgraded
        converts it (otherwise the heartbeat answers GROUP_ID_NOT_FOUND, as Kafka)."""
        group = self.ctx.groups.get(req.group_id)
        if not isinstance(group, ClassicGroup) or group.is_empty() or req.member_epoch != 0:
            return
        settings = self.consumer.settings
        if not can_upgrade(group, settings.upgrade_enabled, settings.max_size):
            return
        try:
            validate_heartbeat(req, self.consumer._assignors)
            converted = classic_to_consumer(group, topics, self.ctx.now_ms)
        except GroupError:
            return
        self.ctx.append(group.group_id, group.tombstone_records())
        self.classic.forget(group)
        self.consumer.adopt(converted)

    def downgrade(self, group: ConsumerGroup, leaving_member_id: str) -> bool:
        if not can_downgrade(group, leaving_member_id, self.consumer.settings.downgrade_enabled,
                             self.classic.settings.max_size):
            return False
        self.ctx.append(group.group_id, group.tombstone_records())
        self.consumer.forget(group)
        del self.ctx.groups[group.group_id]
        classic = consumer_to_classic(group, leaving_member_id, self.classic.create_group(group.group_id))
        self.classic.adopt_downgraded(classic)
        return True


def can_upgrade(classic: ClassicGroup, policy_allows: bool, max_size: int) -> bool:
    """Kafka's validateOnlineUpgrade."""
    return policy_allows and classic.protocol_type == CONSUMER_PROTOCOL_TYPE and len(classic.members) <= max_size


def can_downgrade(group: ConsumerGroup, leaving_member_id: str, policy_allows: bool, max_size: int) -> bool:
    """Kafka's validateOnlineDowngradeWithFencedMember: the leaving member is the last one using
    the consumer protocol and classic members remain."""
    others = [m for mid, m in group.members.items() if mid != leaving_member_id]
    return bool(others) and all(m.uses_classic_protocol for m in others) and policy_allows \
        and len(others) <= max_size


def classic_to_consumer(classic: ClassicGroup, topics: Mapping[str, TopicMeta], now_ms: int) -> ConsumerGroup:
    group = ConsumerGroup(classic.group_id, now_ms)
    generation = classic.generation_id
    for m in classic.members.values():
        try:
            subscription = decode_subscription(m.metadata(classic.protocol_name))
            assigned = _topic_ids(decode_assignment(m.assignment), topics) if m.assignment else {}
        except (KeyError, ValueError) as exc:
            raise GroupError(ErrorCode.GROUP_ID_NOT_FOUND,
                             f"Cannot upgrade the classic group {classic.group_id} to consumer group because the "
                             f"embedded consumer protocol is malformed.") from exc
        group.put_member(ConsumerMember(
            m.member_id, member_epoch=generation, previous_member_epoch=generation, state=MemberState.STABLE,
            instance_id=m.group_instance_id, rack_id=getattr(subscription, "rack_id", None),
            rebalance_timeout_ms=m.rebalance_timeout_ms, client_id=m.client_id, client_host=m.client_host,
            subscribed_topic_names=tuple(subscription.topics), assigned=assigned,
            classic=ClassicMeta(m.session_timeout_ms, tuple(m.protocols))))
        group.target[m.member_id] = assigned
    group.group_epoch = group.assignment_epoch = generation
    group.subscription_metadata = subscription_metadata(group, topics)
    return group


def consumer_to_classic(group: ConsumerGroup, leaving_member_id: str, classic: ClassicGroup) -> ClassicGroup:
    """Fill the new (empty) ``classic`` group from ``group`` without the leaving member; the caller
    writes it and begins its rebalance."""
    names = {meta.topic_id: name for name, meta in group.subscription_metadata.items()}
    classic.generation_id = group.group_epoch
    for mid, m in group.members.items():
        if mid == leaving_member_id:
            continue
        classic.add(Member(mid, m.instance_id, m.client_id, m.client_host, m.rebalance_timeout_ms,
                           m.classic.session_timeout_ms, CONSUMER_PROTOCOL_TYPE, list(m.classic.protocols)))
    classic.protocol_name = classic.select_protocol()
    classic.subscribed_topics = classic.compute_subscribed_topics()
    for mid, member in classic.members.items():
        version = split(member.metadata(classic.protocol_name))[0]
        member.assignment = encode_assignment(group.target.get(mid, {}), names, version)
    classic.state = ClassicGroupState.STABLE
    return classic


def _topic_ids(assignment, topics: Mapping[str, TopicMeta]) -> dict[bytes, frozenset[int]]:
    out: dict[bytes, frozenset[int]] = {}
    for tp in assignment.assigned_partitions:
        meta = topics.get(tp.topic)
        if meta is not None and tp.partitions:
            out[meta.topic_id] = frozenset(out.get(meta.topic_id, frozenset()) | set(tp.partitions))
    return out
