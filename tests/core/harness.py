"""A manual-clock driver for the pure coordinator: requests in, replies (possibly parked) out."""
from __future__ import annotations

from dataclasses import fields

from kafkaemu.core.classic.settings import ClassicSettings
from kafkaemu.core.coordinator import CoordinatorSettings, GroupCoordinator
from kafkaemu.core.offsets.settings import OffsetsSettings
from kafkaemu.core.classic.requests import Heartbeat, JoinGroup, LeaveGroup, LeavingMember, SyncGroup
from kafkaemu.core.offsets.requests import CommitPartition, OffsetCommit
from kafkaemu.protocol.errors import ErrorCode as E

PROTOCOLS = [("range", b"range-meta")]


def coordinator_settings(**settings) -> CoordinatorSettings:
    """CoordinatorSettings with these classic-group and committed-offsets settings, each by its
    name in ClassicSettings or OffsetsSettings (retention_minutes may be a fraction: a test's
    retention in milliseconds / 60000)."""
    classic = {f.name for f in fields(ClassicSettings)}
    return CoordinatorSettings(
        classic=ClassicSettings(**{k: v for k, v in settings.items() if k in classic}),
        offsets=OffsetsSettings(**{k: v for k, v in settings.items() if k not in classic}))


class RecordingLog:
    """A __consumer_offsets sink that keeps the records it is given, and refuses them with ``fail``
    (an AppendError) while that is set."""

    def __init__(self) -> None:
        self.records: list = []
        self.fail = None

    def __call__(self, partition, records, now_ms, **_) -> None:
        if self.fail is not None:
            raise self.fail
        self.records.extend(records)


class Reply:
    """Collects what a parked-or-immediate reply callback receives."""

    def __init__(self) -> None:
        self.responses: list[dict] = []

    def __call__(self, response: dict) -> None:
        self.responses.append(response)

    @property
    def parked(self) -> bool:
        return not self.responses

    @property
    def value(self) -> dict:
        assert len(self.responses) == 1, f"expected exactly one reply, got {self.responses}"
        return self.responses[0]

    @property
    def error(self) -> E:
        return E(self.value["error_code"])


class Harness:
    def __init__(self, **settings) -> None:
        self.records: list[tuple[int, list[tuple[bytes, bytes | None]], int]] = []
        self.producers: list[int] = []
        self.now = 1_000_000
        # Joins complete at once unless a test asks for the initial delay (the broker's default,
        # 150 ms, has its own tests in classic/test_timeouts.py).
        settings.setdefault("initial_rebalance_delay_ms", 0)
        self.c = GroupCoordinator(coordinator_settings(**settings), sink=self._sink, now_ms=self.now)

    def _sink(self, partition, records, now_ms, producer_id: int = -1, producer_epoch: int = -1) -> None:
        self.records.append((partition, list(records), now_ms))
        self.producers.append(producer_id)   # the producer of each transactional batch, -1 otherwise

    def all_records(self) -> list[tuple[bytes, bytes | None]]:
        return [r for _, recs, _ in self.records for r in recs]

    def advance(self, ms: int) -> None:
        self.now += ms
        self.c.tick(self.now)

    def group(self, gid: str = "g"):
        return self.c.classic.groups.get(gid)

    def state(self, gid: str = "g") -> str:
        g = self.group(gid)
        return g.state.value if g else "none"

    # -- requests ----------------------------------------------------------------------------
    def join(self, gid: str = "g", member_id: str = "", *, protocols=None, client_id: str = "C1",
             session: int = 10000, rebalance: int = 30000, instance: str | None = None, version: int = 9,
             protocol_type: str = "consumer") -> Reply:
        reply = Reply()
        self.c.join_group(self.now, JoinGroup(gid, member_id, protocol_type, list(PROTOCOLS if protocols is None else protocols), session,
                                              rebalance, instance, client_id, "/127.0.0.1", version), reply)
        return reply

    def join_new(self, gid: str = "g", **kw) -> tuple[str, Reply]:
        """A v4+ dynamic join: MEMBER_ID_REQUIRED, then the rejoin with the given id (maybe parked)."""
        first = self.join(gid, **kw)
        assert first.error == E.MEMBER_ID_REQUIRED
        member_id = first.value["member_id"]
        return member_id, self.join(gid, member_id, **kw)

    def sync(self, gid: str, member_id: str, generation: int, assignments=None, *, instance=None,
             protocol_type=None, protocol_name=None) -> Reply:
        reply = Reply()
        self.c.sync_group(self.now, SyncGroup(gid, generation, member_id, dict(assignments or {}), instance,
                                              protocol_type, protocol_name), reply)
        return reply

    def heartbeat(self, gid: str, member_id: str, generation: int, instance=None) -> E:
        return E(self.c.heartbeat(self.now, Heartbeat(gid, generation, member_id, instance))["error_code"])

    def leave(self, gid: str, *members: str | tuple[str, str | None]) -> dict:
        who = [LeavingMember(*m) if isinstance(m, tuple) else LeavingMember(m) for m in members]
        return self.c.leave_group(self.now, LeaveGroup(gid, who))

    def commit(self, gid: str, offsets: dict[tuple[str, int], int], *, member_id: str = "", generation: int = -1,
               instance=None, metadata: str = "", version: int = 9, retention: int = -1, exists=None) -> dict:
        topics: dict[str, list[CommitPartition]] = {}
        for (topic, partition), offset in offsets.items():
            topics.setdefault(topic, []).append(CommitPartition(partition, offset, -1, metadata))
        return self.c.commit_offsets(self.now, OffsetCommit(gid, list(topics.items()), generation, member_id, instance,
                                                            retention, version), exists)

    def commit_errors(self, *args, **kw) -> set[E]:
        resp = self.commit(*args, **kw)
        return {E(p["error_code"]) for t in resp["topics"] for p in t["partitions"]}

    def fetch(self, gid: str, topics=None) -> dict[tuple[str, int], int]:
        resp = self.c.fetch_offsets(self.now, gid, topics)
        return {(t["name"], p["partition_index"]): p["committed_offset"] for t in resp["topics"] for p in t["partitions"]}

    # -- whole rounds --------------------------------------------------------------------------
    def stable_group(self, gid: str = "g", n: int = 2, **kw) -> list[str]:
        """n dynamic members joined and synced (the leader assigns b"a-<i>"); returns member ids, leader first."""
        ids = []
        for i in range(n):
            mid, reply = self.join_new(gid, client_id=f"C{i + 1}", **kw)
            ids.append(mid)
        # With the default zero initial delay, the first member completed a one-member generation at once
        # and later joiners rebalanced; finish whatever rebalance is pending by letting everyone rejoin.
        return self.rejoin_all_and_sync(gid, ids, **kw)

    def rejoin_all_and_sync(self, gid: str, ids: list[str], **kw) -> list[str]:
        group = self.group(gid)
        replies = {}
        for i, mid in enumerate(ids):
            if group.members[mid].is_awaiting_join:
                continue
            replies[mid] = self.join(gid, mid, client_id=f"C{i + 1}", **kw)
        assert self.state(gid) == "CompletingRebalance", self.state(gid)
        leader = group.leader_id
        gen = group.generation_id
        syncs = {mid: self.sync(gid, mid, gen) for mid in ids if mid != leader}
        syncs[leader] = self.sync(gid, leader, gen, {mid: f"a-{mid}".encode() for mid in ids})
        assert self.state(gid) == "Stable"
        for mid, s in syncs.items():
            assert s.error == E.NONE and s.value["assignment"] == f"a-{mid}".encode()
        return [leader] + [m for m in ids if m != leader]
