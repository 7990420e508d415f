"""A bounded soak of classic group formation as user code writes it, on the broker's defaults: 25
rounds, each on a just-created topic and a new group, of three kafka-python consumers with a
``group.instance.id`` polling with ``poll(timeout_ms=100)``, then the same three instances restarted.

Every round must end with each consumer holding a non-empty share of a complete, disjoint split
of the partitions, and the restarted static members must get the same shares back without a
rebalance. kafka-python 3.0.12 loses its SyncGroup answer when its leader rejoins because topic
metadata arrived after the first assignment (see docs/groups.md): a broker that completes the
first generation before the leader can know the topic leaves one consumer stuck with nothing."""
import pytest

from .group_clients import CLIENTS, create_topic, disjoint_and_complete, tps, unique, wait_until

ROUNDS = 25
CONSUMERS = 3
PARTITIONS = 6

pytestmark = pytest.mark.timeout(300)


def classic_group(emulator, group_id):
    return emulator.call(lambda broker: broker.coordinator.classic.groups.get(group_id))


def split_held(emulator, group_id, cs, universe) -> bool:
    """The group is Stable with every consumer in it and each one holds its own non-empty share."""
    g = classic_group(emulator, group_id)
    views = [set(c.assigned) for c in cs]
    return (g is not None and g.state.value == "Stable" and len(g.members) == len(cs)
            and all(views) and disjoint_and_complete(views, universe))


def start(bs, topic, group_id):
    kafka_python = CLIENTS["kafka-python"]
    return [kafka_python.consumer(bs, [topic], group_id, f"C{i}", group_instance_id=f"inst-{i}")
            for i in range(CONSUMERS)]


def test_static_kafka_python_groups_form_and_restart_correctly_every_round(kafka_emulator):
    bs = kafka_emulator.bootstrap_server
    for round_no in range(ROUNDS):
        topic, group_id = unique(f"soak{round_no}"), unique(f"soak{round_no}-g")
        create_topic(kafka_emulator, topic, PARTITIONS)
        universe = tps(topic, PARTITIONS)
        cs = start(bs, topic, group_id)
        try:
            wait_until(lambda: split_held(kafka_emulator, group_id, cs, universe), timeout=30,
                       what=f"round {round_no}: three consumers sharing {PARTITIONS} partitions")
            before = [set(c.assigned) for c in cs]
            generation = classic_group(kafka_emulator, group_id).generation_id
        finally:
            for c in cs:
                c.close()
        assert all(c.error is None for c in cs), [c.error for c in cs]
        cs = start(bs, topic, group_id)           # the same instances again: static members, no LeaveGroup
        try:
            wait_until(lambda: split_held(kafka_emulator, group_id, cs, universe), timeout=30,
                       what=f"round {round_no}: the restarted consumers' shares")
            assert [set(c.assigned) for c in cs] == before
            assert classic_group(kafka_emulator, group_id).generation_id == generation   # no rebalance
        finally:
            for c in cs:
                c.close()
        assert all(c.error is None for c in cs), [c.error for c in cs]
