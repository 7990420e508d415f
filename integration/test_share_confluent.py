"""Share groups (KIP-932) with confluent-kafka's ShareConsumer (librdkafka's share consumer) against
an in-process emulator with a manual clock: members together receive every record once, RELEASE
brings a record back with a higher delivery count, REJECT archives it, a lapsed lock (advanced on
the manual clock) brings a record back, and the delivery-count limit archives it for good."""
from __future__ import annotations

import time

import pytest

from .group_clients import unique

ck = pytest.importorskip("confluent_kafka")
if not hasattr(ck, "ShareConsumer"):
    pytest.skip(f"confluent-kafka {ck.version()[0]} has no ShareConsumer (2.15+ has the preview)",
                allow_module_level=True)

pytestmark = pytest.mark.timeout(180)


@pytest.fixture(scope="module")
def emulator():
    from kafkaemu.testing import KafkaEmulator
    with KafkaEmulator(manual_clock=True) as emu:
        yield emu


def setup(emulator, partitions: int, count: int, **group_configs) -> tuple[str, str]:
    from confluent_kafka.admin import AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource, ResourceType
    topic, group = unique("ckshare"), unique("ckshare-g")
    emulator.create_topic(topic, partitions)
    admin = AdminClient({"bootstrap.servers": emulator.bootstrap_server})
    entries = [ConfigEntry(k, v, incremental_operation=AlterConfigOpType.SET)
               for k, v in {"share.auto.offset.reset": "earliest", **group_configs}.items()]
    for future in admin.incremental_alter_configs([ConfigResource(ResourceType.GROUP, group,
                                                                  incremental_configs=entries)]).values():
        future.result(timeout=30)
    producer = ck.Producer({"bootstrap.servers": emulator.bootstrap_server, "linger.ms": 5})
    for i in range(count):
        producer.produce(topic, value=b"v%d" % i, partition=i % partitions)
    assert producer.flush(30) == 0
    return topic, group


def consumer(emulator, group: str, topic: str, explicit: bool = False):
    c = ck.ShareConsumer({"bootstrap.servers": emulator.bootstrap_server, "group.id": group,
                          "share.acknowledgement.mode": "explicit" if explicit else "implicit"})
    c.subscribe([topic])
    return c


def poll_until(c, at_least: int, timeout: float = 30.0) -> list:
    out = []
    deadline = time.monotonic() + timeout
    while len(out) < at_least and time.monotonic() < deadline:
        for m in c.poll(0.2):
            assert m.error() is None, m.error()
            out.append(m)
    return out


def test_two_consumers_receive_every_record_once(emulator):
    topic, group = setup(emulator, 2, 40)
    members = [consumer(emulator, group, topic) for _ in range(2)]
    try:
        values = []
        deadline = time.monotonic() + 60
        while len(values) < 40 and time.monotonic() < deadline:
            for c in members:
                values += [m.value() for m in c.poll(0.1) if m.error() is None]
        for c in members:
            c.commit_sync()
        assert sorted(values) == sorted(b"v%d" % i for i in range(40))
    finally:
        for c in members:
            c.close()


def test_release_redelivers_and_reject_archives(emulator):
    topic, group = setup(emulator, 1, 3)
    c = consumer(emulator, group, topic, explicit=True)
    try:
        first = poll_until(c, 3)
        assert [m.value() for m in first] == [b"v0", b"v1", b"v2"]
        how = {b"v0": ck.AcknowledgeType.ACCEPT, b"v1": ck.AcknowledgeType.RELEASE, b"v2": ck.AcknowledgeType.REJECT}
        for m in first:
            c.acknowledge(m, how[m.value()])
        c.commit_sync()
        again = poll_until(c, 1)
        assert [(m.value(), m.delivery_count()) for m in again] == [(b"v1", 2)]
        c.acknowledge(again[0], ck.AcknowledgeType.ACCEPT)
        c.commit_sync()
        assert poll_until(c, 1, timeout=2) == []
    finally:
        c.close()


def test_a_lapsed_lock_on_the_manual_clock_brings_the_record_back(emulator):
    topic, group = setup(emulator, 1, 1)
    c = consumer(emulator, group, topic)
    try:
        first = poll_until(c, 1)
        assert [(m.value(), m.delivery_count()) for m in first] == [(b"v0", 1)]
        emulator.advance_clock(30_000)
        again = poll_until(c, 1)
        assert [(m.value(), m.delivery_count()) for m in again] == [(b"v0", 2)]
    finally:
        c.close()


def test_the_delivery_count_limit_archives_the_record(emulator):
    topic, group = setup(emulator, 1, 1, **{"share.delivery.count.limit": "2"})
    c = consumer(emulator, group, topic, explicit=True)
    try:
        for delivery in (1, 2):
            got = poll_until(c, 1)
            assert [(m.value(), m.delivery_count()) for m in got] == [(b"v0", delivery)]
            c.acknowledge(got[0], ck.AcknowledgeType.RELEASE)
            c.commit_sync()
        assert poll_until(c, 1, timeout=2) == []
    finally:
        c.close()


