"""KIP-848 consumer groups with librdkafka (confluent-kafka, ``group.protocol=consumer``) against
kafkaemu: server-side assignment of 3 consumers on 6 partitions, partitions moving on close and after
a killed member's session timeout, commit and resume, a static member restarting without a
rebalance, regex subscriptions picking up new topics, and the admin views of the group."""
import os
import subprocess
import sys
import time

import pytest

from kafkaemu.testing import KafkaEmulator

from .group_clients import ConsumerThread, append_records, create_topic, disjoint_and_complete, tps, unique, wait_until

pytestmark = pytest.mark.timeout(120)

SESSION_MS = 6000
# below Kafka's group.consumer.min.* bounds, so those are lowered too, as a Kafka test broker would
KIP848_TIMEOUTS = {"group.consumer.session.timeout.ms": SESSION_MS, "group.consumer.heartbeat.interval.ms": 500,
                   "group.consumer.min.session.timeout.ms": SESSION_MS, "group.consumer.min.heartbeat.interval.ms": 500}


@pytest.fixture(scope="module")
def emulator():
    extra = KIP848_TIMEOUTS
    with KafkaEmulator(extra=extra) as emu:
        yield emu


def kip848_consumer(bootstrap: str, topics, group: str, client_id: str, **extra) -> ConsumerThread:
    from confluent_kafka import Consumer

    def make():
        conf = {"bootstrap.servers": bootstrap, "group.id": group, "client.id": client_id,
                "group.protocol": "consumer", "auto.offset.reset": "earliest", "enable.auto.commit": False,
                "topic.metadata.refresh.interval.ms": 1000}
        conf.update(extra)
        c = Consumer(conf)
        c.subscribe(list(topics))
        return c

    def poll(c):
        return [(m.topic(), m.partition(), m.offset()) for m in c.consume(100, 0.05) if m.error() is None]

    return ConsumerThread(make, poll, lambda c: {(tp.topic, tp.partition) for tp in c.assignment()},
                          lambda c: c.close(), client_id)


def consumer_group(emulator, group):
    return emulator.call(lambda broker: broker.coordinator.consumer.groups.get(group))


def stable_with(emulator, group, n: int) -> bool:
    g = consumer_group(emulator, group)
    return g is not None and len(g.members) == n and g.state.value == "Stable"


def member_assignments(emulator, group) -> list:
    """Each member's assignment as the coordinator handed it out, {(topic, partition)} per member."""
    def run(broker):
        g = broker.coordinator.consumer.groups.get(group)
        return [] if g is None else [{(broker.store.by_id(tid).name, p) for tid, parts in m.assigned.items()
                                      for p in parts} for m in g.members.values()]
    return emulator.call(run)


def settled(emulator, group, cs, universe) -> bool:
    """The group is Stable and every consumer holds (has applied) what the coordinator gave it: a
    disjoint, complete split with no consumer empty. A client's view trails the heartbeat that carried
    its assignment, so Stable alone can still show one consumer holding everything and another none."""
    views = [set(c.assigned) for c in cs]
    return (stable_with(emulator, group, len(cs)) and all(views) and disjoint_and_complete(views, universe)
            and sorted(map(sorted, views)) == sorted(map(sorted, member_assignments(emulator, group))))


def session_deadlines(group):
    """For emulator.call: when each member's session expires unless it heartbeats again."""
    def run(broker):
        return [broker.coordinator.timers.deadline(("consumer-session", group, mid))
                for mid in broker.coordinator.consumer.groups[group].members]
    return run


