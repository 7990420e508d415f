"""A broker's own configuration starts ``kafkaemu serve`` unchanged, and DescribeConfigs then reports
it, read by real admin clients: confluent-kafka-python's test-suite broker settings, kafka-python's
fixture kafka.properties (compat/kafka_python_settings.py), and the environment of a typical
docker-compose service of Kafka's container image, each from a ``--config`` file and as ``KAFKA_*``
variables. (``--port 0`` is the test's own: the files' listeners name fixed ports.)"""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from compat.kafka_python_settings import SUITE_PROPERTIES

pytestmark = pytest.mark.timeout(120)

CONFLUENT_SUITE = {"offsets.topic.replication.factor": "1", "offsets.topic.min.isr": "1",
                   "transaction.state.log.replication.factor": "1", "transaction.state.log.min.isr": "1",
                   "share.coordinator.state.topic.replication.factor": "1",
                   "share.coordinator.state.topic.min.isr": "1", "group.share.record.lock.duration.ms": "1000",
                   "group.share.min.record.lock.duration.ms": "1000"}
KAFKA_PYTHON_FIXTURE = {name: value.format(host="127.0.0.1", port=9092, controller_port=9093, tmp_dir="/tmp/kp")
                        for name, value, _applied in SUITE_PROPERTIES}
# a docker-compose service of apache/kafka with the image's single-node defaults spelled out
COMPOSE_ENVIRONMENT = {
    "KAFKA_NODE_ID": "1", "KAFKA_PROCESS_ROLES": "broker,controller",
    "KAFKA_LISTENERS": "PLAINTEXT://localhost:29092,CONTROLLER://localhost:29093,PLAINTEXT_HOST://0.0.0.0:9092",
    "KAFKA_ADVERTISED_LISTENERS": "PLAINTEXT://localhost:29092,PLAINTEXT_HOST://localhost:9092",
    "KAFKA_LISTENER_SECURITY_PROTOCOL_MAP": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,PLAINTEXT_HOST:PLAINTEXT",
    "KAFKA_CONTROLLER_QUORUM_VOTERS": "1@localhost:29093", "KAFKA_CONTROLLER_LISTENER_NAMES": "CONTROLLER",
    "KAFKA_INTER_BROKER_LISTENER_NAME": "PLAINTEXT", "KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR": "1",
    "KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR": "1", "KAFKA_TRANSACTION_STATE_LOG_MIN_ISR": "1",
    "KAFKA_GROUP_INITIAL_REBALANCE_DELAY_MS": "0", "KAFKA_LOG_DIRS": "/tmp/kraft-combined-logs",
    "KAFKA_NUM_PARTITIONS": "3", "CLUSTER_ID": "MkU3OEVBNTcwNTJENDM2Qk", "KAFKA_HEAP_OPTS": "-Xmx512M"}


def as_environment(settings: dict[str, str]) -> dict[str, str]:
    return {"KAFKA_" + name.replace("_", "__").replace(".", "_").upper(): value for name, value in settings.items()}


def serve(*args: str, env: dict[str, str] | None = None):
    """``kafkaemu serve`` with these arguments and extra environment; (process, bootstrap address)."""
    environ = {k: v for k, v in os.environ.items() if not k.startswith("KAFKA_")}
    proc = subprocess.Popen([sys.executable, "-m", "kafkaemu", "serve", "--port", "0", "--log-level", "warning",
                             *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**environ, **(env or {})})
    line = proc.stdout.readline()
    if "listening on" not in line:
        proc.kill()
        raise AssertionError(f"kafkaemu did not start: {proc.stderr.read()}")
    return proc, line.rsplit(" ", 1)[1].strip()


@pytest.fixture
def started():
    procs = []

    def start(*args, env=None):
        proc, bootstrap = serve(*args, env=env)
        procs.append(proc)
        return bootstrap
    yield start
    for proc in procs:
        proc.terminate()
        proc.wait(10)


