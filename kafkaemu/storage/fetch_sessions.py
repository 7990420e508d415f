"""Incremental fetch sessions (KIP-227), as Kafka's FetchSessionCache keeps them.

A full fetch with epoch 0 creates a session holding the fetched partitions and their last fetch
parameters; the client then sends epoch 1, 2, ... listing only partitions whose fetch offset
changed (and ``forgotten`` ones to drop). The broker answers an incremental fetch with only the
partitions that have something new: records, an error, or a changed high watermark, last stable
offset or log start offset. Up to ``max_slots`` sessions are kept; when full, the least recently
used session idle for ``eviction_ms`` makes room, otherwise no session is created (id 0: the
client keeps sending full fetches).
"""
from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass


@dataclass(slots=True)
class SessionPartition:
    topic: str | None          # name (v7-12 sessions) or None when the session is by topic id
    topic_id: bytes | None
    partition: int
    fetch_offset: int
    partition_max_bytes: int
    current_leader_epoch: int = -1
    last_fetched_epoch: int = -1
    sent_hw: int | None = None       # what the last response carried, to detect changes
    sent_lso: int | None = None
    sent_log_start: int | None = None


@dataclass
class FetchSession:
    session_id: int
    epoch: int                       # the epoch the next request must carry
    partitions: "OrderedDict[tuple, SessionPartition]"
    by_topic_id: bool
    last_used_ms: int


class FetchSessionCache:
    def __init__(self, max_slots: int = 1000, eviction_ms: int = 120_000) -> None:
        self.max_slots = max_slots
        self.eviction_ms = eviction_ms
        self.sessions: "OrderedDict[int, FetchSession]" = OrderedDict()   # least recently used first

    def create(self, by_topic_id: bool, now_ms: int) -> FetchSession | None:
        if len(self.sessions) >= self.max_slots:
            oldest_id, oldest = next(iter(self.sessions.items()))
            if now_ms - oldest.last_used_ms < self.eviction_ms:
                return None
            del self.sessions[oldest_id]
        import secrets   # (hmac and hashlib with it: imported by the first session, not at start)
        session_id = 0
        while session_id == 0 or session_id in self.sessions:
            session_id = secrets.randbits(31)
        session = FetchSession(session_id, 1, OrderedDict(), by_topic_id, now_ms)
        self.sessions[session_id] = session
        return session

    def get(self, session_id: int, now_ms: int) -> FetchSession | None:
        session = self.sessions.get(session_id)
        if session is not None:
            session.last_used_ms = now_ms
            self.sessions.move_to_end(session_id)
        return session

    def remove(self, session_id: int) -> None:
        self.sessions.pop(session_id, None)