def test_a_restart_with_a_data_dir_redelivers_nothing_accepted_and_loses_nothing(tmp_path):
    from kafkaemu.testing import KafkaEmulator
    with KafkaEmulator(data_dir=str(tmp_path)) as first:
        topic, group = setup(first, 1, 20)
        c = consumer(first, group, topic, explicit=True)
        got = poll_until(c, 1)
        accepted = [m.value() for m in got[:10]]
        for m in got[:10]:
            c.acknowledge(m, ck.AcknowledgeType.ACCEPT)
        for m in got[10:]:
            c.acknowledge(m, ck.AcknowledgeType.RELEASE)
        c.commit_sync()
        c.close()
    with KafkaEmulator(data_dir=str(tmp_path)) as second:
        c = consumer(second, group, topic)
        rest = [m.value() for m in poll_until(c, 20 - len(accepted))]
        c.commit_sync()
        c.close()
    assert not set(rest) & set(accepted)
    assert sorted(accepted + rest) == sorted(b"v%d" % i for i in range(20))


def test_a_small_fetch_max_bytes_gives_one_record_per_batch(emulator):
    """librdkafka's 0171: records produced one batch each, fetched with a small fetch.max.bytes,
    come one to a ShareFetch (Kafka reads at least one batch, and no more than max_bytes)."""
    from confluent_kafka.admin import AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource, ResourceType
    topic, group = unique("ckshare"), unique("ckshare-g")
    emulator.create_topic(topic, 1)
    admin = AdminClient({"bootstrap.servers": emulator.bootstrap_server})
    entry = ConfigEntry("share.auto.offset.reset", "earliest", incremental_operation=AlterConfigOpType.SET)
    for future in admin.incremental_alter_configs([ConfigResource(ResourceType.GROUP, group,
                                                                  incremental_configs=[entry])]).values():
        future.result(timeout=30)
    producer = ck.Producer({"bootstrap.servers": emulator.bootstrap_server, "linger.ms": 0})
    for i in range(6):
        producer.produce(topic, value=b"v%d" % i)
        assert producer.flush(30) == 0
    c = ck.ShareConsumer({"bootstrap.servers": emulator.bootstrap_server, "group.id": group,
                          "fetch.max.bytes": 100, "message.max.bytes": 1000, "receive.message.max.bytes": 2000})
    c.subscribe([topic])
    try:
        batches = []
        deadline = time.monotonic() + 30
        while sum(len(b) for b in batches) < 6 and time.monotonic() < deadline:
            got = c.poll(0.2)
            if got:
                batches.append([m.value() for m in got])
        assert batches == [[b"v%d" % i] for i in range(6)]
    finally:
        c.close()


_HOLDER = """
import sys, confluent_kafka as ck
c = ck.ShareConsumer({"bootstrap.servers": sys.argv[1], "group.id": sys.argv[2],
                      "share.acknowledgement.mode": "explicit"})
c.subscribe([sys.argv[3]])
got = 0
while got < int(sys.argv[4]):
    got += sum(1 for m in c.poll(0.2) if m.error() is None)
print(got, flush=True)
sys.stdin.read()   # holds its records, unacknowledged, until it is killed
"""


def test_a_killed_consumers_records_go_to_another_at_once(emulator):
    """Kafka's ShareSessionCache hears of a dropped connection and releases the records its share
    session held; on the manual clock the locks never lapse, so only the disconnect can free them."""
    import subprocess
    import sys
    topic, group = setup(emulator, 1, 3)
    holder = subprocess.Popen([sys.executable, "-c", _HOLDER, emulator.bootstrap_server, group, topic, "3"],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "3"
        other = consumer(emulator, group, topic)
        try:
            assert poll_until(other, 1, timeout=3) == []   # all three are held
            holder.kill()
            holder.wait(30)
            again = poll_until(other, 3)
            assert sorted((m.value(), m.delivery_count()) for m in again) == [(b"v0", 2), (b"v1", 2), (b"v2", 2)]
        finally:
            other.close()
    finally:
        holder.kill()
        holder.wait(30)


@pytest.fixture(scope="module")
def cluster():
    """Three nodes: a consumer's group coordinator and its partition's leader on different
    connections, so its leave heartbeat and its last acknowledgements race as against Kafka."""
    from kafkaemu.testing import KafkaEmulator
    with KafkaEmulator(nodes=3) as emu:
        yield emu


@pytest.mark.parametrize("round_", range(3))
def test_close_commits_the_accepted_records_and_releases_the_rest(cluster, round_):
    """confluent-kafka's test_explicit_accept_prevents_redelivery and
    test_explicit_close_partial_acks_releases_remainder: records accepted just before close() are
    never delivered again and their receipts carry no error; the rest go to the next consumer."""
    topic, group = setup(cluster, 1, 4)
    receipts = []
    first = consumer(cluster, group, topic, explicit=True)
    first.set_acknowledgement_commit_callback(lambda offsets, error: receipts.append((offsets, error)))
    try:
        got = poll_until(first, 4)
        assert sorted(m.value() for m in got) == [b"v0", b"v1", b"v2", b"v3"]
        accepted = sorted(got, key=lambda m: m.offset())[:2]
        for m in accepted:
            first.acknowledge(m, ck.AcknowledgeType.ACCEPT)
    finally:
        first.close()
    assert receipts and all(error is None for _, error in receipts), receipts
    assert {o for offsets, _ in receipts for found in offsets.values() for o in found} == {0, 1}
    second = consumer(cluster, group, topic, explicit=True)
    try:
        again = poll_until(second, 2)
        for m in again:
            second.acknowledge(m, ck.AcknowledgeType.ACCEPT)
        again += poll_until(second, 1, timeout=1.0)
        assert sorted(m.value() for m in again) == [b"v2", b"v3"]
    finally:
        second.close()
