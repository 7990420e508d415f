"""Capture golden request frames from real clients into ``tests/protocol/golden/*.hex``.

    .venv/bin/python -m tests.protocol.capture_golden

Each client (kafka-python, confluent-kafka/librdkafka, aiokafka, Java) first talks to a standalone
recorder (which answers ApiVersions only), then, through the recorder as a proxy, to an
in-process kafkaemu: admin calls, a consumer group (join, sync, heartbeat, commit, fetch
offsets) and, where kafkaemu already serves them, produce and fetch. Java kafka-clients runs
through the conformance programs of ``integration/java`` when they are built. The first frame
of each (client, api, version) is kept. Everything stays on 127.0.0.1. Re-run after the server gains
APIs to capture richer frames; ``test_golden_frames.py`` decodes and re-encodes every file.
"""
from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
import time
from pathlib import Path

from kafkaemu.protocol.catalog import catalog
from tests.protocol.recorder import Recorder

GOLDEN = Path(__file__).resolve().parent / "golden"
TOPIC = "golden-topic"
logging.basicConfig(level=logging.CRITICAL)


def client_versions() -> dict[str, str]:
    import aiokafka
    import confluent_kafka
    import kafka
    return {"kafka-python": kafka.__version__, "aiokafka": aiokafka.__version__,
            "confluent-kafka": f"{confluent_kafka.version()[0]} (librdkafka {confluent_kafka.libversion()[0]})",
            "java": java_version()}


# -- client scenarios: each takes a bootstrap address and swallows its own failures ------------

@contextlib.contextmanager
def step(what: str):
    """Run one client step; a failure is reported and the scenario goes on."""
    try:
        yield
    except Exception as exc:  # a client step failing only means fewer frames
        print(f"  ({what}: {type(exc).__name__}: {exc})", file=sys.stderr)


def kafka_python_bootstrap(bootstrap: str) -> None:
    from kafka import KafkaAdminClient
    with contextlib.suppress(Exception):
        KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=2000,
                         api_version_auto_timeout_ms=2000, client_id="golden-kp").close()


def kafka_python_full(bootstrap: str) -> None:
    from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, OffsetAndMetadata, TopicPartition
    from kafka.admin import ConfigResource, ConfigResourceType, NewTopic
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, client_id="golden-kp")
    with step("kafka-python create_topics"):
        admin.create_topics([NewTopic(TOPIC, 2, 1)])
    with step("kafka-python describe_configs"):
        admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, TOPIC)])
    with step("kafka-python list_groups"):
        admin.list_groups() if hasattr(admin, "list_groups") else admin.list_consumer_groups()
    with step("kafka-python describe_cluster"):
        admin.describe_cluster()
    admin.close()
    with step("kafka-python produce"):
        producer = KafkaProducer(bootstrap_servers=bootstrap, client_id="golden-kp", max_block_ms=3000,
                                 enable_idempotence=False, acks=1,
                                 request_timeout_ms=3000)
        producer.send(TOPIC, key=b"k", value=b"v", partition=0).get(timeout=3)
        producer.close(timeout=2)
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, client_id="golden-kp", group_id="golden-kp-group",
                             auto_offset_reset="earliest", enable_auto_commit=False,
                             session_timeout_ms=10000, heartbeat_interval_ms=300)
    consumer.subscribe([TOPIC])
    with step("kafka-python poll"):
        deadline = time.monotonic() + 6
        while time.monotonic() < deadline and not consumer.assignment():
            consumer.poll(timeout_ms=300)
        consumer.poll(timeout_ms=1000)
    with step("kafka-python commit"):
        consumer.commit({TopicPartition(TOPIC, 0): OffsetAndMetadata(1, "meta", -1)})
    with step("kafka-python committed"):
        consumer.committed(TopicPartition(TOPIC, 0))
    with step("kafka-python close"):
        consumer.close()
    with step("kafka-python transaction"):
        producer = KafkaProducer(bootstrap_servers=bootstrap, client_id="golden-kp", transactional_id="golden-kp-tx",
                                 max_block_ms=3000, request_timeout_ms=3000)
        producer.init_transactions()
        producer.begin_transaction()
        producer.send(TOPIC, key=b"k", value=b"v", partition=0)
        producer.send_offsets_to_transaction({TopicPartition(TOPIC, 0): OffsetAndMetadata(1, "", -1)},
                                             "golden-kp-group")
        producer.commit_transaction()
        producer.close(timeout=2)
    with step("kafka-python transaction admin"):
        admin = KafkaAdminClient(bootstrap_servers=bootstrap, client_id="golden-kp")
        admin.list_transactions()
        admin.describe_transactions(["golden-kp-tx"])
        admin.close()
    kafka_python_admin_after(bootstrap)