def test_three_consumers_split_six_partitions_and_close_moves_them(emulator):
    bs, topic, group = emulator.bootstrap_server, unique("kip848-six"), unique("kip848-g")
    create_topic(emulator, topic, 6)
    cs = [kip848_consumer(bs, [topic], group, f"C{i}") for i in range(3)]
    try:
        wait_until(lambda: disjoint_and_complete([c.assigned for c in cs], tps(topic, 6))
                   and sorted(len(c.assigned) for c in cs) == [2, 2, 2], what="3-way assignment")
        g = consumer_group(emulator, group)
        assert g is not None and g.state.value == "Stable" and len(g.members) == 3
        assert group not in emulator.call(lambda broker: broker.coordinator.classic.groups)   # no classic twin
        kept = [set(c.assigned) for c in cs[1:]]
        cs[0].close()
        wait_until(lambda: disjoint_and_complete([c.assigned for c in cs[1:]], tps(topic, 6))
                   and sorted(len(c.assigned) for c in cs[1:]) == [3, 3], what="2-way assignment")
        assert all(old <= c.assigned for old, c in zip(kept, cs[1:]))     # survivors keep theirs
        assert all(c.error is None for c in cs)
    finally:
        for c in cs[1:]:
            c.close()


def test_commit_close_and_resume_after_the_committed_offset(emulator):
    from confluent_kafka import TopicPartition
    bs, topic, group = emulator.bootstrap_server, unique("kip848-commit"), unique("kip848-g")
    create_topic(emulator, topic, 2)
    append_records(emulator, topic, 10)
    first = kip848_consumer(bs, [topic], group, "C1")
    wait_until(lambda: len(first.records) >= 20, what="first read")
    first.call(lambda c: c.commit(offsets=[TopicPartition(topic, 0, 4), TopicPartition(topic, 1, 7)],
                                  asynchronous=False))
    first.close()
    second = kip848_consumer(bs, [topic], group, "C2")
    try:
        wait_until(lambda: len(second.records) >= 9, what="resumed read")
        time.sleep(0.3)
        firsts = {p: min(o for t, pp, o in second.records if pp == p) for p in (0, 1)}
        assert firsts == {0: 4, 1: 7} and len(second.records) == 9
    finally:
        second.close()


def test_static_member_restart_keeps_partitions_without_rebalance(emulator):
    bs, topic, group = emulator.bootstrap_server, unique("kip848-static"), unique("kip848-g")
    create_topic(emulator, topic, 4)
    other = kip848_consumer(bs, [topic], group, "C1", **{"group.instance.id": "inst-1"})
    member = kip848_consumer(bs, [topic], group, "C2", **{"group.instance.id": "inst-2"})
    try:
        wait_until(lambda: disjoint_and_complete([other.assigned, member.assigned], tps(topic, 4))
                   and len(other.assigned) == len(member.assigned) == 2, what="2-way assignment")
        before, others = set(member.assigned), set(other.assigned)
        epoch = consumer_group(emulator, group).group_epoch
        member.close()
        wait_until(lambda: any(m.member_epoch == -2 for m in consumer_group(emulator, group).members.values()),
                   what="static leave (epoch -2)")
        member = kip848_consumer(bs, [topic], group, "C2", **{"group.instance.id": "inst-2"})
        wait_until(lambda: member.assigned == before, what="the restarted member's old partitions")
        assert other.assigned == others
        g = consumer_group(emulator, group)
        assert g.group_epoch == epoch and len(g.members) == 2
    finally:
        other.close()
        member.close()


_CHILD = """
import json, sys
from confluent_kafka import Consumer
c = Consumer({"bootstrap.servers": sys.argv[1], "group.id": sys.argv[2], "client.id": "victim",
              "group.protocol": "consumer"})
c.subscribe([sys.argv[3]])
last = None
while True:
    c.poll(0.1)
    now = sorted([tp.topic, tp.partition] for tp in c.assignment())
    if now != last:
        print(json.dumps(now), flush=True)
        last = now
"""


def test_killed_member_partitions_move_after_the_session_timeout(emulator):
    bs, topic, group = emulator.bootstrap_server, unique("kip848-kill"), unique("kip848-g")
    create_topic(emulator, topic, 4)
    live = kip848_consumer(bs, [topic], group, "C1")
    victim = subprocess.Popen([sys.executable, "-c", _CHILD, bs, group, topic], stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, text=True, env=dict(os.environ))
    try:
        wait_until(lambda: stable_with(emulator, group, 2) and len(live.assigned) == 2, what="2-way assignment")
        victim.kill()
        victim.wait(10)
        killed_at = time.time()
        wait_until(lambda: live.assigned == tps(topic, 4), timeout=30, what="reassignment after the session timeout")
        assert time.time() - killed_at >= SESSION_MS / 1000 - 1.5
    finally:
        victim.kill()
        live.close()


