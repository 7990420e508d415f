"""Consumer groups with confluent-kafka (librdkafka) against kafkaemu: assignment, rebalances on
close and on a killed member, commit/resume, static membership, the seeds' Range/RoundRobin
examples, cooperative-sticky stickiness, the admin group APIs, and commits racing rebalances."""
import threading
import time

import pytest

from .group_clients import (ConsumerProcess, append_records, confluent_consumer, create_topic,
                            disjoint_and_complete, unique, wait_until)

pytestmark = pytest.mark.timeout(120)


def tps(topic, n):
    return {(topic, p) for p in range(n)}


def test_three_consumers_split_six_partitions_and_close_moves_them(kafka_emulator):
    bs, topic, group = kafka_emulator.bootstrap_server, unique("ck-six"), unique("ck-g")
    create_topic(kafka_emulator, topic, 6)
    cs = [confluent_consumer(bs, [topic], group, f"C{i}") for i in range(3)]
    try:
        wait_until(lambda: all(c.assigned for c in cs) and disjoint_and_complete([c.assigned for c in cs], tps(topic, 6)),
                   what="3-way assignment")
        assert sorted(len(c.assigned) for c in cs) == [2, 2, 2]
        cs[0].close()
        wait_until(lambda: disjoint_and_complete([c.assigned for c in cs[1:]], tps(topic, 6)), what="2-way assignment")
        assert sorted(len(c.assigned) for c in cs[1:]) == [3, 3]
        assert all(c.error is None for c in cs)
    finally:
        for c in cs[1:]:
            c.close()


def test_killed_consumer_partitions_move_after_the_session_timeout(kafka_emulator):
    bs, topic, group = kafka_emulator.bootstrap_server, unique("ck-kill"), unique("ck-g")
    create_topic(kafka_emulator, topic, 6)
    live = [confluent_consumer(bs, [topic], group, f"C{i}") for i in range(2)]
    victim = ConsumerProcess("confluent-kafka", bs, topic, group, "C9")
    try:
        wait_until(lambda: victim.assigned and all(c.assigned for c in live)
                   and disjoint_and_complete([c.assigned for c in live] + [victim.assigned], tps(topic, 6)),
                   timeout=45, what="3-way assignment")
        victim.kill()
        killed_at = time.time()
        wait_until(lambda: disjoint_and_complete([c.assigned for c in live], tps(topic, 6)), timeout=30,
                   what="reassignment after the session timeout")
        assert time.time() - killed_at >= 4.0
    finally:
        victim.kill()
        for c in live:
            c.close()


def test_commit_close_and_resume_after_the_committed_offset(kafka_emulator):
    from confluent_kafka import TopicPartition
    bs, topic, group = kafka_emulator.bootstrap_server, unique("ck-commit"), unique("ck-g")
    create_topic(kafka_emulator, topic, 2)
    append_records(kafka_emulator, topic, 10)
    first = confluent_consumer(bs, [topic], group, "C1")
    wait_until(lambda: len(first.records) >= 20, what="first read")
    first.call(lambda c: c.commit(offsets=[TopicPartition(topic, 0, 4), TopicPartition(topic, 1, 7)],
                                  asynchronous=False))
    first.close()
    second = confluent_consumer(bs, [topic], group, "C2")
    try:
        wait_until(lambda: len(second.records) >= 9, what="resumed read")
        time.sleep(0.3)
        firsts = {p: min(o for t, pp, o in second.records if pp == p) for p in (0, 1)}
        assert firsts == {0: 4, 1: 7} and len(second.records) == 9
    finally:
        second.close()


def test_static_member_restart_keeps_partitions_without_rebalance(kafka_emulator):
    bs, topic, group = kafka_emulator.bootstrap_server, unique("ck-static"), unique("ck-g")
    create_topic(kafka_emulator, topic, 4)
    other = ConsumerProcess("confluent-kafka", bs, topic, group, "C1", instance_id="inst-1")
    member = ConsumerProcess("confluent-kafka", bs, topic, group, "C2", instance_id="inst-2")
    try:
        wait_until(lambda: member.assigned and other.assigned
                   and disjoint_and_complete([member.assigned, other.assigned], tps(topic, 4)),
                   timeout=45, what="static assignment")
        before_member, before_other = set(member.assigned), set(other.assigned)
        n_transitions = len(kafka_emulator.group_transitions(group))
        member.kill()
        member = ConsumerProcess("confluent-kafka", bs, topic, group, "C2", instance_id="inst-2")
        wait_until(lambda: member.assigned, timeout=30, what="restarted static member's assignment")
        assert member.assigned == before_member and other.assigned == before_other
        assert len(kafka_emulator.group_transitions(group)) == n_transitions
    finally:
        member.kill()
        other.kill()