def kafka_python_admin_after(bootstrap: str) -> None:
    from kafka import KafkaAdminClient, TopicPartition
    from kafka.admin import NewPartitions
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, client_id="golden-kp")
    with step("kafka-python describe_groups"):
        admin.describe_groups(["golden-kp-group"])
    with step("kafka-python list_group_offsets"):
        admin.list_group_offsets("golden-kp-group")
    with step("kafka-python delete_group_offsets"):
        admin.delete_group_offsets("golden-kp-group", [TopicPartition(TOPIC, 0)])
    with step("kafka-python delete_groups"):
        admin.delete_groups(["golden-kp-group"])
    with step("kafka-python describe_topic_partitions"):
        admin.describe_topic_partitions([TOPIC])
    with step("kafka-python create_partitions"):
        admin.create_partitions({TOPIC: NewPartitions(total_count=3)})
    with step("kafka-python delete_records"):
        admin.delete_records({TopicPartition(TOPIC, 0): 1})
    with step("kafka-python delete_topics"):
        admin.delete_topics([TOPIC])
    admin.close()


def confluent_bootstrap(bootstrap: str) -> None:
    from confluent_kafka.admin import AdminClient
    admin = AdminClient({"bootstrap.servers": bootstrap, "client.id": "golden-rdkafka", "log_level": 0})
    with contextlib.suppress(Exception):
        admin.list_topics(timeout=2)


def confluent_full(bootstrap: str) -> None:
    from confluent_kafka import Consumer, Producer, TopicPartition
    from confluent_kafka.admin import AdminClient, NewTopic
    conf = {"bootstrap.servers": bootstrap, "client.id": "golden-rdkafka", "log_level": 0}
    admin = AdminClient(conf)
    with contextlib.suppress(Exception):
        for f in admin.create_topics([NewTopic(TOPIC + "-rd", 2, 1)]).values():
            f.result(5)
    with contextlib.suppress(Exception):
        admin.list_topics(timeout=5)
    with contextlib.suppress(Exception):
        producer = Producer({**conf, "message.timeout.ms": 3000})
        producer.produce(TOPIC, key=b"k", value=b"v", partition=0)
        producer.flush(3)
    with contextlib.suppress(Exception):
        consumer = Consumer({**conf, "group.id": "golden-rd-group", "auto.offset.reset": "earliest",
                             "enable.auto.commit": False, "session.timeout.ms": 10000})
        consumer.subscribe([TOPIC])
        deadline = time.monotonic() + 6
        while time.monotonic() < deadline and not consumer.assignment():
            consumer.poll(0.3)
        consumer.poll(0.5)
        with contextlib.suppress(Exception):
            consumer.commit(offsets=[TopicPartition(TOPIC, 0, 1)], asynchronous=False)
        with contextlib.suppress(Exception):
            consumer.committed([TopicPartition(TOPIC, 0)], timeout=3)
        consumer.close()
    with step("confluent-kafka transaction"):
        consumer = Consumer({**conf, "group.id": "golden-rd-group", "isolation.level": "read_committed"})
        producer = Producer({**conf, "transactional.id": "golden-rd-tx"})
        producer.init_transactions(5)
        producer.begin_transaction()
        producer.produce(TOPIC, key=b"k", value=b"v", partition=0)
        producer.send_offsets_to_transaction([TopicPartition(TOPIC, 0, 1)], consumer.consumer_group_metadata(), 5)
        producer.commit_transaction(5)
        consumer.close()
    confluent_admin_after(conf)
    with step("confluent-kafka KIP-848 consumer"):
        consumer = Consumer({**conf, "group.id": "golden-rd-848", "group.protocol": "consumer"})
        consumer.subscribe([TOPIC])
        consumer.poll(2)
        consumer.close()