def properties_file(tmp_path, settings: dict[str, str]) -> str:
    path = tmp_path / "server.properties"
    path.write_text("# a broker's own server.properties\n" + "".join(f"{k}={v}\n" for k, v in settings.items()))
    return str(path)


def confluent_broker_configs(bootstrap: str, node_id: str = "0") -> dict:
    from confluent_kafka.admin import AdminClient, ConfigResource, ResourceType
    admin = AdminClient({"bootstrap.servers": bootstrap})
    [future] = admin.describe_configs([ConfigResource(ResourceType.BROKER, node_id)]).values()
    return future.result(timeout=30)


@pytest.mark.parametrize("given", ["file", "environment"])
def test_confluent_kafka_pythons_suite_settings(given, started, tmp_path):
    from confluent_kafka.admin import ConfigSource
    bootstrap = started("--config", properties_file(tmp_path, CONFLUENT_SUITE)) if given == "file" else \
        started(env=as_environment(CONFLUENT_SUITE))
    entries = confluent_broker_configs(bootstrap)
    for name in ("offsets.topic.replication.factor", "transaction.state.log.min.isr",
                 "share.coordinator.state.topic.replication.factor", "group.share.record.lock.duration.ms",
                 "group.share.min.record.lock.duration.ms"):
        assert entries[name].value == CONFLUENT_SUITE[name], name
        assert entries[name].source == ConfigSource.STATIC_BROKER_CONFIG.value, name
        assert entries[name].is_read_only, name
    assert entries["num.network.threads"].value == "3"   # Kafka's default, reported as such
    assert entries["num.network.threads"].source == ConfigSource.DEFAULT_CONFIG.value


@pytest.mark.parametrize("given", ["file", "environment"])
def test_kafka_pythons_fixture_properties(given, started, tmp_path):
    from kafka.admin import ConfigResource, ConfigResourceType, KafkaAdminClient
    bootstrap = started("--config", properties_file(tmp_path, KAFKA_PYTHON_FIXTURE)) if given == "file" else \
        started(env=as_environment(KAFKA_PYTHON_FIXTURE))
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        described = admin.describe_configs([ConfigResource(ConfigResourceType.BROKER, "0")], config_filter="all")
    finally:
        admin.close()
    [configs] = [by_name for by_name in described.values()]
    entries = {name: config["value"] for name, config in configs["0"].items()}
    assert entries["num.io.threads"] == "8" and entries["num.partitions"] == "4"
    assert entries["replica.lag.time.max.ms"] == "1000" and entries["offsets.topic.num.partitions"] == "2"
    assert entries["authorizer.class.name"] == "org.apache.kafka.metadata.authorizer.StandardAuthorizer"
    # as Kafka 4.4 answers: log.retention.ms unset has no value (its synonyms start at its own name)
    assert entries["log.retention.hours"] == "168" and entries["log.retention.ms"] is None
    assert entries["controller.listener.names"] == "CONTROLLER" and entries["log.flush.interval.ms"] is None


def test_a_docker_compose_services_environment(started):
    from confluent_kafka import Consumer, Producer
    bootstrap = started(env=COMPOSE_ENVIRONMENT)
    entries = confluent_broker_configs(bootstrap, "1")   # KAFKA_NODE_ID
    assert entries["node.id"].value == "1" and entries["process.roles"].value == "broker,controller"
    assert entries["num.partitions"].value == "3" and entries["group.initial.rebalance.delay.ms"].value == "0"
    assert entries["controller.quorum.voters"].value == "1@localhost:29093"
    assert entries["advertised.listeners"].value.startswith("PLAINTEXT://localhost:")
    producer = Producer({"bootstrap.servers": bootstrap})
    producer.produce("compose", b"hello")
    assert producer.flush(30) == 0
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "g", "auto.offset.reset": "earliest"})
    consumer.subscribe(["compose"])
    try:
        message = None
        for _ in range(60):
            message = consumer.poll(0.5)
            if message is not None and message.error() is None:
                break
        assert message is not None and message.value() == b"hello"
    finally:
        consumer.close()
