"""Consumer groups with kafka-python against kafkaemu: assignment, rebalances on close and on a
killed member, commit/resume, static membership, the seeds' Range/RoundRobin/Sticky examples and
the admin group APIs."""
import time

import pytest

from .group_clients import (ConsumerProcess, append_records, create_topic, disjoint_and_complete,
                            kafka_python_consumer, unique, wait_until)

pytestmark = pytest.mark.timeout(120)


def tps(topic, n):
    return {(topic, p) for p in range(n)}


def test_three_consumers_split_six_partitions_and_close_moves_them(kafka_emulator):
    bs, topic, group = kafka_emulator.bootstrap_server, unique("kp-six"), unique("kp-g")
    create_topic(kafka_emulator, topic, 6)
    cs = [kafka_python_consumer(bs, [topic], group, f"C{i}") for i in range(3)]
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
    bs, topic, group = kafka_emulator.bootstrap_server, unique("kp-kill"), unique("kp-g")
    create_topic(kafka_emulator, topic, 6)
    live = [kafka_python_consumer(bs, [topic], group, f"C{i}") for i in range(2)]
    victim = ConsumerProcess("kafka-python", bs, topic, group, "C9")
    try:
        wait_until(lambda: victim.assigned and all(c.assigned for c in live)
                   and disjoint_and_complete([c.assigned for c in live] + [victim.assigned], tps(topic, 6)),
                   timeout=45, what="3-way assignment")
        victim.kill()
        killed_at = time.time()
        wait_until(lambda: disjoint_and_complete([c.assigned for c in live], tps(topic, 6)), timeout=30,
                   what="reassignment after the session timeout")
        assert time.time() - killed_at >= 4.0     # no LeaveGroup: only the 6 s session timeout moved them
    finally:
        victim.kill()
        for c in live:
            c.close()


def test_commit_close_and_resume_after_the_committed_offset(kafka_emulator):
    bs, topic, group = kafka_emulator.bootstrap_server, unique("kp-commit"), unique("kp-g")
    create_topic(kafka_emulator, topic, 2)
    append_records(kafka_emulator, topic, 10)
    first = kafka_python_consumer(bs, [topic], group, "C1")
    wait_until(lambda: len(first.records) >= 20, what="first read")

    def commit(c):
        from kafka import OffsetAndMetadata, TopicPartition
        c.commit({TopicPartition(topic, 0): OffsetAndMetadata(4, "", -1),
                  TopicPartition(topic, 1): OffsetAndMetadata(7, "", -1)})
    first.call(commit)
    first.close()
    second = kafka_python_consumer(bs, [topic], group, "C2")
    try:
        wait_until(lambda: len(second.records) >= 9, what="resumed read")
        firsts = {p: min(o for t, pp, o in second.records if pp == p) for p in (0, 1)}
        assert firsts == {0: 4, 1: 7}
        assert len(second.records) == 9
    finally:
        second.close()


def test_static_member_restart_keeps_partitions_without_rebalance(kafka_emulator):
    bs, topic, group = kafka_emulator.bootstrap_server, unique("kp-static"), unique("kp-g")
    create_topic(kafka_emulator, topic, 4)
    other = ConsumerProcess("kafka-python", bs, topic, group, "C1", instance_id="inst-1")
    member = ConsumerProcess("kafka-python", bs, topic, group, "C2", instance_id="inst-2")
    try:
        wait_until(lambda: member.assigned and other.assigned
                   and disjoint_and_complete([member.assigned, other.assigned], tps(topic, 4)),
                   timeout=45, what="static assignment")
        before_member, before_other = set(member.assigned), set(other.assigned)
        n_transitions = len(kafka_emulator.group_transitions(group))
        member.kill()
        member = ConsumerProcess("kafka-python", bs, topic, group, "C2", instance_id="inst-2")
        wait_until(lambda: member.assigned, timeout=30, what="restarted static member's assignment")
        assert member.assigned == before_member and other.assigned == before_other
        assert len(kafka_emulator.group_transitions(group)) == n_transitions   # no rebalance at all
    finally:
        member.kill()
        other.kill()


RANGE = [((4, 4), {"C1": ["T1P0", "T1P1", "T2P0", "T2P1"], "C2": ["T1P2", "T1P3", "T2P2", "T2P3"]}),
         ((3, 3), {"C1": ["T1P0", "T1P1", "T2P0", "T2P1"], "C2": ["T1P2", "T2P2"]}),
         ((3, 4), {"C1": ["T1P0", "T1P1", "T2P0", "T2P1"], "C2": ["T1P2", "T2P2", "T2P3"]})]
ROUND_ROBIN = [((4, 4), {"C1": ["T1P0", "T1P2", "T2P0", "T2P2"], "C2": ["T1P1", "T1P3", "T2P1", "T2P3"]}),
               ((3, 3), {"C1": ["T1P0", "T1P2", "T2P1"], "C2": ["T1P1", "T2P0", "T2P2"]}),
               ((3, 4), {"C1": ["T1P0", "T1P2", "T2P1", "T2P3"], "C2": ["T1P1", "T2P0", "T2P2"]})]