RANGE = [((4, 4), {"C1": ["T1P0", "T1P1", "T2P0", "T2P1"], "C2": ["T1P2", "T1P3", "T2P2", "T2P3"]}),
         ((3, 3), {"C1": ["T1P0", "T1P1", "T2P0", "T2P1"], "C2": ["T1P2", "T2P2"]}),
         ((3, 4), {"C1": ["T1P0", "T1P1", "T2P0", "T2P1"], "C2": ["T1P2", "T2P2", "T2P3"]})]
ROUND_ROBIN = [((4, 4), {"C1": ["T1P0", "T1P2", "T2P0", "T2P2"], "C2": ["T1P1", "T1P3", "T2P1", "T2P3"]}),
               ((3, 3), {"C1": ["T1P0", "T1P2", "T2P1"], "C2": ["T1P1", "T2P0", "T2P2"]}),
               ((3, 4), {"C1": ["T1P0", "T1P2", "T2P1", "T2P3"], "C2": ["T1P1", "T2P0", "T2P2"]})]


def seed_example(kafka_emulator, strategy, counts, expected):
    bs, prefix, group = kafka_emulator.bootstrap_server, unique("ck-seed"), unique("ck-g")
    names = {"T1": f"{prefix}-T1", "T2": f"{prefix}-T2"}
    for short, n in zip(("T1", "T2"), counts):
        create_topic(kafka_emulator, names[short], n)
    universe = {(names[t], p) for t, n in zip(("T1", "T2"), counts) for p in range(n)}
    cs = {cid: confluent_consumer(bs, list(names.values()), group, cid, **{"partition.assignment.strategy": strategy})
          for cid in ("C1", "C2")}
    try:
        wait_until(lambda: all(c.assigned for c in cs.values())
                   and disjoint_and_complete([c.assigned for c in cs.values()], universe), what="two-member assignment")
        back = {v: k for k, v in names.items()}
        got = {cid: sorted(f"{back[t]}P{p}" for t, p in c.assigned) for cid, c in cs.items()}
        assert got == {cid: sorted(v) for cid, v in expected.items()}
    finally:
        for c in cs.values():
            c.close()


@pytest.mark.parametrize("counts,expected", RANGE)
def test_seed_range_examples(kafka_emulator, counts, expected):
    seed_example(kafka_emulator, "range", counts, expected)


@pytest.mark.parametrize("counts,expected", ROUND_ROBIN)
def test_seed_round_robin_examples(kafka_emulator, counts, expected):
    seed_example(kafka_emulator, "roundrobin", counts, expected)


def test_cooperative_sticky_c1_c2_keep_their_partitions_when_c0_leaves(kafka_emulator):
    bs, prefix, group = kafka_emulator.bootstrap_server, unique("ck-sticky"), unique("ck-g")
    topics = [f"{prefix}-t{i}" for i in range(4)]
    for t in topics:
        create_topic(kafka_emulator, t, 2)
    universe = {(t, p) for t in topics for p in range(2)}
    cs = {cid: confluent_consumer(bs, topics, group, cid, **{"partition.assignment.strategy": "cooperative-sticky"})
          for cid in ("c0", "c1", "c2")}
    try:
        wait_until(lambda: all(c.assigned for c in cs.values())
                   and disjoint_and_complete([c.assigned for c in cs.values()], universe)
                   and sorted(len(c.assigned) for c in cs.values()) == [2, 3, 3], what="three-member assignment")
        before = {cid: set(cs[cid].assigned) for cid in ("c1", "c2")}
        cs["c0"].close()
        wait_until(lambda: disjoint_and_complete([cs["c1"].assigned, cs["c2"].assigned], universe),
                   what="two-member assignment")
        for cid in ("c1", "c2"):
            assert cs[cid].assigned >= before[cid] and len(cs[cid].assigned) == 4
    finally:
        for cid in ("c1", "c2"):
            cs[cid].close()


