"""Share sessions (Kafka's ShareSessionCache and SharePartitionManager.newContext): one per (node,
group, member), holding the partitions the member fetches from that node and the epoch its next
request must carry.

ShareFetch epoch 0 opens a session (replacing the member's old one; acknowledgements in it are
INVALID_REQUEST), -1 closes it (SHARE_SESSION_NOT_FOUND when there is none; partitions to fetch in
it are INVALID_REQUEST), any other epoch must match the session's (INVALID_SHARE_SESSION_EPOCH;
SHARE_SESSION_NOT_FOUND without a session) and moves it on by one (after 2^31-1 comes 1).
ShareAcknowledge never opens one: epoch 0 is INVALID_SHARE_SESSION_EPOCH; -1 closes it.

As Kafka's ShareSessionCache, a session belongs to the client connection that opened it: when that
connection drops, ``disconnected`` removes the session (its member's records are then released).
A session closed or replaced before its connection drops marks that connection's entry stale, so a
late disconnect never removes a newer session of the member opened over another connection.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ...protocol.errors import ErrorCode
from ..group_api import GroupError

E = ErrorCode
FINAL_EPOCH, INITIAL_EPOCH = -1, 0
TopicPartition = tuple[bytes, int]
SessionKey = tuple[int, str, str]   # node id, group id, member id
NO_CONNECTION = -1                  # a session opened outside any client connection


@dataclass
class ShareSession:
    key: SessionKey
    epoch: int = 1
    connection_id: int = NO_CONNECTION
    partitions: dict[TopicPartition, None] = field(default_factory=dict)   # ordered set

    def advance(self) -> None:
        self.epoch = 1 if self.epoch >= 0x7FFFFFFF else self.epoch + 1


class ShareSessionCache:
    def __init__(self) -> None:
        self.sessions: dict[SessionKey, ShareSession] = {}
        # the connection that opened each session: its key, and whether that session is gone (stale)
        self.by_connection: dict[int, tuple[SessionKey, bool]] = {}

    def for_fetch(self, key: SessionKey, epoch: int, fetch: list[TopicPartition], forget: list[TopicPartition],
                  has_acks: bool, connection_id: int = NO_CONNECTION) -> tuple[ShareSession | None, ShareSession | None]:
        """(the session the fetch uses, or None when it closes it; the session it replaced or closed,
        whose member's records are released). ``connection_id``: the client connection the request
        came on (a session opened now belongs to it). Raises GroupError for a bad epoch or request."""
        if epoch == FINAL_EPOCH:
            if fetch:
                raise GroupError(E.INVALID_REQUEST, "A share fetch closing its session cannot fetch.")
            closed = self._remove(key)
            if closed is None:
                raise GroupError(E.SHARE_SESSION_NOT_FOUND)
            return None, closed
        if epoch == INITIAL_EPOCH:
            if has_acks:
                raise GroupError(E.INVALID_REQUEST, "Acknowledge data present in the initial share fetch.")
            replaced = self._remove(key)
            session = self.sessions[key] = ShareSession(key, connection_id=connection_id,
                                                        partitions=dict.fromkeys(fetch))
            if connection_id != NO_CONNECTION:
                self.by_connection[connection_id] = (key, False)
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
            closed = self._remove(key)
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
            self._remove(key)

    def disconnected(self, connection_id: int) -> ShareSession | None:
        """The client connection ``connection_id`` dropped: the session it opened, removed, or None
        when it opened none or that session is gone already (Kafka's onDisconnect)."""
        entry = self.by_connection.pop(connection_id, None)
        if entry is None or entry[1]:
            return None
        return self._remove(entry[0])

    def _remove(self, key: SessionKey) -> ShareSession | None:
        session = self.sessions.pop(key, None)
        if session is not None:
            entry = self.by_connection.get(session.connection_id)
            if entry is not None:
                self.by_connection[session.connection_id] = (entry[0], True)
        return session
