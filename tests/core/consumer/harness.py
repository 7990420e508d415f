"""A manual-clock driver for KIP-848 consumer groups, with a model client that owns what it is told."""
from __future__ import annotations

from kafkaemu.core.consumer.requests import ConsumerHeartbeat
from kafkaemu.core.classic.settings import ClassicSettings
from kafkaemu.core.consumer.settings import ConsumerSettings
from kafkaemu.core.modern import TopicMeta
from kafkaemu.core.coordinator import CoordinatorSettings, GroupCoordinator
from kafkaemu.core.ports import GroupPorts
from kafkaemu.protocol.errors import ErrorCode as E


def tid(name: str) -> bytes:
    return (name.encode() * 16)[:16]


class ConsumerHarness:
    def __init__(self, topics: dict[str, int] | None = None, may_describe=None, **consumer_settings) -> None:
        self.now = 1_000_000
        self.records: list = []
        self.c = GroupCoordinator(CoordinatorSettings(classic=ClassicSettings(initial_rebalance_delay_ms=0),
                                                      consumer=ConsumerSettings(**consumer_settings)),
                                  sink=lambda p, recs, now, **_: self.records.extend(recs), now_ms=self.now,
                                  ports=GroupPorts(may_describe=may_describe))
        self.topics: dict[str, TopicMeta] = {}
        for name, n in (topics or {"t": 6}).items():
            self.set_topic(name, n)

    def set_topic(self, name: str, partitions: int) -> None:
        self.topics[name] = TopicMeta(name, tid(name), partitions)

    def advance(self, ms: int) -> None:
        self.now += ms
        self.c.tick(self.now)

    def group(self, gid: str = "g"):
        return self.c.consumer.groups.get(gid)

    def state(self, gid: str = "g") -> str:
        g = self.group(gid)
        return g.state.value if g else "none"

    def heartbeat(self, gid: str = "g", member_id: str = "m1", epoch: int = 0, *, topics=None, regex=None,
                  owned: dict[bytes, set[int]] | None = None, instance: str | None = None,
                  assignor: str | None = None, rebalance: int = -1, version: int = 1,
                  client_id: str = "C1", principal: str = "User:ANONYMOUS") -> dict:
        if epoch == 0:
            owned = {} if owned is None else owned
            rebalance = 30000 if rebalance == -1 else rebalance
            if topics is None and regex is None:
                topics = ["t"]
        req = ConsumerHeartbeat(gid, member_id, epoch, instance_id=instance, rebalance_timeout_ms=rebalance,
                                subscribed_topic_names=topics, subscribed_topic_regex=regex,
                                server_assignor=assignor, owned=owned, client_id=client_id,
                                client_host="/127.0.0.1", api_version=version, principal=principal,
                                principal_host="127.0.0.1")
        return self.c.consumer_group_heartbeat(self.now, req, dict(self.topics))


class Client:
    """What a consumer does: heartbeat with what it owns; take what it is given (revoking at once)."""

    def __init__(self, h: ConsumerHarness, member_id: str, *, gid: str = "g", topics=("t",), regex=None,
                 instance: str | None = None, assignor: str | None = None,
                 principal: str = "User:ANONYMOUS") -> None:
        self.h, self.member_id, self.gid, self.principal = h, member_id, gid, principal
        self.topics, self.regex, self.instance, self.assignor = list(topics) if topics else None, regex, instance, assignor
        self.epoch = 0
        self.owned: dict[bytes, set[int]] = {}
        self.last: dict = {}

    def beat(self) -> dict:
        if self.epoch == 0:
            r = self.h.heartbeat(self.gid, self.member_id, 0, topics=self.topics, regex=self.regex,
                                 instance=self.instance, assignor=self.assignor, principal=self.principal)
        else:
            r = self.h.heartbeat(self.gid, self.member_id, self.epoch, owned=self.owned, instance=self.instance,
                                 principal=self.principal)
        self.last = r
        if r["error_code"] == E.NONE:
            self.epoch = r["member_epoch"]
            if r["assignment"] is not None:
                self.owned = {t["topic_id"]: set(t["partitions"]) for t in r["assignment"]["topic_partitions"]}
        return r

    def partitions(self, topic: str = "t") -> set[int]:
        return set(self.owned.get(tid(topic), set()))

    def leave(self, epoch: int = -1) -> dict:
        r = self.h.heartbeat(self.gid, self.member_id, epoch, instance=self.instance)
        if r["error_code"] == E.NONE:
            self.owned = {}
            self.epoch = 0
        return r


def settle(clients: list[Client], rounds: int = 10) -> None:
    for _ in range(rounds):
        for c in clients:
            c.beat()
