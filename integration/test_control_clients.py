"""Each Python client against a subprocess emulator (three nodes) controlled only over its HTTP
API: member-scoped expiry, a partition-scoped fault, a node stopped and started, an API version
cap, awaits instead of sleeps, and snapshot/restore. The module shares one emulator and resets it
through the API before each test."""
from __future__ import annotations

import os
import signal
import time

import pytest

from kafkaemu.control.client import ControlClient
from kafkaemu.testing import KafkaEmulator

from .control_clients import STICKY, Producer, committing_consumer, read_all
from .group_clients import CLIENTS, ConsumerProcess, unique, wait_until

pytestmark = pytest.mark.parametrize("client", list(CLIENTS))
MINUTE = 60_000


@pytest.fixture(scope="module")
def served():
    with KafkaEmulator(subprocess_mode=True, nodes=3) as emulator:
        yield emulator


@pytest.fixture
def http(served):
    api = ControlClient(served.control_url)
    api.call("reset")
    return api


@pytest.fixture
def bootstrap(served, http):
    return ",".join(f"127.0.0.1:{n['port']}" for n in http.call("nodes")["nodes"])


def assignments(group_view: dict) -> dict[str, set[int]]:
    return {m["client_id"]: {p for a in m["assignment"] for p in a["partitions"]} for m in group_view["members"]}


def test_an_expired_member_hands_its_partitions_to_the_others_who_keep_theirs(client, http, bootstrap,
                                                                               record_property):
    topic, group = unique("expire"), unique("g")
    http.call("topic_create", name=topic, partitions=6)
    victim = ConsumerProcess(client, bootstrap, topic, group, "victim", assignor=STICKY[client])
    # each in its own process: kafka-python's and aiokafka's sticky assignors keep their state per class
    survivors = [ConsumerProcess(client, bootstrap, topic, group, f"survivor-{i}", assignor=STICKY[client])
                 for i in range(2)]
    try:
        settled = http.call("await_group", group=group, state="Stable", members=3, assigned=True,
                            timeout_ms=MINUTE)
        returned_ms = time.time() * 1000
        # the await answered when the group became Stable, not at its timeout
        stable_at = max(e["at_ms"] for e in http.call("journal_get", group=group)["entries"] if e["to"] == "Stable")
        record_property("await_after_stable_ms", round(returned_ms - stable_at, 1))
        assert stable_at <= returned_ms + 5 and settled["waited_ms"] < MINUTE
        assert returned_ms - stable_at < 5000
        assert settled["current"]["protocol"] == STICKY[client], settled["current"]
        before = assignments(settled["current"])
        assert sorted(len(ps) for ps in before.values()) == [2, 2, 2]
        # Stable means the leader's SyncGroup arrived; a follower holds its partitions only once its own
        # SyncGroup is answered, and a sticky assignor can keep only what its member has received
        members = {"victim": victim, "survivor-0": survivors[0], "survivor-1": survivors[1]}
        wait_until(lambda: all({p for _, p in m.assigned} == before[name] for name, m in members.items()),
                   timeout=MINUTE / 1000, what="every member to receive the assignment the group holds")

        os.kill(victim.proc.pid, signal.SIGSTOP)   # it stops heartbeating; its session would last 6 s
        expired = http.call("expire_member", group=group, client_id="victim")
        assert len(expired["expired"]) == 1
        after = assignments(http.call("await_group", group=group, state="Stable", members=2, assigned=True,
                                      generation=settled["current"]["generation"] + 1,
                                      timeout_ms=MINUTE)["current"])
        assert set(after) == {"survivor-0", "survivor-1"}
        for name in after:
            assert before[name] <= after[name]           # the rest stay
        assert after["survivor-0"] | after["survivor-1"] == set(range(6))
        gained = (after["survivor-0"] - before["survivor-0"]) | (after["survivor-1"] - before["survivor-1"])
        assert gained == before["victim"]
        assert all(c.proc.poll() is None for c in survivors)
    finally:
        for c in [victim, *survivors]:
            c.kill()


def produce_requests(http, client_id: str, topic: str) -> list[list[int]]:
    entries = http.call("requests", api="Produce", client_id=client_id)["entries"]
    return [sorted(pd["index"] for td in e["request"]["topic_data"] if td["name"] == topic
                   for pd in td["partition_data"]) for e in entries if e["outcome"] == "answered"]


def test_a_fault_on_one_partition_makes_the_producer_retry_only_that_partition(client, http, bootstrap):
    topic = unique("pfault")
    http.call("topic_create", name=topic, partitions=3)
    for p in range(3):   # one leader, so that one request carries all three partitions
        http.call("leader_move", topic=topic, partition=p, node=0)
    http.call("request_log_config", enabled=True, bodies=True)
    http.call("fault_add", api="Produce", error="NOT_LEADER_OR_FOLLOWER", topic=topic, partition=1, count=2)
    producer = Producer(client, bootstrap, "pfault-producer", linger_ms=200)
    try:
        for p in range(3):
            producer.send(topic, b"value-%d" % p, p)
        producer.flush()
    finally:
        producer.close()
    named = produce_requests(http, "pfault-producer", topic)
    assert sum(1 in n for n in named) == 3                         # two failures, then the retry succeeds
    assert sum(0 in n for n in named) == sum(2 in n for n in named) == 1   # never retried
    assert http.call("faults")["faults"][0]["fired"] == 2
    assert [p["high_watermark"] for p in http.call("topic", topic=topic)["partitions"]] == [1, 1, 1]
    assert read_all(bootstrap, topic, 3) == {0: [b"value-0"], 1: [b"value-1"], 2: [b"value-2"]}


