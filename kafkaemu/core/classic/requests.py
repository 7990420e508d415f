"""The classic group requests: one dataclass per request, already normalised to the newest version.

Handlers build these from decoded requests; tests build them directly.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ...protocol.errors import ErrorCode


@dataclass
class JoinGroup:
    group_id: str
    member_id: str
    protocol_type: str
    protocols: list[tuple[str, bytes]]
    session_timeout_ms: int = 10000
    rebalance_timeout_ms: int = 300000
    group_instance_id: str | None = None
    client_id: str = "client"
    client_host: str = "/127.0.0.1"
    api_version: int = 9
    reason: str | None = None


def distinct_protocols(protocols: list[tuple[str, bytes]]) -> list[tuple[str, bytes]]:
    """A JoinGroup's protocols with each name once, the first listing winning (its place and metadata).

    Kafka keys JoinGroup protocols by name, but its collection is a multiset: a name listed twice
    is counted twice, so no protocol is ever supported by every member and the group cannot complete
    its rebalance. kafkaemu keeps the first of each name instead, so such a member simply joins.
    """
    seen: set[str] = set()
    out = []
    for name, metadata in protocols:
        if name not in seen:
            seen.add(name)
            out.append((name, metadata))
    return out


@dataclass
class SyncGroup:
    group_id: str
    generation_id: int
    member_id: str
    assignments: dict[str, bytes] = field(default_factory=dict)
    group_instance_id: str | None = None
    protocol_type: str | None = None
    protocol_name: str | None = None


@dataclass
class Heartbeat:
    group_id: str
    generation_id: int
    member_id: str
    group_instance_id: str | None = None


@dataclass
class LeavingMember:
    member_id: str
    group_instance_id: str | None = None
    reason: str | None = None


@dataclass
class LeaveGroup:
    group_id: str
    members: list[LeavingMember]


def unknown_members_left(req: LeaveGroup) -> dict:
    """The LeaveGroup answer when no classic or consumer group is there to leave (Kafka's
    classicGroupLeave throws UnknownMemberIdException, which GroupCoordinatorService answers): no
    top-level error, every member UNKNOWN_MEMBER_ID."""
    return {"error_code": 0, "members": [
        {"member_id": who.member_id, "group_instance_id": who.group_instance_id,
         "error_code": int(ErrorCode.UNKNOWN_MEMBER_ID)} for who in req.members]}