def test_regex_subscription_picks_up_a_new_topic(emulator):
    bs, prefix, group = emulator.bootstrap_server, unique("kip848re"), unique("kip848-g")
    create_topic(emulator, f"{prefix}-a", 2)
    c = kip848_consumer(bs, [f"^{prefix}-.*"], group, "C1")
    try:
        wait_until(lambda: c.assigned == tps(f"{prefix}-a", 2), what="regex assignment")
        create_topic(emulator, f"{prefix}-b", 1)
        wait_until(lambda: c.assigned == tps(f"{prefix}-a", 2) | tps(f"{prefix}-b", 1), what="new topic assigned")
    finally:
        c.close()


def test_admin_lists_and_describes_the_consumer_group(emulator):
    from confluent_kafka import ConsumerGroupType
    from confluent_kafka.admin import AdminClient
    bs, topic, group = emulator.bootstrap_server, unique("kip848-admin"), unique("kip848-g")
    create_topic(emulator, topic, 2)
    c = kip848_consumer(bs, [topic], group, "C1")
    admin = AdminClient({"bootstrap.servers": bs})
    try:
        wait_until(lambda: c.assigned == tps(topic, 2), what="assignment")
        listed = admin.list_consumer_groups().result(10)
        mine = [g for g in listed.valid if g.group_id == group]
        assert len(mine) == 1 and mine[0].type == ConsumerGroupType.CONSUMER
        desc = admin.describe_consumer_groups([group])[group].result(10)
        assert desc.type == ConsumerGroupType.CONSUMER
        assert str(desc.state).endswith("STABLE")
        [m] = desc.members
        assert m.client_id == "C1"
        assert {(tp.topic, tp.partition) for tp in m.assignment.topic_partitions} == tps(topic, 2)
    finally:
        c.close()


def test_group_survives_a_broker_restart_with_a_data_dir(tmp_path):
    """Consumer group state is replayed from __consumer_offsets: after a restart on the same port the
    members carry on with their epochs, no rebalance, and their partitions stay where they were."""
    extra = KIP848_TIMEOUTS
    first = KafkaEmulator(data_dir=str(tmp_path), extra=extra).start()
    port = first.port
    bs, topic, group = first.bootstrap_server, unique("kip848-restart"), unique("kip848-g")
    create_topic(first, topic, 4)
    cs = [kip848_consumer(bs, [topic], group, f"C{i}") for i in range(2)]
    second = None
    try:
        wait_until(lambda: settled(first, group, cs, tps(topic, 4)), what="2-way assignment")
        before = [set(c.assigned) for c in cs]
        epoch = consumer_group(first, group).group_epoch
        first.stop()
        second = KafkaEmulator(port=port, data_dir=str(tmp_path), extra=extra).start()
        started_at = second.call(lambda b: b.now_ms)
        g = consumer_group(second, group)
        assert g is not None and g.group_epoch == epoch and len(g.members) == 2
        # Sessions refreshed past the restart's own: every member heartbeated against the new broker.
        wait_until(lambda: all(d > started_at + SESSION_MS for d in second.call(session_deadlines(group))),
                   timeout=10, what="heartbeats against the restarted broker")
        g = consumer_group(second, group)
        assert g.group_epoch == epoch and g.state.value == "Stable"
        assert [c.assigned for c in cs] == before
    finally:
        for c in cs:
            c.close()
        if second is not None:
            second.stop()
        first.stop()


