"""Online migration between classic and consumer groups (group.consumer.migration.policy, Kafka
4.x's default bidirectional), on a manual clock: a consumer-protocol member joining a classic group
upgrades it, its classic members are served through JoinGroup/SyncGroup/Heartbeat, and the group
goes back to classic when the last consumer-protocol member leaves."""
from __future__ import annotations

from kafkaemu.core.classic.requests import Heartbeat, JoinGroup, SyncGroup
from kafkaemu.core.consumer_protocol import decode_assignment
from kafkaemu.core.group_api import GroupType
from kafkaemu.core.record_format import versioned
from kafkaemu.protocol.catalog import catalog
from kafkaemu.protocol.errors import ErrorCode as E
from tests.core.consumer.harness import Client, ConsumerHarness


def subscription(topics=("t",), owned=None, version=1) -> bytes:
    body = catalog().data("ConsumerProtocolSubscription", version).encode({
        "topics": list(topics), "user_data": None,
        "owned_partitions": [{"topic": t, "partitions": sorted(ps)} for t, ps in (owned or {}).items()]})
    return versioned(version, body)


def assignment(partitions, topic="t") -> bytes:
    return versioned(1, catalog().data("ConsumerProtocolAssignment", 1).encode(
        {"assigned_partitions": [{"topic": topic, "partitions": sorted(partitions)}], "user_data": None}))


class ClassicClient:
    """A classic (eager range) consumer: join, sync, heartbeat; owns what SyncGroup gives it.
    Replies parked by the coordinator land in ``replies`` when they are released."""

    def __init__(self, h: ConsumerHarness, gid: str = "g") -> None:
        self.h, self.gid = h, gid
        self.member_id, self.generation, self.owned = "", -1, set()
        self.replies: list[dict] = []

    def join(self) -> dict:
        """Send JoinGroup (again with the id handed out); the answer, or {} while it is parked."""
        self.replies = []
        meta = subscription(owned={"t": self.owned} if self.owned else None)
        self.h.c.join_group(self.h.now, JoinGroup(self.gid, self.member_id, "consumer", [("range", meta)],
                                                  session_timeout_ms=10000, rebalance_timeout_ms=30000,
                                                  api_version=5), self.replies.append, dict(self.h.topics))
        if self.replies and self.replies[-1]["error_code"] == E.MEMBER_ID_REQUIRED:
            self.member_id = self.replies[-1]["member_id"]
            return self.join()
        return self.joined()

    def joined(self) -> dict:
        reply = self.replies[-1] if self.replies else {}
        if reply.get("error_code") == E.NONE:
            self.generation = reply["generation_id"]
        return reply

    def sync(self, assignments: dict[str, bytes] | None = None) -> dict:
        replies: list = []
        self.h.c.sync_group(self.h.now, SyncGroup(self.gid, self.generation, self.member_id, dict(assignments or {}),
                                                  None, "consumer", "range"), replies.append)
        reply = replies[-1] if replies else {}
        if reply.get("error_code") == E.NONE:
            parsed = decode_assignment(reply["assignment"])
            self.owned = {p for tp in parsed.assigned_partitions for p in tp.partitions}
        return reply

    def heartbeat(self) -> E:
        return E(self.h.c.heartbeat(self.h.now, Heartbeat(self.gid, self.generation, self.member_id))["error_code"])


def classic_group_of_two(h: ConsumerHarness) -> tuple[ClassicClient, ClassicClient]:
    a, b = ClassicClient(h), ClassicClient(h)
    assert a.join()["error_code"] == E.NONE and a.replies[-1]["leader"] == a.member_id
    assert b.join() == {}                                   # parked: a rebalance for a to rejoin
    assert a.heartbeat() == E.REBALANCE_IN_PROGRESS
    assert a.join()["error_code"] == E.NONE and b.joined()["error_code"] == E.NONE
    # the leader's SyncGroup is written, then b's is answered from the stored assignment
    b_sync: list = []
    h.c.sync_group(h.now, SyncGroup("g", b.generation, b.member_id, {}, None, "consumer", "range"), b_sync.append)
    a.sync({a.member_id: assignment({0, 1, 2}), b.member_id: assignment({3, 4, 5})})
    b.owned = {p for tp in decode_assignment(b_sync[-1]["assignment"]).assigned_partitions for p in tp.partitions}
    assert (a.owned, b.owned) == ({0, 1, 2}, {3, 4, 5})
    return a, b


def settle(h: ConsumerHarness, classic: list[ClassicClient], modern: list[Client], rounds: int = 8) -> None:
    for _ in range(rounds):
        for c in classic:
            if c.heartbeat() == E.REBALANCE_IN_PROGRESS:
                c.owned = set()   # eager: revoke everything before rejoining
                assert c.join()["error_code"] == E.NONE
                assert c.sync()["error_code"] == E.NONE
        for m in modern:
            m.beat()
        h.advance(100)


