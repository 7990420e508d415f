"""KIP-848 consumer groups: ConsumerGroupHeartbeat, ConsumerGroupDescribe, fencing and timers.

Follows Apache Kafka's GroupMetadataManager.consumerGroupHeartbeat: validate, get or create the
group and member, bump the group epoch when a subscription or the subscribed topics' metadata
changed, recompute the target assignment with the server assignor when the group epoch is ahead,
then reconcile the member (reconciliation.reconcile) and answer with its epoch and, when it
changed or the request was a full one, its assignment.

Time arrives from the GroupCoordinator (``now()``), timers are its keyed ``Timers``:
``("consumer-session", group, member)`` fences a member that stops heartbeating, and
``("consumer-rebalance", group, member)`` fences one that does not revoke within its rebalance
timeout. Topic metadata arrives with each request (``topics``: name -> TopicMeta) and the last one
seen is kept for timers.

Every change is written to __consumer_offsets as Kafka's ConsumerGroup* records (records.py,
through ``append(group_id, records)``); ``replay`` and ``after_load`` rebuild the groups on start.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Callable

import structlog

from ...config import DEFAULTS
from ...protocol.errors import ErrorCode
from ..timers import Timers
from . import records as consumer_records
from .assignors import ASSIGNORS, DEFAULT_ASSIGNOR, Assignment, MemberSpec
from .group import (LEAVE_GROUP_MEMBER_EPOCH, LEAVE_GROUP_STATIC_MEMBER_EPOCH, ConsumerGroup,
                             ConsumerGroupState, ConsumerMember, MemberState, TopicMeta, kafka_uuid_string)
from .reconciliation import reconcile

log = structlog.get_logger("kafkaemu.consumer_groups")
E = ErrorCode
INVALID_REGULAR_EXPRESSION = 128   # Kafka 4.0's code; kafka-python's table predates it
INT32_MIN = -(1 << 31)


class HeartbeatError(Exception):
    def __init__(self, code: int, message: str | None = None):
        super().__init__(message or str(code))
        self.code = int(code)
        self.message = message


@dataclass
class ConsumerHeartbeat:
    """ConsumerGroupHeartbeat, newest shape; ``owned`` is topic id -> partitions or None."""
    group_id: str
    member_id: str
    member_epoch: int
    instance_id: str | None = None
    rack_id: str | None = None
    rebalance_timeout_ms: int = -1
    subscribed_topic_names: list[str] | None = None
    subscribed_topic_regex: str | None = None
    server_assignor: str | None = None
    owned: dict[bytes, set[int]] | None = None
    client_id: str = ""
    client_host: str = ""
    api_version: int = 1


@dataclass(frozen=True)
class ConsumerSettings:
    """The KIP-848 part of BrokerConfig (whose defaults these are)."""
    session_timeout_ms: int = DEFAULTS.group_consumer_session_timeout_ms
    heartbeat_interval_ms: int = DEFAULTS.group_consumer_heartbeat_interval_ms
    max_size: int = DEFAULTS.group_consumer_max_size
    assignors: tuple[str, ...] = DEFAULTS.group_consumer_assignors

    @classmethod
    def from_config(cls, config) -> "ConsumerSettings":
        return cls(
            session_timeout_ms=config.group_consumer_session_timeout_ms,
            heartbeat_interval_ms=config.group_consumer_heartbeat_interval_ms,
            max_size=config.group_consumer_max_size,
            assignors=tuple(config.group_consumer_assignors),
        )


def error_response(code: int, message: str | None = None) -> dict:
    return {"error_code": int(code), "error_message": message, "member_id": None, "member_epoch": 0,
            "heartbeat_interval_ms": 0, "assignment": None}


def _wire_assignment(assignment: Assignment) -> dict:
    return {"topic_partitions": [{"topic_id": tid, "partitions": sorted(parts)}
                                 for tid, parts in sorted(assignment.items()) if parts]}


class ConsumerGroupCoordinator:
    def __init__(self, timers: Timers, now: Callable[[], int], settings: ConsumerSettings | None = None,
                 on_group_removed: Callable[[str], None] | None = None,
                 on_transition: Callable[[str, ConsumerGroupState, ConsumerGroupState, int], None] | None = None,
                 append: Callable[[str, list], None] | None = None) -> None:
        self.timers = timers
        self.now = now
        self.settings = settings or ConsumerSettings()
        self.groups: dict[str, ConsumerGroup] = {}
        self.topics: dict[str, TopicMeta] = {}
        self._on_group_removed = on_group_removed
        self._on_transition = on_transition
        self._append = append
        self._written = consumer_records.RecordDiff()

    def group(self, group_id: str) -> ConsumerGroup | None:
        return self.groups.get(group_id)

    # ============================================================ heartbeat
    def heartbeat(self, req: ConsumerHeartbeat, topics: dict[str, TopicMeta],
                  classic_group_state: Callable[[str], str | None]) -> dict:
        """``classic_group_state(group_id)``: the state name of a classic group with that id, else None;
        an Empty classic group is replaced (the GroupCoordinator drops it when told to)."""
        self.topics = topics
        try:
            self._validate(req)
            if req.member_epoch in (LEAVE_GROUP_MEMBER_EPOCH, LEAVE_GROUP_STATIC_MEMBER_EPOCH):
                return self._leave(req)
            return self._heartbeat(req, classic_group_state)
        except HeartbeatError as exc:
            log.info("consumer_heartbeat_error", group=req.group_id, member=req.member_id,
                     epoch=req.member_epoch, error=exc.code, message=exc.message)
            return error_response(exc.code, exc.message)
        finally:
            group = self.groups.get(req.group_id)
            if group is not None:
                self._persist(group)

    # ------------------------------------------------------------ records
    def _persist(self, group: ConsumerGroup) -> None:
        if self._append is not None:
            records = self._written.changes(group)
            if records:
                self._append(group.group_id, records)

    def replay(self, key: "consumer_records.ConsumerKey", value: bytes | None) -> None:
        consumer_records.apply(self.groups, key, value, self.now())

    def after_load(self) -> None:
        """Once every record is replayed: members' sessions restart now; revocations get their timeout."""
        for group in self.groups.values():
            self._written.loaded(group)
            for member in group.members.values():
                self._schedule_session_timeout(group.group_id, member.member_id)
                if member.state is MemberState.UNREVOKED_PARTITIONS:
                    gid, mid, epoch = group.group_id, member.member_id, member.member_epoch
                    self.timers.schedule(self._rebalance_key(gid, mid), self.now() + member.rebalance_timeout_ms,
                                         lambda gid=gid, mid=mid, epoch=epoch: self._expire_rebalance(gid, mid, epoch))

    def _validate(self, req: ConsumerHeartbeat) -> None:
        def invalid(msg: str):
            raise HeartbeatError(E.INVALID_REQUEST, msg)
        if req.api_version >= 1 or req.member_epoch != 0:
            if not req.member_id:
                invalid("MemberId can't be empty.")
        if not req.group_id:
            invalid("GroupId can't be empty.")
        if req.instance_id == "":
            invalid("InstanceId can't be empty.")
        if req.rack_id == "":
            invalid("RackId can't be empty.")
        if req.member_epoch == 0:
            if req.rebalance_timeout_ms == -1:
                invalid("RebalanceTimeoutMs must be provided in first request.")
            if req.owned is None or req.owned:
                invalid("TopicPartitions must be empty when (re-)joining.")
            if not req.subscribed_topic_names and not req.subscribed_topic_regex:
                invalid("SubscribedTopicNames or SubscribedTopicRegex must be set in first request.")
        elif req.member_epoch == LEAVE_GROUP_STATIC_MEMBER_EPOCH:
            if req.instance_id is None:
                invalid("InstanceId can't be null.")
        elif req.member_epoch < LEAVE_GROUP_STATIC_MEMBER_EPOCH:
            invalid("MemberEpoch is invalid.")
        if req.subscribed_topic_regex is not None:
            try:
                re.compile(req.subscribed_topic_regex)
            except re.error as exc:
                raise HeartbeatError(INVALID_REGULAR_EXPRESSION,
                                     f"SubscribedTopicRegex `{req.subscribed_topic_regex}` is not a valid "
                                     f"regular expression: {exc}.")
        if req.server_assignor is not None and req.server_assignor not in self._assignors():
            raise HeartbeatError(E.UNSUPPORTED_ASSIGNOR,
                                 f"ServerAssignor {req.server_assignor} is not supported. Supported assignors: "
                                 f"{', '.join(self._assignors())}.")

    def _assignors(self) -> list[str]:
        return [a for a in self.settings.assignors if a in ASSIGNORS]

    def _heartbeat(self, req: ConsumerHeartbeat, classic_group_state) -> dict:
        joining = req.member_epoch == 0
        group = self.groups.get(req.group_id)
        if group is None:
            classic = classic_group_state(req.group_id)
            if classic is not None and not (joining and classic == "Empty"):
                raise HeartbeatError(E.GROUP_ID_NOT_FOUND, f"Group {req.group_id} is not a consumer group.")
            if not joining:
                raise HeartbeatError(E.GROUP_ID_NOT_FOUND, f"Consumer group {req.group_id} not found.")
            group = ConsumerGroup(req.group_id, self.now())
            if classic is not None:
                self._on_group_removed_classic(req.group_id)
            self.groups[req.group_id] = group
            log.info("consumer_group_created", group=req.group_id)
        if len(group.members) >= self.settings.max_size and req.member_id not in group.members:
            raise HeartbeatError(E.GROUP_MAX_SIZE_REACHED,
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
        group.put_member(updated)
        metadata = self._subscription_metadata(group)
        if metadata != group.subscription_metadata:
            group.subscription_metadata = metadata
            bump = True
        if bump:
            group.group_epoch += 1
            log.info("consumer_group_epoch_bumped", group=group.group_id, epoch=group.group_epoch,
                     member=updated.member_id)
        if group.group_epoch > group.assignment_epoch:
            self._update_target_assignment(group)
        target = group.target.get(updated.member_id, {})
        epochs = group.partition_epochs(excluding=updated.member_id)
        reconciled = reconcile(updated, group.assignment_epoch, target,
                               lambda tid, p: epochs.get((tid, p), -1), req.owned)
        self._store_reconciled(group, updated, reconciled)
        self._schedule_session_timeout(group.group_id, reconciled.member_id)
        self._note_state(group, old_state)

        full = joining or (req.rebalance_timeout_ms != -1
                           and (req.subscribed_topic_names is not None or req.subscribed_topic_regex is not None)
                           and req.owned is not None)
        response = {"error_code": 0, "error_message": None, "member_id": reconciled.member_id,
                    "member_epoch": reconciled.member_epoch,
                    "heartbeat_interval_ms": self.settings.heartbeat_interval_ms, "assignment": None}
        if full or reconciled.assigned != member.assigned:
            response["assignment"] = _wire_assignment(reconciled.assigned)
        return response

    def _on_group_removed_classic(self, group_id: str) -> None:
        if self._on_group_removed is not None:
            self._on_group_removed(group_id)

    def _dynamic_member(self, group: ConsumerGroup, member_id: str, req: ConsumerHeartbeat) -> ConsumerMember:
        member = group.members.get(member_id)
        if member is None:
            if req.member_epoch != 0:
                raise HeartbeatError(E.UNKNOWN_MEMBER_ID,
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
                raise HeartbeatError(E.UNRELEASED_INSTANCE_ID,
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
            raise HeartbeatError(E.UNKNOWN_MEMBER_ID, f"Instance id {req.instance_id} is unknown.")
        if existing.member_id != member_id:
            raise HeartbeatError(E.FENCED_INSTANCE_ID,
                                 f"Static member {member_id} with instance id {req.instance_id} was fenced by "
                                 f"member {existing.member_id}.")
        self._check_epoch(existing, req)
        return existing

    @staticmethod
    def _check_epoch(member: ConsumerMember, req: ConsumerHeartbeat) -> None:
        received = req.member_epoch
        if received > member.member_epoch:
            raise HeartbeatError(E.FENCED_MEMBER_EPOCH,
                                 f"The consumer group member has a greater member epoch ({received}) than the one "
                                 f"known by the group coordinator ({member.member_epoch}). The member must abandon "
                                 f"all its partitions and rejoin.")
        if received < member.member_epoch:
            # The previous epoch with a subset of the assignment: the bumped-epoch answer may have been lost.
            if received != member.previous_member_epoch or not _is_subset(req.owned, member.assigned):
                raise HeartbeatError(E.FENCED_MEMBER_EPOCH,
                                     f"The consumer group member has a smaller member epoch ({received}) than the "
                                     f"one known by the group coordinator ({member.member_epoch}). The member must "
                                     f"abandon all its partitions and rejoin.")

    # ------------------------------------------------------------ metadata and assignment
    def regex_matches(self, pattern: str) -> list[str]:
        # Kafka uses RE2/J; Python's re covers the common syntax (whole-name match, as Java's matches()).
        compiled = re.compile(pattern)
        return [name for name in self.topics if compiled.fullmatch(name)]

    def _subscription_metadata(self, group: ConsumerGroup) -> dict[str, TopicMeta]:
        names = group.subscribed_topic_names(self.topics, self.regex_matches)
        return {n: self.topics[n] for n in sorted(names) if n in self.topics}

    def _member_topic_ids(self, group: ConsumerGroup, member: ConsumerMember) -> frozenset[bytes]:
        names = set(member.subscribed_topic_names)
        if member.subscribed_topic_regex:
            names.update(self.regex_matches(member.subscribed_topic_regex))
        return frozenset(group.subscription_metadata[n].topic_id for n in names if n in group.subscription_metadata)

    def assignor_name(self, group: ConsumerGroup) -> str:
        preferred = group.preferred_assignor()
        available = self._assignors()
        if preferred in available:
            return preferred
        return available[0] if available else DEFAULT_ASSIGNOR

    def _update_target_assignment(self, group: ConsumerGroup) -> None:
        assignor = ASSIGNORS[self.assignor_name(group)]
        specs = {mid: MemberSpec(self._member_topic_ids(group, m), group.target.get(mid, {}))
                 for mid, m in group.members.items()}
        partitions = {meta.topic_id: meta.num_partitions for meta in group.subscription_metadata.values()}
        group.target = assignor.assign(specs, partitions) if specs else {}
        group.assignment_epoch = group.group_epoch
        log.info("consumer_target_assignment", group=group.group_id, epoch=group.group_epoch,
                 assignor=assignor.name, members=len(specs))

    def _store_reconciled(self, group: ConsumerGroup, before: ConsumerMember, after: ConsumerMember) -> None:
        group.put_member(after)
        if after == before:
            return
        log.info("consumer_member_reconciled", group=group.group_id, member=after.member_id,
                 epoch=after.member_epoch, state=after.state.value)
        if after.state is MemberState.UNREVOKED_PARTITIONS:
            gid, mid, epoch = group.group_id, after.member_id, after.member_epoch
            self.timers.schedule(self._rebalance_key(gid, mid), self.now() + after.rebalance_timeout_ms,
                                 lambda: self._expire_rebalance(gid, mid, epoch))
        else:
            self.timers.cancel(self._rebalance_key(group.group_id, after.member_id))

    def _note_state(self, group: ConsumerGroup, old: ConsumerGroupState) -> None:
        new = group.state
        if new is not old:
            group.state_timestamp_ms = self.now()
            log.info("consumer_group_transition", group=group.group_id, from_state=old.value,
                     to_state=new.value, epoch=group.group_epoch)
            if self._on_transition is not None:
                self._on_transition(group.group_id, old, new, group.group_epoch)

    # ------------------------------------------------------------ leaving and fencing
    def _leave(self, req: ConsumerHeartbeat) -> dict:
        group = self.groups.get(req.group_id)
        if group is None:
            raise HeartbeatError(E.GROUP_ID_NOT_FOUND, f"Consumer group {req.group_id} not found.")
        response = {"error_code": 0, "error_message": None, "member_id": req.member_id,
                    "member_epoch": req.member_epoch, "heartbeat_interval_ms": 0, "assignment": None}
        if req.instance_id is None:
            member = group.members.get(req.member_id)
            if member is None:
                raise HeartbeatError(E.UNKNOWN_MEMBER_ID,
                                     f"Member {req.member_id} is not a member of group {group.group_id}.")
            log.info("consumer_member_left", group=group.group_id, member=req.member_id)
            self.fence(group, member.member_id)
            return response
        member = group.static_member(req.instance_id)
        if member is None:
            raise HeartbeatError(E.UNKNOWN_MEMBER_ID, f"Instance id {req.instance_id} is unknown.")
        if member.member_id != req.member_id:
            raise HeartbeatError(E.FENCED_INSTANCE_ID,
                                 f"Static member {req.member_id} with instance id {req.instance_id} was fenced by "
                                 f"member {member.member_id}.")
        if req.member_epoch == LEAVE_GROUP_STATIC_MEMBER_EPOCH:
            # A temporary leave: the instance keeps its assignment until its session times out.
            old_state = group.state
            group.put_member(replace(member, member_epoch=LEAVE_GROUP_STATIC_MEMBER_EPOCH, pending_revocation={}))
            self.timers.cancel(self._rebalance_key(group.group_id, member.member_id))
            log.info("consumer_static_member_left_temporarily", group=group.group_id, member=member.member_id,
                     instance=req.instance_id)
            self._note_state(group, old_state)
            return response
        log.info("consumer_static_member_left", group=group.group_id, member=member.member_id,
                 instance=req.instance_id)
        self.fence(group, member.member_id)
        return response

    def fence(self, group: ConsumerGroup, member_id: str) -> None:
        """Remove a member, release its partitions and bump the group epoch (Kafka's fence member)."""
        old_state = group.state
        group.remove_member(member_id)
        self._cancel_timers(group.group_id, member_id)
        group.subscription_metadata = self._subscription_metadata(group)
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
        self.timers.schedule(self._session_key(group_id, member_id), self.now() + self.settings.session_timeout_ms,
                             lambda: self._expire_session(group_id, member_id))

    def _cancel_timers(self, group_id: str, member_id: str) -> None:
        self.timers.cancel(self._session_key(group_id, member_id))
        self.timers.cancel(self._rebalance_key(group_id, member_id))

    def _expire_session(self, group_id: str, member_id: str) -> None:
        group = self.groups.get(group_id)
        if group is None or member_id not in group.members:
            return
        log.info("consumer_member_session_expired", group=group_id, member=member_id)
        self.fence(group, member_id)

    def _expire_rebalance(self, group_id: str, member_id: str, epoch: int) -> None:
        group = self.groups.get(group_id)
        member = group.members.get(member_id) if group is not None else None
        if member is None or member.member_epoch != epoch:
            return
        log.info("consumer_member_rebalance_timeout", group=group_id, member=member_id, epoch=epoch)
        self.fence(group, member_id)

    # ============================================================ other APIs on consumer groups
    def describe(self, group_id: str, topics_by_id: dict[bytes, str], include_authorized_operations: bool,
                 operations: int) -> dict:
        group = self.groups.get(group_id)
        if group is None or group.dead:
            return {"error_code": int(E.GROUP_ID_NOT_FOUND), "error_message": f"Group {group_id} not found.",
                    "group_id": group_id, "group_state": "", "group_epoch": 0, "assignment_epoch": 0,
                    "assignor_name": "", "members": [], "authorized_operations": INT32_MIN}

        def named(assignment: Assignment) -> dict:
            return {"topic_partitions": [
                {"topic_id": tid, "topic_name": topics_by_id.get(tid, ""), "partitions": sorted(parts)}
                for tid, parts in sorted(assignment.items()) if parts]}

        members = [{
            "member_id": m.member_id, "instance_id": m.instance_id, "rack_id": m.rack_id,
            "member_epoch": m.member_epoch, "client_id": m.client_id, "client_host": m.client_host,
            "subscribed_topic_names": list(m.subscribed_topic_names),
            "subscribed_topic_regex": m.subscribed_topic_regex,
            "assignment": named(m.assigned), "target_assignment": named(group.target.get(m.member_id, {})),
        } for m in group.members.values()]
        return {"error_code": 0, "error_message": None, "group_id": group_id, "group_state": group.state.value,
                "group_epoch": group.group_epoch, "assignment_epoch": group.assignment_epoch,
                "assignor_name": self.assignor_name(group), "members": members,
                "authorized_operations": operations if include_authorized_operations else INT32_MIN}

    def validate_offset_commit(self, group: ConsumerGroup, member_id: str, member_epoch: int,
                               api_version: int) -> None:
        if member_epoch < 0 and not group.members:
            return
        member = group.members.get(member_id)
        if member is None:
            raise HeartbeatError(E.UNKNOWN_MEMBER_ID)
        if api_version < 9:
            raise HeartbeatError(E.UNSUPPORTED_VERSION)
        if member_epoch != member.member_epoch:
            raise HeartbeatError(E.STALE_MEMBER_EPOCH)

    def validate_offset_fetch(self, group: ConsumerGroup, member_id: str | None, member_epoch: int) -> None:
        if member_id is None and member_epoch < 0:
            return
        member = group.members.get(member_id or "")
        if member is None:
            raise HeartbeatError(E.UNKNOWN_MEMBER_ID)
        if member_epoch != member.member_epoch:
            raise HeartbeatError(E.STALE_MEMBER_EPOCH)

    def leave_by_classic_request(self, group: ConsumerGroup, member_id: str, instance_id: str | None) -> int:
        """A classic LeaveGroup naming a member of a consumer group (admin removeMembersFromConsumerGroup)."""
        if instance_id is not None:
            member = group.static_member(instance_id)
            if member is None:
                return int(E.UNKNOWN_MEMBER_ID)
            if member_id and member.member_id != member_id:
                return int(E.FENCED_INSTANCE_ID)
        else:
            member = group.members.get(member_id)
            if member is None:
                return int(E.UNKNOWN_MEMBER_ID)
        self.fence(group, member.member_id)
        return 0

    def delete(self, group_id: str) -> None:
        group = self.groups.pop(group_id)
        for mid in list(group.members):
            self._cancel_timers(group_id, mid)
        old_state = group.state
        group.dead = True
        log.info("consumer_group_deleted", group=group_id)
        self._note_state(group, old_state)
        self._persist(group)


def _is_subset(owned: dict[bytes, set[int]] | None, assigned: Assignment) -> bool:
    if owned is None:
        return False
    return all(set(parts) <= set(assigned.get(tid, ())) for tid, parts in owned.items() if parts)