def seed_example(kafka_emulator, assignor, counts, expected):
    bs, prefix, group = kafka_emulator.bootstrap_server, unique("kp-seed"), unique("kp-g")
    names = {"T1": f"{prefix}-T1", "T2": f"{prefix}-T2"}
    for short, n in zip(("T1", "T2"), counts):
        create_topic(kafka_emulator, names[short], n)
    universe = {(names[t], p) for t, n in zip(("T1", "T2"), counts) for p in range(n)}
    cs = {cid: kafka_python_consumer(bs, list(names.values()), group, cid, partition_assignment_strategy=(assignor,))
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
    from kafka.coordinator.assignors.range import RangePartitionAssignor
    seed_example(kafka_emulator, RangePartitionAssignor, counts, expected)


@pytest.mark.parametrize("counts,expected", ROUND_ROBIN)
def test_seed_round_robin_examples(kafka_emulator, counts, expected):
    from kafka.coordinator.assignors.roundrobin import RoundRobinPartitionAssignor
    seed_example(kafka_emulator, RoundRobinPartitionAssignor, counts, expected)


def test_seed_sticky_example_c1_c2_keep_their_partitions_when_c0_leaves(kafka_emulator):
    from kafka.coordinator.assignors.sticky.sticky_assignor import StickyPartitionAssignor
    bs, prefix, group = kafka_emulator.bootstrap_server, unique("kp-sticky"), unique("kp-g")
    topics = [f"{prefix}-t{i}" for i in range(4)]
    for t in topics:
        create_topic(kafka_emulator, t, 2)
    universe = {(t, p) for t in topics for p in range(2)}
    cs = {cid: kafka_python_consumer(bs, topics, group, cid, partition_assignment_strategy=(StickyPartitionAssignor,))
          for cid in ("c0", "c1", "c2")}
    try:
        wait_until(lambda: all(c.assigned for c in cs.values())
                   and disjoint_and_complete([c.assigned for c in cs.values()], universe), what="three-member assignment")
        assert sorted(len(c.assigned) for c in cs.values()) == [2, 3, 3]
        before = {cid: set(cs[cid].assigned) for cid in ("c1", "c2")}
        cs["c0"].close()
        wait_until(lambda: disjoint_and_complete([cs["c1"].assigned, cs["c2"].assigned], universe),
                   what="two-member assignment")
        for cid in ("c1", "c2"):
            assert cs[cid].assigned >= before[cid]
            assert len(cs[cid].assigned) == 4
    finally:
        for cid in ("c1", "c2"):
            cs[cid].close()


def test_admin_lists_describes_and_deletes_groups_and_offsets(kafka_emulator):
    from kafka import KafkaAdminClient, OffsetAndMetadata, TopicPartition
    bs, topic, group = kafka_emulator.bootstrap_server, unique("kp-admin"), unique("kp-g")
    create_topic(kafka_emulator, topic, 2)
    c = kafka_python_consumer(bs, [topic], group, "C1")
    admin = KafkaAdminClient(bootstrap_servers=bs)
    try:
        wait_until(lambda: c.assigned == tps(topic, 2), what="assignment")
        c.call(lambda k: k.commit({TopicPartition(topic, 0): OffsetAndMetadata(3, "m", -1)}))
        listed = {g["group_id"]: g for g in admin.list_groups()}
        assert listed[group] == {"group_id": group, "protocol_type": "consumer", "group_state": "Stable",
                                 "group_type": "classic"}
        assert group in {g["group_id"] for g in admin.list_groups(states_filter=["Stable"])}
        assert group not in {g["group_id"] for g in admin.list_groups(states_filter=["Empty"])}
        desc = admin.describe_groups([group])[group]
        assert desc["error"] is None and desc["group_state"] == "Stable"
        assert desc["protocol_type"] == "consumer" and desc["protocol_data"] == "range"
        [member] = desc["members"]
        assert member["client_id"] == "C1" and member["client_host"].startswith("/127.0.0.1")
        assert topic in member["member_metadata"]["topics"]
        assigned = {(t["topic"], p) for t in member["member_assignment"]["assigned_partitions"] for p in t["partitions"]}
        assert assigned == tps(topic, 2)
        offsets = admin.list_group_offsets({group: None})[group]
        assert {tp.partition: om.offset for tp, om in offsets.items()} == {0: 3}
        refused = admin.delete_groups([group])
        assert "NonEmptyGroup" in repr(refused) or "NON_EMPTY" in repr(refused).upper(), refused
        c.close()
        wait_until(lambda: admin.describe_groups([group])[group]["group_state"] == "Empty", what="empty group")
        admin.delete_group_offsets(group, [TopicPartition(topic, 0)])
        assert admin.list_group_offsets({group: None})[group] == {}
        deleted = admin.delete_groups([group])
        assert "Error" not in repr(deleted), deleted
        assert admin.describe_groups([group])[group]["group_state"] == "Dead"
        assert group not in {g["group_id"] for g in admin.list_groups()}
    finally:
        admin.close()
        if not c.closed.is_set():
            c.close()
