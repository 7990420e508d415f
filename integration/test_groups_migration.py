"""Online group migration (group.consumer.migration.policy=bidirectional, Kafka 4.x's default) with
real clients in one group: kafka-python (the classic protocol) and confluent-kafka with
``group.protocol=consumer``. A consumer-protocol member joining a classic group upgrades it and the
classic members keep consuming through JoinGroup/SyncGroup/Heartbeat; when it leaves, the group is
classic again and the classic members rebalance among themselves. And the other way round: a classic
member joins a consumer group."""
import pytest

from kafkaemu.testing import KafkaEmulator

from .group_clients import (append_records, confluent_consumer, create_topic, disjoint_and_complete,
                            kafka_python_consumer, tps, unique, wait_until)
from .test_groups_kip848 import kip848_consumer

pytestmark = pytest.mark.timeout(120)


@pytest.fixture(scope="module")
def emulator():
    extra = {"group.consumer.session.timeout.ms": 6000, "group.consumer.heartbeat.interval.ms": 500,
             "group.consumer.min.session.timeout.ms": 6000, "group.consumer.min.heartbeat.interval.ms": 500}
    with KafkaEmulator(extra=extra) as emu:
        yield emu


def group_type(emulator, group):
    return emulator.call(lambda broker: (lambda g: None if g is None else g.type.value)(
        broker.coordinator.group(group)))


def shared(cs, universe) -> bool:
    views = [set(c.assigned) for c in cs]
    return all(views) and disjoint_and_complete(views, universe)


@pytest.mark.parametrize("classic_consumer", [kafka_python_consumer, confluent_consumer],
                         ids=["kafka-python", "confluent-classic"])
def test_a_consumer_protocol_member_upgrades_a_classic_group_and_leaving_downgrades_it(emulator, classic_consumer):
    bs, topic, group = emulator.bootstrap_server, unique("migrate-up"), unique("migrate-g")
    create_topic(emulator, topic, 6)
    classic = [classic_consumer(bs, [topic], group, f"classic-{i}") for i in range(2)]
    modern = None
    try:
        wait_until(lambda: shared(classic, tps(topic, 6)), what="the classic group's assignment")
        assert group_type(emulator, group) == "classic"
        modern = kip848_consumer(bs, [topic], group, "modern")
        wait_until(lambda: shared(classic + [modern], tps(topic, 6)), what="three-way assignment after the upgrade")
        assert group_type(emulator, group) == "consumer"
        members = emulator.call(lambda broker: {mid: m.uses_classic_protocol for mid, m in
                                                broker.coordinator.group(group).members.items()})
        assert sorted(members.values()) == [False, True, True]
        # a classic member of the consumer group reads and commits with its generation
        append_records(emulator, topic, 5)
        wait_until(lambda: len(classic[0].records) >= 5 * len(classic[0].assigned), what="classic reads")
        classic[0].call(lambda c: c.commit(asynchronous=False) if classic_consumer is confluent_consumer
                        else c.commit())   # an error if refused
        committed = emulator.call(lambda broker: broker.coordinator.fetch_offsets(
            broker._clock(), group, [(topic, sorted(p for _, p in classic[0].assigned))]))
        assert {p["committed_offset"] for t in committed["topics"] for p in t["partitions"]} == {5}, committed
        modern.close()
        modern = None
        wait_until(lambda: group_type(emulator, group) == "classic" and shared(classic, tps(topic, 6)),
                   what="the classic group again, split between the classic members")
        assert all(c.error is None for c in classic)
    finally:
        for c in classic + ([modern] if modern else []):
            c.close()


@pytest.mark.parametrize("classic_consumer", [kafka_python_consumer, confluent_consumer],
                         ids=["kafka-python", "confluent-classic"])
def test_a_classic_member_joins_a_consumer_group(emulator, classic_consumer):
    bs, topic, group = emulator.bootstrap_server, unique("migrate-join"), unique("migrate-g")
    create_topic(emulator, topic, 4)
    modern = kip848_consumer(bs, [topic], group, "modern")
    classic = None
    try:
        wait_until(lambda: modern.assigned == tps(topic, 4), what="the consumer group's assignment")
        classic = classic_consumer(bs, [topic], group, "classic")
        wait_until(lambda: shared([modern, classic], tps(topic, 4)), what="the classic member sharing the group")
        assert group_type(emulator, group) == "consumer"
        classic.close()
        classic = None
        wait_until(lambda: modern.assigned == tps(topic, 4), what="the consumer member taking everything back")
        assert group_type(emulator, group) == "consumer" and modern.error is None
    finally:
        for c in [modern] + ([classic] if classic else []):
            c.close()