def test_a_stopped_node_makes_clients_fail_over_and_a_started_one_serves_them_again(client, http, bootstrap):
    topic, group = unique("failover"), unique("g")
    http.call("topic_create", name=topic, partitions=3)
    consumer = committing_consumer(client, bootstrap, topic, group, "fo-consumer")
    producer = Producer(client, bootstrap, "fo-producer")
    sent = 0

    def produce_round():
        nonlocal sent
        for i in range(30):
            producer.send(topic, b"r%d" % (sent + i), i % 3)
        producer.flush()
        sent += 30
        http.call("await_lag", group=group, topic=topic, lag=0, timeout_ms=MINUTE)

    try:
        http.call("await_group", group=group, state="Stable", members=1, assigned=True, timeout_ms=MINUTE)
        produce_round()
        node = http.call("group", group=group)["coordinator"]
        led = [p["partition"] for p in http.call("topic", topic=topic)["partitions"] if p["leader"] == node]
        stopped = http.call("node_stop", node=node)
        assert not [n for n in http.call("nodes")["nodes"] if n["node_id"] == node][0]["running"]
        assert sorted(m["partition"] for m in stopped["moved"] if m["topic"] == topic) == sorted(led)
        produce_round()                                            # producer and consumer fail over
        assert http.call("group", group=group)["coordinator"] != node
        http.call("request_log_config", enabled=True)
        after_start = http.call("requests")["next_seq"] - 1
        http.call("node_start", node=node)
        assert http.call("group", group=group)["coordinator"] == node   # its partitions came back
        produce_round()                                            # ...and clients use it again
        assert http.call("requests", node=node, after=after_start, limit=1)["entries"]
        assert sum(p["high_watermark"] for p in http.call("topic", topic=topic)["partitions"]) == sent == 90
        assert consumer.error is None
    finally:
        producer.close()
        consumer.close()


def test_an_api_version_cap_makes_the_client_fall_back(client, http, bootstrap):
    topic = unique("caps")
    http.call("topic_create", name=topic, partitions=1)
    http.call("request_log_config", enabled=True)

    def produce_versions(client_id: str) -> set[int]:
        producer = Producer(client, bootstrap, client_id)
        try:
            producer.send(topic, b"x", 0)
            producer.flush()
        finally:
            producer.close()
        return {e["version"] for e in http.call("requests", api="Produce", client_id=client_id)["entries"]}

    uncapped = produce_versions("uncapped")
    assert min(uncapped) > 3
    http.call("api_version_cap", api="Produce", max_version=3)
    capped = produce_versions("capped")
    assert capped and max(capped) <= 3
    assert [p["high_watermark"] for p in http.call("topic", topic=topic)["partitions"]] == [2]


def test_snapshot_then_produce_and_commit_then_restore_brings_back_offsets_and_records(client, http, bootstrap):
    topic, group = unique("snap"), unique("g")
    http.call("topic_create", name=topic, partitions=2)
    consumer = committing_consumer(client, bootstrap, topic, group, "snap-consumer")
    producer = Producer(client, bootstrap, "snap-producer")

    def produce(prefix: bytes, n: int):
        for i in range(n):
            producer.send(topic, prefix + b"%d" % i, i % 2)
        producer.flush()
        http.call("await_lag", group=group, topic=topic, lag=0, timeout_ms=MINUTE)

    try:
        http.call("await_group", group=group, state="Stable", members=1, assigned=True, timeout_ms=MINUTE)
        produce(b"kept-", 10)
        http.call("snapshot_save", name="base")
        saved_topic = http.call("topic", topic=topic)["partitions"]
        saved_offsets = http.call("group", group=group)["offsets"]
        saved_records = read_all(bootstrap, topic, 2)
        produce(b"lost-", 6)
        assert http.call("group", group=group)["offsets"] != saved_offsets

        restored = http.call("snapshot_restore", name="base")
        assert restored["connections_closed"] >= 1
        assert http.call("topic", topic=topic)["partitions"] == saved_topic
        assert [(o["partition"], o["committed_offset"]) for o in http.call("group", group=group)["offsets"]] == \
            [(o["partition"], o["committed_offset"]) for o in saved_offsets]
        assert read_all(bootstrap, topic, 2) == saved_records == {0: [b"kept-0", b"kept-2", b"kept-4", b"kept-6",
                                                                      b"kept-8"],
                                                                  1: [b"kept-1", b"kept-3", b"kept-5", b"kept-7",
                                                                      b"kept-9"]}
        # The consumer reconnects and continues. An idempotent producer's sequence numbers are ahead of
        # the restored producer state (OUT_OF_ORDER_SEQUENCE_NUMBER, as after any lost write): a new one.
        producer.close()
        producer = Producer(client, bootstrap, "snap-producer-2")
        produce(b"after-", 4)
        assert [p["high_watermark"] for p in http.call("topic", topic=topic)["partitions"]] == [7, 7]
        assert consumer.error is None
    finally:
        producer.close()
        consumer.close()
