"""A produce quota of 1 MB/s with real clients: confluent-kafka (librdkafka) and the Java producer
of kafka-clients 4.4.0 report throttling and settle at about that rate; once the quota is removed
they run at full speed again. The emulator measures quotas over 2 windows of 1 s
(``quota.window.num=2``) so the first burst the rate allows is short; rates are measured over
seconds of sending, in generous bands (the machine is shared)."""
from __future__ import annotations

import re
import threading
import time

import pytest

from kafkaemu.testing import KafkaEmulator

from .java_runs import run_case

confluent_kafka = pytest.importorskip("confluent_kafka", reason="needs confluent-kafka")

QUOTA = 1_048_576
THROTTLED_BAND = (0.5 * QUOTA, 1.6 * QUOTA)
FREE_AT_LEAST = 2.5 * QUOTA


@pytest.fixture(scope="module")
def emulator():
    with KafkaEmulator(quota_window_num=2) as e:
        yield e


def _measure(producer, topic: str, from_s: float, to_s: float) -> float:
    """Bytes per second delivered between from_s and to_s after the start, producing all along."""
    value = b"x" * 10_000
    delivered = [0]
    start = time.monotonic()

    def on_delivery(err, msg):
        at = time.monotonic() - start
        if err is None and from_s <= at < to_s:
            delivered[0] += len(value)

    while time.monotonic() - start < to_s:
        try:
            producer.produce(topic, value, on_delivery=on_delivery)
        except BufferError:
            producer.poll(0.01)
        producer.poll(0)
    producer.poll(0)
    return delivered[0] / (to_s - from_s)


def test_confluent_producer_is_throttled_then_runs_free(emulator):
    emulator.create_topic("quota-confluent", 1)
    emulator.set_client_quota("producer_byte_rate", QUOTA, client_id="quota-confluent")
    throttles = []
    lock = threading.Lock()

    def on_throttle(event):
        with lock:
            throttles.append(event.throttle_time)

    producer = confluent_kafka.Producer({
        "bootstrap.servers": emulator.bootstrap_server, "client.id": "quota-confluent", "acks": 1,
        "linger.ms": 5, "batch.size": 65536, "queue.buffering.max.kbytes": 1024, "throttle_cb": on_throttle})
    throttled = _measure(producer, "quota-confluent", 2.0, 6.0)
    assert throttles and max(throttles) > 0, "librdkafka reported no throttle"
    measured = emulator.client_quotas()["clients"]["produce"]
    assert [c for c in measured if c["client_id"] == "quota-confluent" and c["throttled_responses"] > 0]
    emulator.remove_client_quota("producer_byte_rate", client_id="quota-confluent")
    free = _measure(producer, "quota-confluent", 1.0, 3.0)
    producer.flush(30)
    assert THROTTLED_BAND[0] <= throttled <= THROTTLED_BAND[1], f"throttled at {throttled:.0f} B/s"
    assert free >= FREE_AT_LEAST, f"{free:.0f} B/s after the quota was removed (throttled: {throttled:.0f})"


def test_java_producer_is_throttled_then_runs_free(emulator, java_classpath):
    result = run_case(java_classpath, "QuotaCases", "produce-quota", emulator.bootstrap_server)
    assert result.returncode == 0 and "PASS produce-quota" in result.stdout, (
        f"exit {result.returncode}\n{result.stdout}\n--- stderr ---\n{result.stderr[-6000:]}")
    found = re.search(r"RESULT throttled_rate=(\S+) free_rate=(\S+) throttle_max_ms=(\S+)", result.stdout)
    throttled, free, throttle_max = map(float, found.groups())
    assert throttle_max > 0, "the Java producer's produce-throttle-time-max stayed 0"
    assert THROTTLED_BAND[0] <= throttled <= THROTTLED_BAND[1], f"throttled at {throttled:.0f} B/s"
    assert free >= FREE_AT_LEAST, f"{free:.0f} B/s after the quota was removed (throttled: {throttled:.0f})"
