"""Share sessions (Kafka's ShareSessionCache and SharePartitionManager.newContext): one per (node,
group, member), holding the partitions the member fetches from that node and the epoch its next
request must carry.

ShareFetch epoch 0 opens a session (replacing the member's old one; acknowledgements in it are
INVALID_REQUEST), -1 closes it (SHARE_SESSION_NOT_FOUND when there is none; partitions to fetch in
it are INVALID_REQUEST), any other epoch must match the session's (INVALID_SHARE_SESSION_EPOCH;
SHARE_SESSION_NOT_FOUND without a session) and moves it on by one (after 2^31-1 comes 1).
ShareAcknowledge never opens one: epoch 0 is INVALID_SHARE_SESSION_EPOCH; -1 closes it.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ...protocol.errors import ErrorCode
from ..group_api import GroupError

E = ErrorCode
FINAL_EPOCH, INITIAL_EPOCH = -1, 0
TopicPartition = tuple[bytes, int]
SessionKey = tuple[int, str, str]   # node id, group id, member id


@dataclass
class ShareSession:
    key: SessionKey
    epoch: int = 1
    partitions: dict[TopicPartition, None] = field(default_factory=dict)   # ordered set

    def advance(self) -> None:
        self.epoch = 1 if self.epoch >= 0x7FFFFFFF else self.epoch + 1


class ShareSessionCache:
    def __init__(self) -> None:
        self.sessions: dict[SessionKey, ShareSession] = {}

    def for_fetch(self, key: SessionKey, epoch: int, fetch: list[TopicPartition], forget: list[TopicPartition],
                  has_acks: bool) -> tuple[ShareSession | None, ShareSession | None]:
        """(the session the fetch uses, or None when it closes it; the session it replaced or closed,
        whose member's records are released). Raises GroupError for a bad epoch or request."""
        if epoch == FINAL_EPOCH:
            if fetch:
                raise GroupError(E.INVALID_REQUEST, "A share fetch closing its session cannot fetch.")
            closed = self.sessions.pop(key, None)
            if closed is None:
                raise GroupError(E.SHARE_SESSION_NOT_FOUND)
            return None, closed
        if epoch == INITIAL_EPOCH:
            if has_acks:
                raise GroupError(E.INVALID_REQUEST, "Acknowledge data present in the initial share fetch.")
            replaced = self.sessions.pop(key, None)
            session = self.sessions[key] = ShareSession(key, partitions=dict.fromkeys(fetch))
            return session, replaced
        if epoch < FINAL_EPOCH:
            raise GroupError(E.INVALID_SHARE_SESSION_EPOCH)
        session = self._current(key, epoch)
        for tp in fetch:
            session.partitions[tp] = None
        for tp in forget:
            session.partitions.pop(tp, None)
        session.advance()
        return session, None

    def for_acknowledge(self, key: SessionKey, epoch: int) -> ShareSession | None:
        """The session a ShareAcknowledge belongs to; with epoch -1 it is closed and returned."""
        if epoch == INITIAL_EPOCH or epoch < FINAL_EPOCH:
            raise GroupError(E.INVALID_SHARE_SESSION_EPOCH)
        if epoch == FINAL_EPOCH:
            closed = self.sessions.pop(key, None)
            if closed is None:
                raise GroupError(E.SHARE_SESSION_NOT_FOUND)
            return closed
        session = self._current(key, epoch)
        session.advance()
        return session

    def _current(self, key: SessionKey, epoch: int) -> ShareSession:
        session = self.sessions.get(key)
        if session is None:
            raise GroupError(E.SHARE_SESSION_NOT_FOUND)
        if session.epoch != epoch:
            raise GroupError(E.INVALID_SHARE_SESSION_EPOCH)
        return session

    def partitions_of(self, group_id: str, member_id: str) -> set[TopicPartition]:
        """The partitions of every open share session of the member (on any node)."""
        return {tp for key, session in self.sessions.items() if key[1] == group_id and key[2] == member_id
                for tp in session.partitions}

    def drop_member(self, group_id: str, member_id: str) -> None:
        """Forget every session of a member whose group session timed out (it will not close them)."""
        for key in [k for k in self.sessions if k[1] == group_id and k[2] == member_id]:
            del self.sessions[key]
