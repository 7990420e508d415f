"""kafkaemu's ApiVersions answer against a real Kafka 4.4.0 broker's (the differences named and
explained), and real clients negotiate Kafka 4.4's versions with kafkaemu, the request log showing
them used: the Java 4.4 client's produce/consume/commit and admin cases run at its newest versions (Produce v13
and OffsetCommit/OffsetFetch v10 by topic id, Fetch v18, ListOffsets v11, Metadata v13,
DescribeGroups v6). kafka-python 3, confluent-kafka and aiokafka send the versions their own code
stops at (kafka-python knows 4.3's tables but builds Produce v9, Fetch v12, OffsetCommit v8) and
round-trip within what kafkaemu advertises. kafka-python infers the broker version from it."""
from __future__ import annotations

import asyncio
import time
import uuid

import pytest

from kafkaemu.handlers import REGISTRY
from kafkaemu.protocol.api_keys import ApiKey

K = ApiKey


def used(emulator, client_prefix=None) -> dict[int, set[int]]:
    """api key -> the versions the logged requests (of clients whose id starts so) used."""
    out: dict[int, set[int]] = {}
    for e in emulator.requests(limit=100_000):
        if client_prefix is None or (e["client_id"] or "").startswith(client_prefix):
            out.setdefault(e["api_key"], set()).add(e["version"])
    return out


def within_range(versions, *keys):
    for key in keys:
        api = REGISTRY.get(key)
        assert versions.get(key), f"no {key.name} request logged"
        assert all(api.min_version <= v <= api.max_version for v in versions[key]), (key.name, versions[key])


# Where kafkaemu's ApiVersions answer differs from Kafka 4.4.0's, and why (docs/kafka_4_4.md):
# api key -> (Kafka's range, kafkaemu's range or None when it does not advertise the API)
API_DIFFERENCES = {
    **{key: "an inter-broker API (the share coordinator's state RPCs): kafkaemu keeps share-group state "
            "inside its coordinator and answers no broker-to-broker requests" for key in (83, 84, 85, 86, 87)},
    94: "UnregisterController: a KRaft controller API; kafkaemu emulates no controller quorum to unregister from",
}


def _api_versions(bootstrap: str, version: int = 4):
    import socket
    from kafkaemu.testing.raw_client import request
    host, port = bootstrap.rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=30) as sock:
        return request(sock, K.API_VERSIONS, version, {"client_software_name": "kafkaemu-test",
                                                       "client_software_version": "1.0"})


@pytest.mark.parametrize("version", [3, 4])
def test_api_versions_answer_kafka_4_4s(kafka44, kafka_emulator_factory, version):
    """The ApiVersions answer of a Kafka 4.4.0 broker and kafkaemu's, API by API and feature by
    feature: equal except where API_DIFFERENCES says why (skips naming Java or Maven when the reference
    broker cannot run)."""
    theirs, ours = _api_versions(kafka44.bootstrap_server, version), \
        _api_versions(kafka_emulator_factory().bootstrap_server, version)
    kafka = {k.api_key: (k.min_version, k.max_version) for k in theirs.api_keys}
    emu = {k.api_key: (k.min_version, k.max_version) for k in ours.api_keys}
    differ = {key for key in kafka.keys() | emu.keys() if kafka.get(key) != emu.get(key)}
    assert differ == set(API_DIFFERENCES), {key: (kafka.get(key), emu.get(key)) for key in differ}
    for name in ("supported_features", "finalized_features"):
        kafka_features = {f.name: tuple(v for k, v in sorted(f.items()) if k != "name") for f in theirs[name]}
        emu_features = {f.name: tuple(v for k, v in sorted(f.items()) if k != "name") for f in ours[name]}
        differ = {n for n in kafka_features.keys() | emu_features.keys() if kafka_features.get(n) != emu_features.get(n)}
        assert not differ, (name, {n: (kafka_features.get(n), emu_features.get(n)) for n in differ})


