"""Consumer groups with aiokafka against kafkaemu: assignment, LeaveGroup on stop (aiokafka only
leaves when its generation is above 0, so the first stable generation must be 1), a killed member,
commit/resume, static membership and the admin group APIs."""
import asyncio
import time

import pytest

from .group_clients import (SESSION_MS, ConsumerProcess, append_records, create_topic, disjoint_and_complete,
                            unique, wait_until)

pytestmark = pytest.mark.timeout(120)


def tps(topic, n):
    return {(topic, p) for p in range(n)}


def consumer(bs, topic, group, client_id, **extra):
    from aiokafka import AIOKafkaConsumer
    return AIOKafkaConsumer(topic, bootstrap_servers=bs, group_id=group, client_id=client_id,
                            session_timeout_ms=SESSION_MS, heartbeat_interval_ms=500, auto_offset_reset="earliest",
                            enable_auto_commit=False, **extra)


def assigned(c):
    return {(tp.topic, tp.partition) for tp in c.assignment()}


async def async_wait(predicate, consumers, timeout=30.0, what="condition"):
    deadline = time.time() + timeout
    while time.time() < deadline:
        await asyncio.gather(*(c.getmany(timeout_ms=50) for c in consumers))
        if predicate():
            return
    raise AssertionError(f"timed out waiting for {what}")


def test_three_consumers_split_six_partitions_and_stop_leaves_at_once(kafka_emulator):
    bs, topic, group = kafka_emulator.bootstrap_server, unique("aio-six"), unique("aio-g")
    create_topic(kafka_emulator, topic, 6)

    async def main():
        cs = [consumer(bs, topic, group, f"C{i}") for i in range(3)]
        for c in cs:
            await c.start()
        try:
            await async_wait(lambda: all(assigned(c) for c in cs)
                             and disjoint_and_complete([assigned(c) for c in cs], tps(topic, 6)), cs, what="3-way")
            assert sorted(len(assigned(c)) for c in cs) == [2, 2, 2]
            started = time.time()
            await cs[0].stop()
            await async_wait(lambda: disjoint_and_complete([assigned(c) for c in cs[1:]], tps(topic, 6)), cs[1:],
                             what="2-way")
            assert time.time() - started < 4.0      # a LeaveGroup, not the session timeout
            assert sorted(len(assigned(c)) for c in cs[1:]) == [3, 3]
        finally:
            for c in cs[1:]:
                await c.stop()
    asyncio.run(main())
    generations = [t.generation_id for t in kafka_emulator.group_transitions(group) if t.to_state.value == "Stable"]
    assert generations[0] == 1


def test_killed_consumer_partitions_move_after_the_session_timeout(kafka_emulator):
    bs, topic, group = kafka_emulator.bootstrap_server, unique("aio-kill"), unique("aio-g")
    create_topic(kafka_emulator, topic, 6)
    victim = ConsumerProcess("aiokafka", bs, topic, group, "C9")

    async def main():
        live = [consumer(bs, topic, group, f"C{i}") for i in range(2)]
        for c in live:
            await c.start()
        try:
            await async_wait(lambda: victim.assigned and all(assigned(c) for c in live)
                             and disjoint_and_complete([assigned(c) for c in live] + [victim.assigned], tps(topic, 6)),
                             live, timeout=45, what="3-way")
            victim.kill()
            killed_at = time.time()
            await async_wait(lambda: disjoint_and_complete([assigned(c) for c in live], tps(topic, 6)), live,
                             what="reassignment after the session timeout")
            assert time.time() - killed_at >= 4.0
        finally:
            for c in live:
                await c.stop()
    try:
        asyncio.run(main())
    finally:
        victim.kill()


def test_commit_stop_and_resume_after_the_committed_offset(kafka_emulator):
    from aiokafka import TopicPartition
    bs, topic, group = kafka_emulator.bootstrap_server, unique("aio-commit"), unique("aio-g")
    create_topic(kafka_emulator, topic, 2)
    append_records(kafka_emulator, topic, 10)

    async def main():
        first = consumer(bs, topic, group, "C1")
        await first.start()
        got = 0
        deadline = time.time() + 30
        while got < 20 and time.time() < deadline:
            batches = await first.getmany(timeout_ms=100)
            got += sum(len(v) for v in batches.values())
        await first.commit({TopicPartition(topic, 0): 4, TopicPartition(topic, 1): 7})
        await first.stop()
        second = consumer(bs, topic, group, "C2")
        await second.start()
        records = []
        deadline = time.time() + 30
        while len(records) < 9 and time.time() < deadline:
            for tp, msgs in (await second.getmany(timeout_ms=100)).items():
                records += [(tp.partition, m.offset) for m in msgs]
        await second.stop()
        return records
    records = asyncio.run(main())
    assert {p: min(o for pp, o in records if pp == p) for p in (0, 1)} == {0: 4, 1: 7}
    assert len(records) == 9


def test_static_member_restart_keeps_partitions_without_rebalance(kafka_emulator):
    bs, topic, group = kafka_emulator.bootstrap_server, unique("aio-static"), unique("aio-g")
    create_topic(kafka_emulator, topic, 4)
    other = ConsumerProcess("aiokafka", bs, topic, group, "C1", instance_id="inst-1")
    member = ConsumerProcess("aiokafka", bs, topic, group, "C2", instance_id="inst-2")
    try:
        wait_until(lambda: member.assigned and other.assigned
                   and disjoint_and_complete([member.assigned, other.assigned], tps(topic, 4)),
                   timeout=45, what="static assignment")
        before_member, before_other = set(member.assigned), set(other.assigned)
        n_transitions = len(kafka_emulator.group_transitions(group))
        member.kill()
        member = ConsumerProcess("aiokafka", bs, topic, group, "C2", instance_id="inst-2")
        wait_until(lambda: member.assigned, timeout=30, what="restarted static member's assignment")
        assert member.assigned == before_member and other.assigned == before_other
        assert len(kafka_emulator.group_transitions(group)) == n_transitions
    finally:
        member.kill()
        other.kill()


def test_admin_lists_and_describes_groups_and_offsets(kafka_emulator):
    from aiokafka import TopicPartition
    from aiokafka.admin import AIOKafkaAdminClient
    bs, topic, group = kafka_emulator.bootstrap_server, unique("aio-admin"), unique("aio-g")
    create_topic(kafka_emulator, topic, 2)

    async def main():
        c = consumer(bs, topic, group, "C1")
        await c.start()
        admin = AIOKafkaAdminClient(bootstrap_servers=bs)
        await admin.start()
        try:
            await async_wait(lambda: assigned(c) == tps(topic, 2), [c], what="assignment")
            await c.commit({TopicPartition(topic, 1): 5})
            listed = await admin.list_consumer_groups()
            assert (group, "consumer") in [tuple(g[:2]) for g in listed]
            [resp] = await admin.describe_consumer_groups([group])
            [g] = resp.groups
            error_code, group_id, state, protocol_type, protocol, members = g[:6]
            assert (error_code, group_id, state, protocol_type, protocol) == (0, group, "Stable", "consumer", "roundrobin")  # aiokafka default
            assert len(members) == 1 and members[0][1:3] == ("C1", "/127.0.0.1")
            offsets = await admin.list_consumer_group_offsets(group)
            assert {tp.partition: om.offset for tp, om in offsets.items()} == {1: 5}
        finally:
            await admin.close()
            await c.stop()
    asyncio.run(main())
