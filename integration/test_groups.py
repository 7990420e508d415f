"""Consumer groups against kafkaemu, the same scenarios for kafka-python, confluent-kafka (librdkafka)
and aiokafka (one adapter each in group_clients.py, test ids name the client): assignment and
rebalance on close, a killed member moved by the session timeout, commit/close/resume, static
membership, the seeds' Range/RoundRobin examples, the sticky assignors' stickiness and the admin
group APIs."""
import time

import pytest

from .group_clients import (CLIENTS, ConsumerProcess, append_records, create_topic, disjoint_and_complete, tps,
                            unique, wait_until)

pytestmark = pytest.mark.timeout(120)


@pytest.fixture(params=list(CLIENTS.values()), ids=str)
def client(request):
    return request.param


def test_three_consumers_split_six_partitions_and_close_moves_them(kafka_emulator, client):
    bs, topic, group = kafka_emulator.bootstrap_server, unique(f"{client}-six"), unique(f"{client}-g")
    create_topic(kafka_emulator, topic, 6)
    cs = [client.consumer(bs, [topic], group, f"C{i}") for i in range(3)]
    try:
        wait_until(lambda: all(c.assigned for c in cs) and disjoint_and_complete([c.assigned for c in cs], tps(topic, 6)),
                   what="3-way assignment")
        assert sorted(len(c.assigned) for c in cs) == [2, 2, 2]
        closed_at = time.time()
        cs[0].close()
        wait_until(lambda: disjoint_and_complete([c.assigned for c in cs[1:]], tps(topic, 6)), what="2-way assignment")
        if client.checks_prompt_leave:
            assert time.time() - closed_at < 4.0      # a LeaveGroup, not the session timeout
        assert sorted(len(c.assigned) for c in cs[1:]) == [3, 3]
        assert all(c.error is None for c in cs)
    finally:
        for c in cs[1:]:
            c.close()
    if client.checks_prompt_leave:
        # generations start at 1 (the first one handed out, stable or not: a consumer joining after
        # the initial rebalance delay can send the group back to PreparingRebalance before it is)
        generations = [t.generation_id for t in kafka_emulator.group_transitions(group)
                       if t.to_state.value == "CompletingRebalance"]
        assert generations[0] == 1


def test_killed_consumer_partitions_move_after_the_session_timeout(kafka_emulator, client):
    bs, topic, group = kafka_emulator.bootstrap_server, unique(f"{client}-kill"), unique(f"{client}-g")
    create_topic(kafka_emulator, topic, 6)
    live = [client.consumer(bs, [topic], group, f"C{i}") for i in range(2)]
    victim = ConsumerProcess(client.name, bs, topic, group, "C9")
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


def test_commit_close_and_resume_after_the_committed_offset(kafka_emulator, client):
    bs, topic, group = kafka_emulator.bootstrap_server, unique(f"{client}-commit"), unique(f"{client}-g")
    create_topic(kafka_emulator, topic, 2)
    append_records(kafka_emulator, topic, 10)
    first = client.consumer(bs, [topic], group, "C1")
    wait_until(lambda: len(first.records) >= 20, what="first read")
    client.commit(first, {(topic, 0): 4, (topic, 1): 7}, "")
    first.close()
    second = client.consumer(bs, [topic], group, "C2")
    try:
        wait_until(lambda: len(second.records) >= 9, what="resumed read")
        time.sleep(0.3)                           # room for a record read twice to show up
        firsts = {p: min(o for t, pp, o in second.records if pp == p) for p in (0, 1)}
        assert firsts == {0: 4, 1: 7}
        assert len(second.records) == 9
    finally:
        second.close()


def test_static_member_restart_keeps_partitions_without_rebalance(kafka_emulator, client):
    bs, topic, group = kafka_emulator.bootstrap_server, unique(f"{client}-static"), unique(f"{client}-g")
    create_topic(kafka_emulator, topic, 4)
    other = ConsumerProcess(client.name, bs, topic, group, "C1", instance_id="inst-1")
    member = ConsumerProcess(client.name, bs, topic, group, "C2", instance_id="inst-2")
    try:
        wait_until(lambda: member.assigned and other.assigned
                   and disjoint_and_complete([member.assigned, other.assigned], tps(topic, 4)),
                   timeout=45, what="static assignment")
        before_member, before_other = set(member.assigned), set(other.assigned)
        n_transitions = len(kafka_emulator.group_transitions(group))
        member.kill()
        member = ConsumerProcess(client.name, bs, topic, group, "C2", instance_id="inst-2")
        wait_until(lambda: member.assigned, timeout=30, what="restarted static member's assignment")
        assert member.assigned == before_member and other.assigned == before_other
        assert len(kafka_emulator.group_transitions(group)) == n_transitions   # no rebalance at all
    finally:
        member.kill()
        other.kill()


# The seeds' examples: two consumers C1, C2 subscribed to T1 and T2 with (T1, T2) partitions each.
SEED_IDS = ["4+4", "3+3", "3+4"]
RANGE = [((4, 4), {"C1": ["T1P0", "T1P1", "T2P0", "T2P1"], "C2": ["T1P2", "T1P3", "T2P2", "T2P3"]}),
         ((3, 3), {"C1": ["T1P0", "T1P1", "T2P0", "T2P1"], "C2": ["T1P2", "T2P2"]}),
         ((3, 4), {"C1": ["T1P0", "T1P1", "T2P0", "T2P1"], "C2": ["T1P2", "T2P2", "T2P3"]})]