def test_kafkaemu_apis_lists_what_api_versions_advertises():
    """``kafkaemu apis``: one line per advertised API with its range, the telemetry APIs marked as
    advertised only with the telemetry reporter."""
    import subprocess
    import sys
    from kafkaemu.handlers.api_versions import advertised_api_keys
    out = subprocess.run([sys.executable, "-m", "kafkaemu", "apis"], capture_output=True, text=True, timeout=60,
                         check=True).stdout.splitlines()
    listed = {int(line.split()[0]): line.split()[2] for line in out}
    assert listed == {api["api_key"]: f"v{api['min_version']}-v{api['max_version']}"
                      for api in advertised_api_keys(client_telemetry=True)}
    assert all("only with metric.reporters=" in line for line in out if int(line.split()[0]) in (71, 72))


@pytest.fixture
def emulator(kafka_emulator_factory):
    emu = kafka_emulator_factory()
    emu.enable_request_log(capacity=100_000)
    return emu


def _topic(prefix):
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def test_kafka_python_uses_4_4_versions(emulator):
    from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
    from kafka.admin import NewTopic
    topic = _topic("v43-kp")
    admin = KafkaAdminClient(bootstrap_servers=emulator.bootstrap_server, client_id="kp-admin")
    admin.create_topics([NewTopic(topic, 2, 1)])
    producer = KafkaProducer(bootstrap_servers=emulator.bootstrap_server, client_id="kp-producer")
    for i in range(10):
        producer.send(topic, value=b"v%d" % i, partition=i % 2)
    producer.flush(30)
    producer.close()
    consumer = KafkaConsumer(topic, bootstrap_servers=emulator.bootstrap_server, client_id="kp-consumer",
                             group_id=topic, auto_offset_reset="earliest", enable_auto_commit=False,
                             consumer_timeout_ms=10000)
    values = sorted(m.value for m in consumer)
    assert values == sorted(b"v%d" % i for i in range(10))
    consumer.commit()
    tp = TopicPartition(topic, 0)
    assert consumer.committed(tp) == 5
    assert consumer.end_offsets([tp])[tp] == 5
    consumer.close()
    offsets = admin.list_group_offsets(topic)
    assert offsets, "the group's committed offsets"
    admin.close()
    within_range(used(emulator, "kp-"), K.PRODUCE, K.FETCH, K.OFFSET_COMMIT, K.OFFSET_FETCH, K.LIST_OFFSETS)
    assert not [e for e in emulator.requests(limit=100_000, errors=True)
                if e["api_key"] in (K.PRODUCE, K.FETCH, K.OFFSET_COMMIT)]


def test_kafka_python_infers_the_broker_version(emulator):
    """kafka-python probes one API version per release (broker_version_data.py): 4.3's is
    DescribeLogDirs v5, 4.2's ListOffsets v11, 4.1's Produce v13; its integration suite's
    test_kafka_version_infer expects what KAFKA_VERSION=4.3.0 names (it knows no 4.4 probe yet)."""
    from kafka import KafkaConsumer
    consumer = KafkaConsumer(bootstrap_servers=emulator.bootstrap_server, api_version=None)
    try:
        assert consumer.config["api_version"] == (4, 3)
    finally:
        consumer.close()


def test_confluent_kafka_round_trips_at_what_it_negotiates(emulator):
    from confluent_kafka import Consumer, Producer
    from confluent_kafka.admin import AdminClient, NewTopic
    topic = _topic("v43-ck")
    admin = AdminClient({"bootstrap.servers": emulator.bootstrap_server, "client.id": "ck-admin"})
    admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(30)
    producer = Producer({"bootstrap.servers": emulator.bootstrap_server, "client.id": "ck-producer"})
    for i in range(5):
        producer.produce(topic, value=b"c%d" % i)
    assert producer.flush(30) == 0
    consumer = Consumer({"bootstrap.servers": emulator.bootstrap_server, "client.id": "ck-consumer",
                         "group.id": topic, "auto.offset.reset": "earliest", "enable.auto.commit": False})
    consumer.subscribe([topic])
    got, deadline = [], time.time() + 30
    while len(got) < 5 and time.time() < deadline:
        m = consumer.poll(1.0)
        if m is not None and m.error() is None:
            got.append(m.value())
    assert got == [b"c%d" % i for i in range(5)]
    consumer.commit(asynchronous=False)
    assert consumer.committed(consumer.assignment(), 10)[0].offset == 5
    consumer.close()
    within_range(used(emulator, "ck-"), K.PRODUCE, K.FETCH, K.OFFSET_COMMIT, K.OFFSET_FETCH, K.METADATA)


