"""Rebalances and session expiry of the modern groups (consumer groups of KIP-848, share groups, streams
groups), sent to Apache Kafka 4.4.0 and to kafkaemu and compared field by field
(integration/differential/).

Both brokers run with the shortest group sessions a test can keep alive (the same settings on each:
``QUICK``), so that a member that stops heartbeating expires in seconds. Each scenario drives its
members as a client does: every heartbeat reports what the member owns (the last assignment it was
given), and between the steps it compares it heartbeats every live member until the group has settled
(its describe shows the group Stable and every member holding its target), so what is recorded is
where both brokers have arrived, not how fast. The steps: a member joins; a second joins, and a
partition moves to it by revocation first (the owner is asked to give it up, the newcomer waits at
the new epoch, then gets it); a member leaves; a member's session expires; the expired member's next
heartbeat; a fenced epoch; describe after each."""
from __future__ import annotations

import time
import uuid
from dataclasses import dataclass, field

import pytest

from kafkaemu.protocol.api_keys import ApiKey as K
from kafkaemu.protocol.errors import ErrorCode as E

from .differential import prepare as p
from .differential.fixtures import differential_pair

SESSION_MS, HEARTBEAT_MS = "2000", "500"
QUICK = {
    **{f"group.{kind}.{name}": value for kind in ("consumer", "share", "streams")
       for name, value in (("min.session.timeout.ms", SESSION_MS), ("session.timeout.ms", SESSION_MS),
                           ("min.heartbeat.interval.ms", HEARTBEAT_MS), ("heartbeat.interval.ms", HEARTBEAT_MS))},
    "group.streams.initial.rebalance.delay.ms": "0",
}
PARTITIONS = 4


@pytest.fixture(scope="module")
def quick():
    """This module's own Kafka and kafkaemu, both with ``QUICK`` group sessions."""
    with differential_pair(settings=QUICK) as pair:
        yield pair


@dataclass
class Member:
    name: str
    member_id: str = field(default_factory=lambda: str(uuid.uuid4()))
    epoch: int = 0
    owned: list = field(default_factory=list)   # the last assignment given, as the wire carries it
    joined: bool = False


class Group:
    """A group of one kind (``consumer``, ``share``, ``streams``) and its members, driven as clients
    drive theirs."""

    HEARTBEAT = {"consumer": K.CONSUMER_GROUP_HEARTBEAT, "share": K.SHARE_GROUP_HEARTBEAT,
                 "streams": K.STREAMS_GROUP_HEARTBEAT}
    DESCRIBE = {"consumer": K.CONSUMER_GROUP_DESCRIBE, "share": K.SHARE_GROUP_DESCRIBE,
                "streams": K.STREAMS_GROUP_DESCRIBE}
    VERSION = {"consumer": 1, "share": 1, "streams": 0}

    def __init__(self, peer, kind: str, topic: str) -> None:
        self.peer, self.kind, self.topic = peer, kind, topic
        self.group = peer.name("g")
        self.members: dict[str, Member] = {}
        p.find_coordinator(peer, self.group)

    def _body(self, m: Member, epoch: int | None = None) -> dict:
        epoch = m.epoch if epoch is None else epoch
        joining = epoch == 0
        if self.kind == "consumer":
            return {"group_id": self.group, "member_id": m.member_id, "member_epoch": epoch,
                    "rebalance_timeout_ms": 30000, "subscribed_topic_names": [self.topic] if joining else None,
                    "server_assignor": None, "topic_partitions": [] if joining else
                    [{"topic_id": t.topic_id, "partitions": list(t.partitions)} for t in m.owned]}
        if self.kind == "share":
            return {"group_id": self.group, "member_id": m.member_id, "member_epoch": epoch,
                    "subscribed_topic_names": [self.topic] if joining else None}
        return {"group_id": self.group, "member_id": m.member_id, "member_epoch": epoch,
                "endpoint_information_epoch": 0, "rebalance_timeout_ms": 30000,
                "topology": p.topology(self.topic) if joining else None,
                "process_id": f"process-{m.name}" if joining else None,
                "active_tasks": [] if joining else
                [{"subtopology_id": t.subtopology_id, "partitions": list(t.partitions)} for t in m.owned],
                "standby_tasks": [], "warmup_tasks": [], "client_tags": [] if joining else None}

    def _owned(self, answer):
        if self.kind == "streams":
            return answer.active_tasks
        return answer.assignment.topic_partitions if answer.assignment is not None else None

    def beat(self, name: str, label: str | None = None, epoch: int | None = None):
        """One heartbeat of member ``name`` (recorded when ``label``); the member takes what it is given."""
        m = self.members[name]
        key, version = self.HEARTBEAT[self.kind], self.VERSION[self.kind]
        body = self._body(m, epoch)
        answer = self.peer.call(label, key, version, body) if label else self.peer.send(key, version, body)
        if answer.error_code == E.NONE and epoch is None:
            m.epoch = answer.member_epoch
            owned = self._owned(answer)
            if owned is not None:
                m.owned = owned
        return answer

    def join(self, name: str, label: str):
        self.members[name] = Member(name)
        answer = self.peer.until(self.HEARTBEAT[self.kind], self.VERSION[self.kind], self._body(self.members[name]),
                                 lambda a: a.error_code not in p.LOADING, label=label)
        m = self.members[name]
        m.member_id = answer.member_id or m.member_id
        m.epoch = answer.member_epoch
        m.owned = self._owned(answer) or []
        return answer

    def leave(self, name: str, label: str):
        answer = self.beat(name, label, epoch=-1)
        del self.members[name]
        return answer

    def describe(self, label: str | None = None):
        key = self.DESCRIBE[self.kind]
        body = {"group_ids": [self.group], "include_authorized_operations": False}
        answer = self.peer.call(label, key, self.VERSION[self.kind], body) if label else \
            self.peer.send(key, self.VERSION[self.kind], body)
        return answer.groups[0]

    def _settled(self) -> bool:
        described = self.describe()
        if described.group_state != "Stable" or len(described.members) != len(self.members):
            return False
        by_id = {m.member_id: m for m in self.members.values()}
        given = set()
        for member in described.members:
            given |= (_tasks(member.assignment.active_tasks) if self.kind == "streams" else
                      _partitions(member.assignment.topic_partitions))
        if len(given) != PARTITIONS:   # all assigned (Kafka assigns a share group's partitions once their
            return False               # share-group state is initialized, a moment after the join)
        for member in described.members:
            mine = by_id.get(member.member_id)
            if mine is None or mine.epoch != described.group_epoch:
                return False
            if self.kind == "streams":
                given = _tasks(member.assignment.active_tasks)
                if given != _tasks(member.target_assignment.active_tasks) or given != _tasks(mine.owned):
                    return False
            elif _partitions(member.assignment.topic_partitions) != _partitions(mine.owned):
                return False
        return True

    def settle(self, *, keep_quiet: tuple[str, ...] = (), until=None, timeout_s: float = 60) -> None:
        """Heartbeat every member (but ``keep_quiet``) until the group has settled, or until ``until()``."""
        done = until or self._settled
        deadline = time.monotonic() + timeout_s
        while True:
            for name in list(self.members):
                if name not in keep_quiet:
                    self.beat(name)
            if done():
                return
            assert time.monotonic() < deadline, f"{self.peer.broker}: {self.kind} group did not settle: " \
                                                f"{self.describe()}"
            time.sleep(0.1)

    def beat_until(self, name: str, label: str, done) -> None:
        """Heartbeat ``name`` (and keep the others alive) until ``done(its answer)``; record that answer."""
        deadline = time.monotonic() + 60
        while True:
            answer = self.beat(name)
            if done(answer):
                self.peer.exchanges.append(type(self.peer.exchanges[-1])(
                    label, self.HEARTBEAT[self.kind], self.VERSION[self.kind], answer))
                return
            for other in self.members:
                if other != name:
                    self.beat(other)
            assert time.monotonic() < deadline, f"{self.peer.broker}: {label}: {answer}"
            time.sleep(0.1)