def test_a_consumer_protocol_member_upgrades_a_classic_group_and_shares_it():
    h = ConsumerHarness()
    a, b = classic_group_of_two(h)
    generation = a.generation
    modern = Client(h, "m1")
    r = modern.beat()
    assert r["error_code"] == E.NONE
    group = h.group()
    assert group is not None and group.type is GroupType.CONSUMER
    assert group.members[a.member_id].uses_classic_protocol and group.members[a.member_id].member_epoch == generation
    settle(h, [a, b], [modern])
    owned = [a.owned, b.owned, modern.partitions()]
    assert sorted(p for o in owned for p in o) == list(range(6)) and all(owned)
    assert h.state() == "Stable"
    # a classic member's heartbeat at an old generation is ILLEGAL_GENERATION, an unknown one UNKNOWN_MEMBER_ID
    assert E(h.c.heartbeat(h.now, Heartbeat("g", a.generation - 1, a.member_id))["error_code"]) == \
        E.ILLEGAL_GENERATION
    assert E(h.c.heartbeat(h.now, Heartbeat("g", 1, "nobody"))["error_code"]) == E.UNKNOWN_MEMBER_ID
    # a consumer-protocol member cannot use the classic heartbeat
    assert E(h.c.heartbeat(h.now, Heartbeat("g", modern.epoch, "m1"))["error_code"]) == E.UNKNOWN_MEMBER_ID


def test_the_last_consumer_protocol_member_leaving_downgrades_the_group():
    h = ConsumerHarness()
    a, b = classic_group_of_two(h)
    modern = Client(h, "m1")
    modern.beat()
    settle(h, [a, b], [modern])
    assert h.heartbeat(member_id="m1", epoch=-1)["error_code"] == E.NONE
    group = h.c.group("g")
    assert group.type is GroupType.CLASSIC and group.state.value == "PreparingRebalance"
    assert set(group.members) == {a.member_id, b.member_id}
    # the classic members rejoin the classic group's rebalance
    assert a.heartbeat() == E.REBALANCE_IN_PROGRESS
    replies_a: list = []
    h.c.join_group(h.now, JoinGroup("g", a.member_id, "consumer", [("range", subscription())],
                                    session_timeout_ms=10000, rebalance_timeout_ms=30000, api_version=5),
                   replies_a.append, dict(h.topics))
    assert b.join()["error_code"] == E.NONE     # the last to rejoin completes the join phase
    assert replies_a and replies_a[-1]["error_code"] == E.NONE
    leader = replies_a[-1]["leader"]
    assert leader in (a.member_id, b.member_id) and len(group.members) == 2


def test_a_classic_member_joins_a_consumer_group():
    h = ConsumerHarness()
    modern = Client(h, "m1")
    modern.beat()
    c = ClassicClient(h)
    reply = c.join()
    assert reply["error_code"] == E.NONE and reply["generation_id"] == h.group().members[c.member_id].member_epoch
    assert reply["leader"] == "" and reply["members"] == [] and reply["protocol_name"] == "range"
    settle(h, [c], [modern])
    assert sorted(c.owned | modern.partitions()) == list(range(6)) and c.owned and modern.partitions()
    # the consumer-protocol member leaves: only a classic member remains, so the group is classic again
    assert h.heartbeat(member_id="m1", epoch=-1)["error_code"] == E.NONE
    assert h.c.group("g").type is GroupType.CLASSIC


def test_classic_joins_with_another_protocol_type_or_no_common_protocol_are_refused():
    h = ConsumerHarness()
    Client(h, "m1").beat()
    replies: list = []
    h.c.join_group(h.now, JoinGroup("g", "x", "connect", [("range", subscription())], session_timeout_ms=10000,
                                    api_version=5), replies.append, dict(h.topics))
    assert replies[-1]["error_code"] == E.INCONSISTENT_GROUP_PROTOCOL
    c = ClassicClient(h)
    assert c.join()["error_code"] == E.NONE
    replies = []
    h.c.join_group(h.now, JoinGroup("g", "y", "consumer", [("roundrobin", subscription())], session_timeout_ms=10000,
                                    api_version=5), replies.append, dict(h.topics))
    assert replies[-1]["error_code"] == E.INCONSISTENT_GROUP_PROTOCOL


def test_with_the_policy_disabled_a_classic_group_is_not_upgraded():
    h = ConsumerHarness(migration_policy="disabled")
    classic_group_of_two(h)
    r = Client(h, "m1").beat()
    assert r["error_code"] == E.GROUP_ID_NOT_FOUND and h.c.group("g").type is GroupType.CLASSIC