ROUND_ROBIN = [((4, 4), {"C1": ["T1P0", "T1P2", "T2P0", "T2P2"], "C2": ["T1P1", "T1P3", "T2P1", "T2P3"]}),
               ((3, 3), {"C1": ["T1P0", "T1P2", "T2P1"], "C2": ["T1P1", "T2P0", "T2P2"]}),
               ((3, 4), {"C1": ["T1P0", "T1P2", "T2P1", "T2P3"], "C2": ["T1P1", "T2P0", "T2P2"]})]


def seed_example(kafka_emulator, client, assignor, counts, expected):
    bs, prefix, group = kafka_emulator.bootstrap_server, unique(f"{client}-seed"), unique(f"{client}-g")
    names = {"T1": f"{prefix}-T1", "T2": f"{prefix}-T2"}
    for short, n in zip(("T1", "T2"), counts):
        create_topic(kafka_emulator, names[short], n)
    universe = {(names[t], p) for t, n in zip(("T1", "T2"), counts) for p in range(n)}
    cs = {cid: client.consumer(bs, list(names.values()), group, cid, assignor=assignor) for cid in ("C1", "C2")}
    try:
        wait_until(lambda: all(c.assigned for c in cs.values())
                   and disjoint_and_complete([c.assigned for c in cs.values()], universe), what="two-member assignment")
        back = {v: k for k, v in names.items()}
        got = {cid: sorted(f"{back[t]}P{p}" for t, p in c.assigned) for cid, c in cs.items()}
        assert got == {cid: sorted(v) for cid, v in expected.items()}
    finally:
        for c in cs.values():
            c.close()


@pytest.mark.parametrize("counts,expected", RANGE, ids=SEED_IDS)
def test_seed_range_examples(kafka_emulator, client, counts, expected):
    seed_example(kafka_emulator, client, "range", counts, expected)


@pytest.mark.parametrize("counts,expected", ROUND_ROBIN, ids=SEED_IDS)
def test_seed_round_robin_examples(kafka_emulator, client, counts, expected):
    seed_example(kafka_emulator, client, "roundrobin", counts, expected)


# Only these clients have these assignors: kafka-python's eager sticky, librdkafka's cooperative one.
@pytest.mark.parametrize("client_name,assignor", [("kafka-python", "sticky"), ("confluent-kafka", "cooperative-sticky")],
                         ids=["kafka-python-sticky", "confluent-kafka-cooperative-sticky"])
def test_sticky_c1_c2_keep_their_partitions_when_c0_leaves(kafka_emulator, client_name, assignor):
    client, cooperative = CLIENTS[client_name], assignor.startswith("cooperative")
    bs, prefix, group = kafka_emulator.bootstrap_server, unique(f"{client}-sticky"), unique(f"{client}-g")
    topics = [f"{prefix}-t{i}" for i in range(4)]
    for t in topics:
        create_topic(kafka_emulator, t, 2)
    universe = {(t, p) for t in topics for p in range(2)}
    cs = {cid: client.consumer(bs, topics, group, cid, assignor=assignor) for cid in ("c0", "c1", "c2")}
    try:
        # a cooperative rebalance hands partitions out in two steps: wait for the final shape
        wait_until(lambda: all(c.assigned for c in cs.values())
                   and disjoint_and_complete([c.assigned for c in cs.values()], universe)
                   and (not cooperative or sorted(len(c.assigned) for c in cs.values()) == [2, 3, 3]),
                   what="three-member assignment")
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


def reported(admin, kind: str, **facts) -> dict:
    """``facts`` as this client's admin API gives them: None for what it does not report."""
    return {k: None if f"{kind}.{k}" in admin.unreported else v for k, v in facts.items()}


def test_admin_lists_describes_and_deletes_groups_and_offsets(kafka_emulator, client):
    bs, topic, group = kafka_emulator.bootstrap_server, unique(f"{client}-admin"), unique(f"{client}-g")
    create_topic(kafka_emulator, topic, 2)
    c = client.consumer(bs, [topic], group, "C1")
    admin = client.admin(bs)
    try:
        wait_until(lambda: c.assigned == tps(topic, 2), what="assignment")
        client.commit(c, {(topic, 0): 3}, "m")
        assert admin.listing()[group] == reported(admin, "listing", protocol_type="consumer", state="Stable",
                                                  type="classic")
        if admin.filters_states:
            assert group in admin.listing("Stable") and group not in admin.listing("Empty")
        member = reported(admin, "member", client_id="C1", host="/127.0.0.1", assigned=tps(topic, 2), topics={topic})
        assert admin.describe(group) == {**reported(admin, "describe", state="Stable", protocol_type="consumer",
                                                    assignor=client.default_assignor), "members": [member]}
        assert admin.offsets(group) == {(topic, 0): (3, "m")}
        if not admin.deletes_groups:
            return
        assert admin.delete(group) == "NON_EMPTY_GROUP"
        c.close()
        wait_until(lambda: admin.describe(group)["state"] == "Empty", what="empty group")
        if admin.deletes_offsets:
            admin.delete_offsets(group, [(topic, 0)])
            assert admin.offsets(group) == {}
        assert admin.delete(group) is None
        assert admin.delete(group) == "GROUP_ID_NOT_FOUND"
        assert admin.describe(group)["state"] == "Dead"
        assert group not in admin.listing()
    finally:
        admin.close()
        if not c.closed.is_set():
            c.close()
