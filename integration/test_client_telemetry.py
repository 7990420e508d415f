"""KIP-714 client telemetry with real clients: a CLIENT_METRICS subscription created over the wire
(IncrementalAlterConfigs; the Java Admin client for the Java case), then librdkafka (confluent-kafka)
and the Java consumer of kafka-clients 4.4.0 push their metrics to an emulator started with
``metric.reporters=kafkaemu.telemetry.ClientTelemetryReceiver`` (without it, as Kafka without a
telemetry reporter, the telemetry APIs are not advertised and clients push nothing); the control API and the web page
show what each consumer reported about itself (its fetch latency; the Java consumer's lag)."""
from __future__ import annotations

import base64
import re
import time

import pytest

from kafkaemu.config import CLIENT_TELEMETRY_REPORTER
from kafkaemu.protocol import envelope
from kafkaemu.protocol.api_keys import ApiKey
from kafkaemu.testing import KafkaEmulator
from kafkaemu.testing.raw_client import connect, encode_request, read_reply

from .java_runs import run_case

confluent_kafka = pytest.importorskip("confluent_kafka", reason="needs confluent-kafka")


@pytest.fixture(scope="module")
def emulator():
    # telemetry on, as a Kafka broker with a metrics reporter implementing ClientTelemetry
    with KafkaEmulator(control_port=0, metric_reporters=(CLIENT_TELEMETRY_REPORTER,)) as e:
        yield e


def _subscribe(emulator, name: str, **configs: str) -> None:
    sock = connect(emulator)
    try:
        sock.sendall(encode_request(ApiKey.INCREMENTAL_ALTER_CONFIGS, 1, {"resources": [
            {"resource_type": 16, "resource_name": name, "configs": [
                {"name": k.replace("_", "."), "config_operation": 0, "value": v} for k, v in configs.items()]}],
            "validate_only": False}))
        reply = envelope.decode_response(ApiKey.INCREMENTAL_ALTER_CONFIGS, 1, read_reply(sock))[1]
    finally:
        sock.close()
    assert reply.responses[0].error_code == 0, reply


def _metrics(emulator, client_id: str) -> dict:
    [client] = emulator.telemetry(client_id=client_id)["clients"]
    return {m["name"]: m for m in client["metrics"]}, client


def test_librdkafka_consumer_pushes_its_metrics(emulator):
    _subscribe(emulator, "rdkafka-consumers", metrics="org.apache.kafka.consumer.", interval_ms="500",
               match="client_id=telemetry-rdkafka")
    emulator.create_topic("telemetry-rdkafka", 1)
    producer = confluent_kafka.Producer({"bootstrap.servers": emulator.bootstrap_server})
    for i in range(300):
        producer.produce("telemetry-rdkafka", b"v%d" % i)
    producer.flush(30)
    consumer = confluent_kafka.Consumer({"bootstrap.servers": emulator.bootstrap_server, "group.id": "tele-rdk",
                                         "client.id": "telemetry-rdkafka", "auto.offset.reset": "earliest"})
    consumer.subscribe(["telemetry-rdkafka"])
    seen, start = 0, time.monotonic()
    while time.monotonic() - start < 3:
        seen += len(consumer.consume(50, 0.2))
    consumer.close()   # a final, terminating push, unless a push is still in flight (librdkafka skips it then)
    assert seen == 300
    metrics, client = _metrics(emulator, "telemetry-rdkafka")
    assert client["client_software_name"] == "confluent-kafka-python" and client["pushes"] >= 2
    latency = metrics["org.apache.kafka.consumer.fetch.manager.fetch.latency.avg"]
    assert isinstance(latency["value"], (int, float)) and latency["value"] >= 0
    assert not [name for name in metrics if not name.startswith("org.apache.kafka.consumer.")]
    # the producer matched no subscription: asked, got none, pushed nothing
    assert not emulator.telemetry(client_id="rdkafka")["clients"]
    page = _web_page(emulator)
    assert 'data-client="telemetry-rdkafka"' in page and "fetch.manager.fetch.latency.avg" in page


def _web_page(emulator) -> str:
    import urllib.request
    with urllib.request.urlopen(emulator.control_url + "/", timeout=10) as response:
        return response.read().decode()


def test_java_consumer_pushes_its_lag_and_fetch_latency(emulator, java_classpath):
    result = run_case(java_classpath, "TelemetryCases", "consumer-telemetry", emulator.bootstrap_server)
    assert result.returncode == 0 and "PASS consumer-telemetry" in result.stdout, (
        f"exit {result.returncode}\n{result.stdout}\n--- stderr ---\n{result.stderr[-6000:]}")
    instance = re.search(r"INSTANCE (\S+)", result.stdout).group(1)
    metrics, client = _metrics(emulator, "telemetry-java")
    assert client["client_instance_id"] == instance   # the id the consumer itself reports
    assert base64.urlsafe_b64decode(instance + "==") != bytes(16)
    assert (client["client_software_name"], client["terminating"]) == ("apache-kafka-java", True)
    lag = metrics["org.apache.kafka.consumer.fetch.manager.records.lag.max"]
    assert lag["value"] > 0, lag
    assert metrics["org.apache.kafka.consumer.fetch.manager.fetch.latency.avg"]["value"] >= 0
    page = _web_page(emulator)
    assert 'data-client="telemetry-java"' in page and "records.lag.max" in page