def test_the_records_replay_to_the_group_the_migration_left():
    h = ConsumerHarness()
    a, b = classic_group_of_two(h)
    Client(h, "m1").beat()
    again = ConsumerHarness()
    again.c.load(h.records, h.now)
    group = again.c.group("g")
    assert group.type is GroupType.CONSUMER and set(group.members) == {a.member_id, b.member_id, "m1"}
    assert group.members[a.member_id].uses_classic_protocol
    h.heartbeat(member_id="m1", epoch=-1)
    again = ConsumerHarness()
    again.c.load(h.records, h.now)
    assert again.c.group("g").type is GroupType.CLASSIC and set(again.c.group("g").members) == \
        {a.member_id, b.member_id}


def test_a_classic_member_told_to_rejoin_that_does_not_is_fenced_after_its_rebalance_timeout():
    h = ConsumerHarness()
    a, b = classic_group_of_two(h)
    modern = Client(h, "m1")
    modern.beat()
    assert a.heartbeat() == E.REBALANCE_IN_PROGRESS   # a never rejoins, but keeps heartbeating
    for _ in range(30):
        h.advance(1000)
        a.heartbeat()
        b.heartbeat()
        modern.beat()
    assert a.member_id not in h.group().members      # fenced after its 30 s rebalance timeout
    assert b.member_id in h.group().members


def test_a_classic_member_commits_offsets_with_its_generation():
    from kafkaemu.core.offsets.requests import CommitPartition, OffsetCommit
    h = ConsumerHarness()
    a, b = classic_group_of_two(h)
    Client(h, "m1").beat()
    commit = OffsetCommit("g", [("t", [CommitPartition(0, 5)])], a.generation, a.member_id, api_version=8)
    assert h.c.commit_offsets(h.now, commit)["topics"][0]["partitions"][0]["error_code"] == E.NONE
    stale = OffsetCommit("g", [("t", [CommitPartition(0, 6)])], a.generation - 1, a.member_id, api_version=8)
    assert h.c.commit_offsets(h.now, stale)["topics"][0]["partitions"][0]["error_code"] == E.ILLEGAL_GENERATION


def test_a_heartbeat_failing_after_the_upgrade_leaves_the_classic_group_as_it_was():
    """One revert policy, Kafka's: an operation that fails changes nothing (CoordinatorRuntime
    applies only what a successful operation returns), so the upgrade it began is undone too."""
    h = ConsumerHarness()
    a, b = classic_group_of_two(h)
    written = len(h.records)
    # a's member id, as a consumer-protocol member joining: the upgraded group knows it at its generation
    reply = h.heartbeat(member_id=a.member_id, epoch=0)
    assert reply["error_code"] == E.FENCED_MEMBER_EPOCH
    group = h.c.group("g")
    assert group.type is GroupType.CLASSIC and set(group.members) == {a.member_id, b.member_id}
    assert len(h.records) == written                  # neither the conversion nor the member was written
    assert a.heartbeat() == E.NONE and b.heartbeat() == E.NONE


def test_a_consumer_protocol_member_takes_the_instance_id_of_a_classic_static_member():
    """Kafka checks that an instance id is released only when neither member speaks the classic
    protocol: a consumer-protocol member joining with a classic static member's instance id takes its
    place (getOrMaybeSubscribeStaticConsumerGroupMember), where two consumer-protocol members would
    be UNRELEASED_INSTANCE_ID."""
    h = ConsumerHarness()
    replies: list = []
    h.c.join_group(h.now, JoinGroup("g", "", "consumer", [("range", subscription())], session_timeout_ms=10000,
                                    rebalance_timeout_ms=30000, group_instance_id="ia", api_version=5),
                   replies.append, dict(h.topics))
    h.advance(5000)   # the classic group's initial rebalance delay
    (joined,) = replies
    classic_id = joined["member_id"]
    assert joined["error_code"] == E.NONE and classic_id
    synced: list = []
    h.c.sync_group(h.now, SyncGroup("g", joined["generation_id"], classic_id, {classic_id: assignment({0, 1})},
                                    "ia", "consumer", "range"), synced.append)
    assert synced[-1]["error_code"] == E.NONE
    modern = Client(h, "m1", instance="ia")
    r = modern.beat()
    assert r["error_code"] == E.NONE and r["member_id"] == "m1"
    group = h.group()
    assert set(group.members) == {"m1"} and group.static_member("ia").member_id == "m1"
    assert not group.members["m1"].uses_classic_protocol
    assert Client(h, "m2", instance="ia").beat()["error_code"] == E.UNRELEASED_INSTANCE_ID