def test_admin_lists_describes_and_deletes_groups_and_offsets(kafka_emulator):
    from confluent_kafka import ConsumerGroupState, KafkaException, TopicPartition
    from confluent_kafka.admin import AdminClient
    bs, topic, group = kafka_emulator.bootstrap_server, unique("ck-admin"), unique("ck-g")
    create_topic(kafka_emulator, topic, 2)
    c = confluent_consumer(bs, [topic], group, "C1")
    admin = AdminClient({"bootstrap.servers": bs})
    try:
        wait_until(lambda: c.assigned == tps(topic, 2), what="assignment")
        c.call(lambda k: k.commit(offsets=[TopicPartition(topic, 0, 3)], asynchronous=False))
        listed = admin.list_consumer_groups().result(10)
        assert group in {g.group_id for g in listed.valid}
        desc = admin.describe_consumer_groups([group])[group].result(10)
        assert desc.state == ConsumerGroupState.STABLE and desc.partition_assignor == "range"
        [member] = desc.members
        assert member.client_id == "C1"
        assert {(tp.topic, tp.partition) for tp in member.assignment.topic_partitions} == tps(topic, 2)
        from confluent_kafka import ConsumerGroupTopicPartitions
        got = admin.list_consumer_group_offsets([ConsumerGroupTopicPartitions(group)])[group].result(10)
        assert {tp.partition: tp.offset for tp in got.topic_partitions} == {0: 3}
        with pytest.raises(KafkaException) as refused:
            admin.delete_consumer_groups([group])[group].result(10)
        assert "NON_EMPTY_GROUP" in str(refused.value) or "not empty" in str(refused.value).lower()
        c.close()
        wait_until(lambda: admin.describe_consumer_groups([group])[group].result(10).state == ConsumerGroupState.EMPTY,
                   what="empty group")
        admin.delete_consumer_groups([group])[group].result(10)
        with pytest.raises(KafkaException) as missing:
            admin.delete_consumer_groups([group])[group].result(10)
        assert "GROUP_ID_NOT_FOUND" in str(missing.value) or "does not exist" in str(missing.value).lower()
    finally:
        if not c.closed.is_set():
            c.close()


def test_commits_racing_rebalances_never_roll_back(kafka_emulator):
    bs, topic, group = kafka_emulator.bootstrap_server, unique("ck-race"), unique("ck-g")
    create_topic(kafka_emulator, topic, 4)
    append_records(kafka_emulator, topic, 400)

    def poll_and_commit(c):
        out = []
        for m in c.consume(20, 0.05):
            if m.error() is None:
                out.append((m.topic(), m.partition(), m.offset()))
        if out:
            try:
                c.commit(asynchronous=False)
            except Exception:          # refused while rebalancing: the next round commits again
                pass
        return out

    from confluent_kafka import Consumer

    def make(client_id):
        def build():
            c = Consumer({"bootstrap.servers": bs, "group.id": group, "client.id": client_id,
                          "session.timeout.ms": 6000, "heartbeat.interval.ms": 500,
                          "auto.offset.reset": "earliest", "enable.auto.commit": False})
            c.subscribe([topic])
            return c
        return build

    from .group_clients import ConsumerThread
    committer = ConsumerThread(make("A"), poll_and_commit, lambda c: {(t.topic, t.partition) for t in c.assignment()},
                               lambda c: c.close(), "A")
    seen: dict[int, int] = {}
    violations = []
    stop = threading.Event()

    def watch():
        while not stop.is_set():
            resp = kafka_emulator.call(lambda b: b.coordinator.fetch_offsets(b.now_ms, group, None))
            for t in resp["topics"]:
                for p in t["partitions"]:
                    if p["committed_offset"] < seen.get(p["partition_index"], -1):
                        violations.append((p["partition_index"], seen[p["partition_index"]], p["committed_offset"]))
                    seen[p["partition_index"]] = max(seen.get(p["partition_index"], -1), p["committed_offset"])
            time.sleep(0.01)
    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        for round_ in range(2):
            joiner = ConsumerThread(make(f"B{round_}"), poll_and_commit,
                                    lambda c: {(t.topic, t.partition) for t in c.assignment()}, lambda c: c.close(), "B")
            wait_until(lambda: joiner.assigned and committer.assigned, what="shared assignment")
            time.sleep(0.3)
            joiner.close()
            wait_until(lambda: len(committer.assigned) == 4, what="committer owns everything again")
        wait_until(lambda: len(seen) == 4 and all(v == 400 for v in seen.values()), timeout=30,
                   what="everything committed")
    finally:
        stop.set()
        watcher.join(5)
        committer.close()
    assert violations == []