def test_aiokafka_round_trips_at_what_it_negotiates(emulator):
    from aiokafka import AIOKafkaConsumer, AIOKafkaProducer

    async def run():
        topic = _topic("v43-aio")
        producer = AIOKafkaProducer(bootstrap_servers=emulator.bootstrap_server, client_id="aio-producer")
        await producer.start()
        try:
            for i in range(5):
                await producer.send_and_wait(topic, b"a%d" % i)
        finally:
            await producer.stop()
        consumer = AIOKafkaConsumer(topic, bootstrap_servers=emulator.bootstrap_server, client_id="aio-consumer",
                                    group_id=topic, auto_offset_reset="earliest", enable_auto_commit=False)
        await consumer.start()
        try:
            got = []
            while len(got) < 5:
                batch = await asyncio.wait_for(consumer.getmany(timeout_ms=1000), 30)
                got += [m.value for ms in batch.values() for m in ms]
            await consumer.commit()
        finally:
            await consumer.stop()
        return got

    assert asyncio.run(run()) == [b"a%d" % i for i in range(5)]
    within_range(used(emulator, "aio-"), K.PRODUCE, K.FETCH, K.OFFSET_COMMIT)


def test_java_4_4_client_uses_4_4_versions(kafka_emulator_factory, java_classpath):
    """The Java suite's produce/consume/commit and admin cases, and the KIP-848 consumer's (which
    commits and fetches offsets by topic id), against one emulator."""
    from integration.test_java_clients import KIP848_SETTINGS, run_case
    emulator = kafka_emulator_factory(extra=dict(KIP848_SETTINGS))
    emulator.enable_request_log(capacity=100_000)
    for case in ("commit-and-resume", "admin-list-offsets", "admin-consumer-groups", "admin-topics",
                 "group-consumer-protocol"):
        result = run_case(java_classpath, case, emulator.bootstrap_server)
        assert result.returncode == 0 and f"PASS {case} " in result.stdout, f"{case}\n{result.stdout}\n" \
                                                                             f"{result.stderr[-4000:]}"
    versions = used(emulator)
    expected = {K.PRODUCE: 13, K.FETCH: 18, K.LIST_OFFSETS: 11, K.METADATA: 13, K.OFFSET_COMMIT: 10,
                K.OFFSET_FETCH: 10, K.DESCRIBE_GROUPS: 6, K.API_VERSIONS: 5}
    assert {k: max(versions.get(k, {-1})) for k in expected} == expected



def test_kafka_python_admin_describes_and_updates_features(kafka_emulator_factory):
    """A subprocess emulator started with --feature transaction.version=1; kafka-python's admin
    reads the finalized features, disables group.version (a newer epoch), and gets Kafka's refusal
    for an unknown feature."""
    from kafka import KafkaAdminClient
    from kafka.errors import InvalidUpdateVersionError
    emulator = kafka_emulator_factory(subprocess_mode=True, finalized_features=("transaction.version=1",))
    admin = KafkaAdminClient(bootstrap_servers=emulator.bootstrap_server)
    try:
        described = admin.describe_features()
        assert described["metadata.version"] == {"supported": (7, 33), "finalized": (33, 33), "finalized_epoch": 1}
        assert described["transaction.version"]["finalized"] == (1, 1)
        assert admin.update_features({"group.version": ("SAFE_DOWNGRADE", 0)}) == {"group.version": "OK"}
        after = admin.describe_features()
        assert "finalized" not in after["group.version"] and after["share.version"]["finalized_epoch"] == 2
        with pytest.raises(InvalidUpdateVersionError, match="does not support this feature"):
            admin.update_features({"nonsense.version": 1})
    finally:
        admin.close()
