"""A classic group member: identity, timeouts, supported protocols, assignment, parked replies."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

Reply = Callable[[dict], None]


@dataclass
class Member:
    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    rebalance_timeout_ms: int
    session_timeout_ms: int
    protocol_type: str
    protocols: list[tuple[str, bytes]]          # (name, metadata) in the member's preference order
    assignment: bytes = b""
    awaiting_join: Reply | None = field(default=None, repr=False)
    awaiting_sync: Reply | None = field(default=None, repr=False)
    # A new member has not received its first JoinGroup answer; its heartbeat timer is the join timeout.
    is_new: bool = False

    def copy(self) -> "Member":
        return Member(self.member_id, self.group_instance_id, self.client_id, self.client_host,
                      self.rebalance_timeout_ms, self.session_timeout_ms, self.protocol_type, self.protocols,
                      self.assignment, self.awaiting_join, self.awaiting_sync, self.is_new)

    @property
    def is_static(self) -> bool:
        return self.group_instance_id is not None

    @property
    def is_awaiting_join(self) -> bool:
        return self.awaiting_join is not None

    @property
    def is_awaiting_sync(self) -> bool:
        return self.awaiting_sync is not None

    def protocol_names(self) -> list[str]:
        return [name for name, _ in self.protocols]

    def metadata(self, protocol: str | None) -> bytes:
        for name, meta in self.protocols:
            if name == protocol:
                return meta
        raise KeyError(f"member {self.member_id} does not support protocol {protocol!r}")

    def matches(self, protocols: list[tuple[str, bytes]]) -> bool:
        return list(protocols) == list(self.protocols)

    def vote(self, candidates: set[str]) -> str:
        """The member's most preferred protocol among ``candidates``."""
        for name, _ in self.protocols:
            if name in candidates:
                return name
        raise ValueError(f"member {self.member_id} supports none of {sorted(candidates)}")

    def has_satisfied_heartbeat(self) -> bool:
        # New members may expire while parked in JoinGroup; others waiting on a rebalance are alive.
        if self.is_new:
            return False
        return self.is_awaiting_join or self.is_awaiting_sync