def test_several_nodes_and_a_coordinator_move_keep_the_group():
    """With three nodes the group's coordinator is the leader of its __consumer_offsets partition;
    moving that leader sends the members to the new node (NOT_COORDINATOR, FindCoordinator) and
    they carry on with their epochs."""
    from kafkaemu.core.placement import partition_for
    extra = KIP848_TIMEOUTS
    with KafkaEmulator(nodes=3, extra=extra) as cluster:
        bs, topic, group = cluster.bootstrap_servers, unique("kip848-nodes"), unique("kip848-g")
        create_topic(cluster, topic, 4)
        cs = [kip848_consumer(bs, [topic], group, f"C{i}") for i in range(2)]
        try:
            wait_until(lambda: settled(cluster, group, cs, tps(topic, 4)), what="2-way assignment")
            before = [set(c.assigned) for c in cs]
            epoch = consumer_group(cluster, group).group_epoch
            old = partition_for(group, 50) % 3
            cluster.move_leader("__consumer_offsets", partition_for(group, 50), (old + 1) % 3)
            moved_at = cluster.call(lambda b: b.now_ms)
            # Only the new coordinator node accepts heartbeats: refreshed sessions prove the members moved.
            wait_until(lambda: all(d > moved_at + SESSION_MS for d in cluster.call(session_deadlines(group))),
                       timeout=10, what="heartbeats through the new coordinator")
            g = consumer_group(cluster, group)
            assert g.group_epoch == epoch and g.state.value == "Stable" and len(g.members) == 2
            assert [c.assigned for c in cs] == before and all(c.error is None for c in cs)
        finally:
            for c in cs:
                c.close()


@pytest.mark.parametrize("t1, t2, first, second", [
    (4, 4, {("T1", 0), ("T1", 1), ("T2", 0), ("T2", 1)}, {("T1", 2), ("T1", 3), ("T2", 2), ("T2", 3)}),   # Eg1
    (3, 3, {("T1", 0), ("T1", 1), ("T2", 0), ("T2", 1)}, {("T1", 2), ("T2", 2)}),                         # Eg2
    (3, 4, {("T1", 0), ("T1", 1), ("T2", 0), ("T2", 1)}, {("T1", 2), ("T2", 2), ("T2", 3)}),               # Eg3
])
def test_seed_range_examples_with_the_server_range_assignor(emulator, t1, t2, first, second):
    """The seeds' RangeAssignor examples, assigned by the broker (``group.remote.assignor=range``): the
    member that joined first keeps the lowest partitions of each topic, as C1 in the articles."""
    bs, group, prefix = emulator.bootstrap_server, unique("kip848-range"), unique("kip848r")
    names = {"T1": f"{prefix}-T1", "T2": f"{prefix}-T2"}
    create_topic(emulator, names["T1"], t1)
    create_topic(emulator, names["T2"], t2)
    c1 = kip848_consumer(bs, list(names.values()), group, "C1", **{"group.remote.assignor": "range"})
    try:
        wait_until(lambda: len(c1.assigned) == t1 + t2, what="C1 alone")
        c2 = kip848_consumer(bs, list(names.values()), group, "C2", **{"group.remote.assignor": "range"})
        try:
            expect = [{(names[t], p) for t, p in first}, {(names[t], p) for t, p in second}]
            wait_until(lambda: [c1.assigned, c2.assigned] == expect, what=f"range split {expect}")
            assert consumer_group(emulator, group).state.value == "Stable"
        finally:
            c2.close()
    finally:
        c1.close()


def test_seed_sticky_example_with_the_uniform_assignor(emulator):
    """The seeds' StickyAssignor example: c0, c1, c2 on t0..t3 (2 partitions each); when c0 leaves,
    c1 and c2 keep everything they had and take c0's partitions, 4 each."""
    bs, group, prefix = emulator.bootstrap_server, unique("kip848-sticky"), unique("kip848s")
    topics = [f"{prefix}-t{i}" for i in range(4)]
    for t in topics:
        create_topic(emulator, t, 2)
    universe = {(t, p) for t in topics for p in range(2)}
    cs = [kip848_consumer(bs, topics, group, f"c{i}") for i in range(3)]
    try:
        wait_until(lambda: disjoint_and_complete([c.assigned for c in cs], universe)
                   and sorted(len(c.assigned) for c in cs) == [2, 3, 3], what="3-way split")
        kept = [set(c.assigned) for c in cs[1:]]
        cs[0].close()
        wait_until(lambda: disjoint_and_complete([c.assigned for c in cs[1:]], universe)
                   and [len(c.assigned) for c in cs[1:]] == [4, 4], what="2-way split")
        assert all(old <= c.assigned for old, c in zip(kept, cs[1:]))
    finally:
        for c in cs[1:]:
            c.close()