def _partitions(topic_partitions) -> set:
    return {(str(t.topic_id), q) for t in topic_partitions or [] for q in t.partitions}


def _tasks(tasks) -> set:
    return {(t.subtopology_id, q) for t in tasks or [] for q in t.partitions}


def _count(group: Group, answer) -> int:
    owned = group._owned(answer)
    if owned is None:
        return -1
    return len(_tasks(owned) if group.kind == "streams" else _partitions(owned))


def _rebalance_and_expiry(peer, kind: str) -> None:
    topic = peer.name("t")
    p.create_topic(peer, topic, PARTITIONS)
    g = Group(peer, kind, topic)

    g.join("a", "a joins")
    g.settle()
    g.describe("describe: a alone")

    g.join("b", "b joins")
    if kind != "share":
        # a is asked to give up partitions before b is given any
        g.beat_until("a", "a: asked to revoke", lambda x: x.error_code == E.NONE and 0 <= _count(g, x) < PARTITIONS)
        g.beat("b", "b: waits for a's partitions")
        g.beat("a", "a: has revoked")
        g.beat_until("b", "b: given the released partitions", lambda x: _count(g, x) > 0)
    g.settle()
    g.describe("describe: a and b")

    g.leave("b", "b leaves")
    g.settle()
    g.describe("describe: b left")

    g.join("c", "c joins")
    g.settle()
    g.describe("describe: a and c")

    g.settle(keep_quiet=("c",), until=lambda: len(g.describe().members) == 1)
    expired = g.members.pop("c")
    g.settle()
    g.describe("describe: c's session expired")
    g.members["c"] = expired
    g.beat("c", "c: heartbeat after its session expired")
    del g.members["c"]
    g.beat("a", "a: fenced epoch", epoch=g.members["a"].epoch + 7)
    g.leave("a", "a leaves")
    g.describe("describe: empty")


@pytest.mark.differential_only   # half a minute; every API it sends is covered by make test's scenarios
@pytest.mark.parametrize("kind", ["consumer", "share", "streams"])
def test_rebalance_and_expiry(quick, kind):
    quick.check(lambda peer: _rebalance_and_expiry(peer, kind), f"rebalance-{kind}")