def confluent_admin_after(conf: dict) -> None:
    from confluent_kafka import ConsumerGroupTopicPartitions, TopicPartition
    from confluent_kafka.admin import AdminClient, ConfigResource, NewPartitions, OffsetSpec
    admin = AdminClient(conf)

    def wait(futures):
        for f in (futures.values() if isinstance(futures, dict) else [futures]):
            f.result(5)
    with step("confluent-kafka describe_cluster"):
        wait(admin.describe_cluster(request_timeout=5))
    with step("confluent-kafka describe_configs"):
        wait(admin.describe_configs([ConfigResource("topic", TOPIC)]))
    with step("confluent-kafka list_consumer_groups"):
        wait(admin.list_consumer_groups(request_timeout=5))
    with step("confluent-kafka describe_consumer_groups"):
        wait(admin.describe_consumer_groups(["golden-rd-group"], request_timeout=5))
    with step("confluent-kafka list_consumer_group_offsets"):
        wait(admin.list_consumer_group_offsets([ConsumerGroupTopicPartitions("golden-rd-group")]))
    with step("confluent-kafka list_offsets"):
        wait(admin.list_offsets({TopicPartition(TOPIC, 0): OffsetSpec.latest()}, request_timeout=5))
    with step("confluent-kafka delete_consumer_groups"):
        wait(admin.delete_consumer_groups(["golden-rd-group"], request_timeout=5))
    with step("confluent-kafka create_partitions"):
        wait(admin.create_partitions([NewPartitions(TOPIC + "-rd", 3)]))
    with step("confluent-kafka delete_records"):
        wait(admin.delete_records([TopicPartition(TOPIC, 0, 1)], request_timeout=5))
    with step("confluent-kafka describe_topics"):
        from confluent_kafka import TopicCollection
        wait(admin.describe_topics(TopicCollection([TOPIC]), request_timeout=5))
    with step("confluent-kafka delete_topics"):
        wait(admin.delete_topics([TOPIC + "-rd"], request_timeout=5))


def aiokafka_bootstrap(bootstrap: str) -> None:
    from aiokafka import AIOKafkaConsumer

    async def run():
        consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, client_id="golden-aiokafka",
                                    request_timeout_ms=2000)
        with contextlib.suppress(Exception):
            await asyncio.wait_for(consumer.start(), 3)
        with contextlib.suppress(Exception):
            await consumer.stop()
    asyncio.run(run())


def aiokafka_full(bootstrap: str) -> None:
    from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
    from aiokafka.admin import AIOKafkaAdminClient, NewTopic
    from aiokafka.structs import OffsetAndMetadata

    async def run():
        admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap, client_id="golden-aiokafka")
        with contextlib.suppress(Exception):
            await asyncio.wait_for(admin.start(), 5)
            await asyncio.wait_for(admin.create_topics([NewTopic(TOPIC + "-aio", 1, 1)]), 5)
            await asyncio.wait_for(admin.describe_cluster(), 5)
        with contextlib.suppress(Exception):
            await admin.close()
        producer = AIOKafkaProducer(bootstrap_servers=bootstrap, client_id="golden-aiokafka",
                                    request_timeout_ms=3000)
        with contextlib.suppress(Exception):
            await asyncio.wait_for(producer.start(), 5)
            await asyncio.wait_for(producer.send_and_wait(TOPIC, b"v", key=b"k", partition=0), 5)
        with contextlib.suppress(Exception):
            await producer.stop()
        consumer = AIOKafkaConsumer(TOPIC, bootstrap_servers=bootstrap, client_id="golden-aiokafka",
                                    group_id="golden-aio-group", auto_offset_reset="earliest",
                                    enable_auto_commit=False, session_timeout_ms=10000,
                                    heartbeat_interval_ms=500)
        with contextlib.suppress(Exception):
            await asyncio.wait_for(consumer.start(), 5)
            await asyncio.wait_for(consumer.getmany(timeout_ms=1500), 5)
            await asyncio.wait_for(consumer.commit({TopicPartition(TOPIC, 0): OffsetAndMetadata(1, "m")}), 5)
            await asyncio.wait_for(consumer.committed(TopicPartition(TOPIC, 0)), 5)
        with contextlib.suppress(Exception):
            await asyncio.wait_for(consumer.stop(), 5)
        producer = AIOKafkaProducer(bootstrap_servers=bootstrap, client_id="golden-aiokafka",
                                    transactional_id="golden-aio-tx", request_timeout_ms=3000)
        with step("aiokafka transaction"):
            await asyncio.wait_for(producer.start(), 5)
            async with producer.transaction():
                await producer.send(TOPIC, b"v", key=b"k", partition=0)
                await producer.send_offsets_to_transaction({TopicPartition(TOPIC, 0): 1}, "golden-aio-group")
        with contextlib.suppress(Exception):
            await producer.stop()
        await aiokafka_admin_after(bootstrap)
    asyncio.run(run())


