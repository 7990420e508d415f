"""A classic group: members, generation, leader, protocol vote and the state machine.

Mirrors Kafka's ClassicGroup, with its side of the Group interface (offset checks, subscriptions,
expiration, deletion); the classic manager drives it and owns timers and replies.
"""
from __future__ import annotations

import uuid
from typing import Callable

from ...protocol.errors import ErrorCode
from ..group_api import ExpirationBase, Group, GroupError, GroupType, Record, by_commit_timestamp
from .member import Member, Reply
from .records import encode_group_key
from .responses import join_response, sync_response
from .state import ClassicGroupState, check_transition
from .subscription import subscription_topics

CONSUMER_PROTOCOL_TYPE = "consumer"
E = ErrorCode
S = ClassicGroupState
# read on every offset commit: an Enum member is a class attribute lookup, ~20 times a local's in
# CPython 3.11 (EnumType's __getattr__ puts every lookup on the slow path)
_DEAD, _EMPTY, _COMPLETING_REBALANCE = S.DEAD, S.EMPTY, S.COMPLETING_REBALANCE


class ClassicGroup(Group):
    type = GroupType.CLASSIC

    def __init__(self, group_id: str, now_ms: int, state: ClassicGroupState = S.EMPTY,
                 on_transition: Callable[["ClassicGroup", ClassicGroupState, ClassicGroupState], None] | None = None
                 ) -> None:
        self.group_id = group_id
        self.state = state
        self.previous_state: ClassicGroupState | None = None
        self.current_state_timestamp_ms: int | None = now_ms
        self.generation_id = 0
        self.protocol_type: str | None = None
        self.protocol_name: str | None = None
        self.leader_id: str | None = None
        self.members: dict[str, Member] = {}            # insertion ordered, as the leader fallback
        self.static_members: dict[str, str] = {}        # group.instance.id -> member id
        self.pending_join_members: set[str] = set()     # dynamic members told MEMBER_ID_REQUIRED
        self.pending_sync_members: set[str] = set()
        self.supported_protocols: dict[str, int] = {}
        self.num_awaiting_join = 0
        self.new_member_added = False
        self.subscribed_topics: set[str] | None = None
        self._on_transition = on_transition

    # --- state -------------------------------------------------------------------------------
    def is_in(self, *states: ClassicGroupState) -> bool:
        return self.state in states

    def transition_to(self, target: ClassicGroupState, now_ms: int) -> None:
        check_transition(self.state, target)
        self.previous_state, self.state = self.state, target
        self.current_state_timestamp_ms = now_ms
        if self._on_transition is not None:
            self._on_transition(self, self.previous_state, target)

    def can_rebalance(self) -> bool:
        return S.PREPARING_REBALANCE.can_follow(self.state)

    def is_empty(self) -> bool:
        return self.state is S.EMPTY

    # --- members -----------------------------------------------------------------------------
    def member(self, member_id: str) -> Member:
        return self.members[member_id]

    def is_leader(self, member_id: str) -> bool:
        return self.leader_id == member_id

    def is_pending_member(self, member_id: str) -> bool:
        return member_id in self.pending_join_members

    def add_pending_member(self, member_id: str) -> None:
        self.pending_join_members.add(member_id)

    def static_member_id(self, instance_id: str) -> str | None:
        return self.static_members.get(instance_id)

    def generate_member_id(self, client_id: str, instance_id: str | None) -> str:
        return f"{instance_id if instance_id is not None else client_id}-{uuid.uuid4()}"

    def add(self, member: Member, reply: Reply | None = None) -> None:
        if member.group_instance_id is not None:
            if member.group_instance_id in self.static_members:
                raise ValueError(f"static member {member.group_instance_id} already in group {self.group_id}")
            self.static_members[member.group_instance_id] = member.member_id
        if not self.members:
            self.protocol_type = member.protocol_type
        if self.protocol_type != member.protocol_type:
            raise ValueError("the group's and the member's protocol types differ")
        if self.leader_id is None:
            self.leader_id = member.member_id
        self.members[member.member_id] = member
        self._count_protocols(member, +1)
        member.awaiting_join = reply
        if reply is not None:
            self.num_awaiting_join += 1
        self.pending_join_members.discard(member.member_id)

    def remove(self, member_id: str) -> Member | None:
        removed = self.members.pop(member_id, None)
        if removed is not None:
            self._count_protocols(removed, -1)
            if removed.is_awaiting_join:
                self.num_awaiting_join -= 1
            if removed.group_instance_id is not None:
                self.static_members.pop(removed.group_instance_id, None)
        if self.leader_id == member_id:
            self.leader_id = next(iter(self.members), None)
        self.pending_join_members.discard(member_id)
        self.pending_sync_members.discard(member_id)
        return removed

    def update_member(self, member: Member, protocols: list[tuple[str, bytes]], rebalance_timeout_ms: int,
                      session_timeout_ms: int, reply: Reply | None) -> None:
        self._count_protocols(member, -1)
        member.protocols = list(protocols)
        self._count_protocols(member, +1)
        member.rebalance_timeout_ms = rebalance_timeout_ms
        member.session_timeout_ms = session_timeout_ms
        previous = member.awaiting_join
        if previous is not None and reply is not None and previous is not reply:
            # A duplicate JoinGroup (kafkaemu pipelines requests, Kafka does not): answer the superseded
            # one so its connection's ordered replies cannot stall behind it.
            previous(join_response(E.REBALANCE_IN_PROGRESS, member.member_id))
        if reply is not None and not member.is_awaiting_join:
            self.num_awaiting_join += 1
        elif reply is None and member.is_awaiting_join:
            self.num_awaiting_join -= 1
        member.awaiting_join = reply

    def replace_static_member(self, instance_id: str, old_member_id: str, new_member_id: str) -> Member:
        """Give a restarted static member its old slot under a new id; the old id is fenced."""
        old = self.members.pop(old_member_id)
        self.complete_join(old, join_response(E.FENCED_INSTANCE_ID, old_member_id))
        self.complete_sync(old, sync_response(E.FENCED_INSTANCE_ID))
        new = Member(new_member_id, old.group_instance_id, old.client_id, old.client_host,
                     old.rebalance_timeout_ms, old.session_timeout_ms, old.protocol_type,
                     list(old.protocols), old.assignment)
        self.members[new_member_id] = new
        if self.leader_id == old_member_id:
            self.leader_id = new_member_id
        self.static_members[instance_id] = new_member_id
        self.pending_sync_members.discard(old_member_id)
        return new

    def validate_member(self, member_id: str, instance_id: str | None) -> None:
        if instance_id is not None:
            existing = self.static_members.get(instance_id)
            if existing is None:
                raise GroupError(E.UNKNOWN_MEMBER_ID)
            if existing != member_id:
                raise GroupError(E.FENCED_INSTANCE_ID)
        if member_id not in self.members:
            raise GroupError(E.UNKNOWN_MEMBER_ID)

    def not_yet_rejoined(self) -> list[Member]:
        return [m for m in self.members.values() if not m.is_awaiting_join]

    def has_all_members_joined(self) -> bool:
        return len(self.members) == self.num_awaiting_join and not self.pending_join_members

    def rebalance_timeout_ms(self) -> int:
        return max((m.rebalance_timeout_ms for m in self.members.values()), default=0)

    def maybe_elect_new_joined_leader(self) -> bool:
        """Keep a leader that rejoined, else pick a member that did; False if nobody rejoined."""
        if self.leader_id is None:
            return False
        if self.members[self.leader_id].is_awaiting_join:
            return True
        for m in self.members.values():
            if m.is_awaiting_join:
                self.leader_id = m.member_id
                return True
        return False

    # --- protocols ---------------------------------------------------------------------------
    def _count_protocols(self, member: Member, delta: int) -> None:
        for name in member.protocol_names():
            self.supported_protocols[name] = self.supported_protocols.get(name, 0) + delta

    def candidate_protocols(self) -> set[str]:
        n = len(self.members)
        return {name for name, count in self.supported_protocols.items() if count == n}

    def supports_protocols(self, protocol_type: str, protocol_names: list[str]) -> bool:
        if self.is_in(S.EMPTY):
            return bool(protocol_type) and bool(protocol_names)
        n = len(self.members)
        return (self.protocol_type == protocol_type
                and any(self.supported_protocols.get(name, 0) == n for name in protocol_names))

    def select_protocol(self) -> str:
        """Every member votes for its preferred candidate; most votes wins (ties: first counted)."""
        if not self.members:
            raise ValueError("cannot select a protocol for an empty group")
        candidates = self.candidate_protocols()
        votes: dict[str, int] = {}
        for m in self.members.values():
            choice = m.vote(candidates)
            votes[choice] = votes.get(choice, 0) + 1
        return max(votes.items(), key=lambda kv: kv[1])[0]

    def compute_subscribed_topics(self) -> set[str] | None:
        if self.protocol_type != CONSUMER_PROTOCOL_TYPE:
            return None
        if not self.members:
            return set()
        if self.protocol_name is None:
            return None
        topics: set[str] = set()
        try:
            for m in self.members.values():
                topics.update(subscription_topics(m.metadata(self.protocol_name)))
        except ValueError:
            return None
        return topics

    def is_subscribed_to_topic(self, topic: str) -> bool:
        if self.subscribed_topics is None:
            return self.protocol_type == CONSUMER_PROTOCOL_TYPE
        return topic in self.subscribed_topics

    def init_next_generation(self, now_ms: int) -> None:
        self.generation_id += 1
        if self.members:
            self.protocol_name = self.select_protocol()
            self.subscribed_topics = self.compute_subscribed_topics()
            self.transition_to(S.COMPLETING_REBALANCE, now_ms)
        else:
            self.protocol_name = None
            self.subscribed_topics = self.compute_subscribed_topics()
            self.transition_to(S.EMPTY, now_ms)
        self.pending_sync_members.clear()

    # --- the Group interface: offsets and deletion --------------------------------------------
    def validate_offset_commit(self, member_id: str, instance_id: str | None, generation_id: int,
                               api_version: int, is_transactional: bool = False) -> None:
        state = self.state   # the states as module names: an Enum member is a slow lookup (every commit)
        if state is _DEAD:
            raise GroupError(E.COORDINATOR_NOT_AVAILABLE)
        if generation_id < 0 and state is _EMPTY:
            return  # admin client or a consumer without group management
        if generation_id >= 0 or member_id or instance_id is not None:
            self.validate_member(member_id, instance_id)
            if generation_id != self.generation_id:
                raise GroupError(E.ILLEGAL_GENERATION)
        elif not is_transactional and state is not _EMPTY:
            raise GroupError(E.UNKNOWN_MEMBER_ID)   # TxnOffsetCommit before v3 carries no member
        if not is_transactional and state is _COMPLETING_REBALANCE:
            raise GroupError(E.REBALANCE_IN_PROGRESS)   # not enforced for transactional commits

    def validate_offset_fetch(self, member_id: str | None, member_epoch: int) -> None:
        if self.is_in(S.DEAD):
            raise GroupError(E.GROUP_ID_NOT_FOUND)

    def validate_offset_delete(self) -> None:
        if self.is_in(S.DEAD):
            raise GroupError(E.GROUP_ID_NOT_FOUND)
        if not self.is_in(S.EMPTY) and self.protocol_type != CONSUMER_PROTOCOL_TYPE:
            raise GroupError(E.NON_EMPTY_GROUP)   # a consumer-protocol group answers per subscribed topic

    def validate_delete_group(self) -> None:
        if self.is_in(S.DEAD):
            raise GroupError(E.GROUP_ID_NOT_FOUND)
        if not self.is_in(S.EMPTY):
            raise GroupError(E.NON_EMPTY_GROUP)

    def offset_expiration_base(self) -> ExpirationBase | None:
        if not self.protocol_type:
            return by_commit_timestamp               # a simple group: each offset ages from its commit
        if self.is_in(S.EMPTY):
            emptied = self.current_state_timestamp_ms
            return by_commit_timestamp if emptied is None else (lambda committed: emptied)
        if self.protocol_type == CONSUMER_PROTOCOL_TYPE and self.subscribed_topics is not None \
                and self.is_in(S.STABLE):
            return by_commit_timestamp               # offsets of topics it no longer consumes
        return None

    def tombstone_records(self) -> list[Record]:
        return [(encode_group_key(self.group_id), None)]

    # Read and set one by one: touching ``__dict__`` would make every later attribute read of the
    # group slower (CPython then keeps its attributes in a dict rather than inline).
    _STATE = ("state", "previous_state", "current_state_timestamp_ms", "generation_id", "protocol_type",
              "protocol_name", "leader_id", "num_awaiting_join", "new_member_added", "subscribed_topics")

    def snapshot(self) -> tuple:
        """Members are mutable: each is copied, with the containers that change in place."""
        return (tuple(getattr(self, name) for name in self._STATE),
                {mid: m.copy() for mid, m in self.members.items()}, dict(self.static_members),
                set(self.pending_join_members), set(self.pending_sync_members), dict(self.supported_protocols))

    def restore(self, snapshot: tuple) -> None:
        values, self.members, self.static_members, self.pending_join_members, self.pending_sync_members, \
            self.supported_protocols = snapshot
        for name, value in zip(self._STATE, values):
            setattr(self, name, value)

    # --- replies -----------------------------------------------------------------------------
    def complete_join(self, member: Member, response: dict) -> bool:
        reply = member.awaiting_join
        if reply is None:
            return False
        member.awaiting_join = None
        self.num_awaiting_join -= 1
        reply(response)
        return True

    def complete_sync(self, member: Member, response: dict) -> bool:
        reply = member.awaiting_sync
        if reply is None:
            return False
        member.awaiting_sync = None
        reply(response)
        return True

    def join_members_view(self) -> list[dict]:
        """What the leader's JoinGroup answer lists: every member's metadata for the chosen protocol."""
        return [{"member_id": m.member_id, "group_instance_id": m.group_instance_id,
                 "metadata": m.metadata(self.protocol_name)} for m in self.members.values()]

    def assignments(self) -> dict[str, bytes]:
        return {mid: m.assignment for mid, m in self.members.items()}