async def aiokafka_admin_after(bootstrap: str) -> None:
    from aiokafka import TopicPartition
    from aiokafka.admin import AIOKafkaAdminClient, NewPartitions, RecordsToDelete
    from aiokafka.admin.config_resource import ConfigResource, ConfigResourceType
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap, client_id="golden-aiokafka")
    await asyncio.wait_for(admin.start(), 5)
    steps = {
        "describe_configs": lambda: admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, TOPIC)]),
        "list_consumer_groups": lambda: admin.list_consumer_groups(),
        "describe_consumer_groups": lambda: admin.describe_consumer_groups(["golden-aio-group"]),
        "list_consumer_group_offsets": lambda: admin.list_consumer_group_offsets("golden-aio-group"),
        "create_partitions": lambda: admin.create_partitions({TOPIC + "-aio": NewPartitions(3)}),
        "delete_records": lambda: admin.delete_records({TopicPartition(TOPIC, 0): RecordsToDelete(1)}),
        "delete_topics": lambda: admin.delete_topics([TOPIC + "-aio"]),
    }
    for name, call in steps.items():
        with step(f"aiokafka {name}"):
            await asyncio.wait_for(call(), 5)
    with contextlib.suppress(Exception):
        await admin.close()


JAVA_DIR = Path(__file__).resolve().parents[2] / "integration" / "java"
JAVA_CASES = ["admin-topics", "admin-consumer-groups", "idempotent-producer", "group-range", "commit-and-resume",
              "transactions-admin", "transactions-consume-transform-produce", "transactions-abort-hanging"]


def java_bootstrap(bootstrap: str) -> None:
    _java_cases(bootstrap, ["admin-topics"], timeout=8)  # it gives up late on a closed listener


def java_full(bootstrap: str) -> None:
    _java_cases(bootstrap, JAVA_CASES, timeout=120)


def _java_cases(bootstrap: str, cases: list[str], timeout: float) -> None:
    """Java kafka-clients, through integration/java's conformance programs (compiled there by
    ``make java-deps`` / the Java integration test); skipped when they are not built."""
    import shutil
    import subprocess
    classes, lib = JAVA_DIR / "classes", JAVA_DIR / "lib"
    if shutil.which("java") is None or not (classes / "kafkaemu").is_dir() or not any(lib.glob("kafka-clients-*.jar")):
        print("  (java: no JDK or no compiled integration/java classes; skipped)", file=sys.stderr)
        return
    for case in cases:
        with step(f"java {case}"):
            subprocess.run(["java", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
                            f"-Dlog4j2.configurationFile={JAVA_DIR / 'log4j2.properties'}",
                            "-cp", f"{classes}:{lib}/*", "kafkaemu.jvm.Main", case, bootstrap],
                           capture_output=True, timeout=timeout)


def java_version() -> str:
    jars = sorted((JAVA_DIR / "lib").glob("kafka-clients-*.jar"))
    return jars[-1].stem if jars else "kafka-clients"


CLIENTS = {
    "kafka-python": (kafka_python_bootstrap, kafka_python_full),
    "confluent-kafka": (confluent_bootstrap, confluent_full),
    "aiokafka": (aiokafka_bootstrap, aiokafka_full),
    "java": (java_bootstrap, java_full),
}


def capture(client: str) -> list:
    bootstrap_run, full_run = CLIENTS[client]
    frames = []
    with Recorder() as rec:
        bootstrap_run(rec.address)
    frames += rec.frames
    from kafkaemu.testing import KafkaEmulator
    with KafkaEmulator() as emu:
        with Recorder(upstream=("127.0.0.1", emu.port)) as rec:
            # Advertise the recorder, so clients stay on it after bootstrap.
            emu.call(lambda b: b.placement.listeners.__setitem__(b.node_id, ("127.0.0.1", rec.port)))
            full_run(rec.address)
        frames += rec.frames
    return frames


def file_name(client: str, api_key: int, version: int) -> str:
    return f"{client}__{catalog().api_name(api_key)}_v{version}.hex"


def main(argv: list[str]) -> None:
    clients = argv or list(CLIENTS)
    versions = client_versions()
    GOLDEN.mkdir(exist_ok=True)
    for client in clients:
        seen = set()
        for frame in capture(client):
            key = (frame.api_key, frame.api_version)
            if key in seen or frame.api_key not in catalog().requests:
                continue
            seen.add(key)
            path = GOLDEN / file_name(client, *key)
            path.write_text(f"# {client} {versions[client]}: {catalog().api_name(frame.api_key)} "
                            f"v{frame.api_version} request frame (header + body), "
                            f"captured by tests/protocol/capture_golden.py\n"
                            + "\n".join(frame.data[i:i + 32].hex() for i in range(0, len(frame.data), 32))
                            + "\n")
            print(path.name, len(frame.data), "bytes")


if __name__ == "__main__":
    main(sys.argv[1:])
