"""The differential suite's brokers, one of each for the whole session: Apache Kafka 4.4.0
(kafka_reference/, skipped naming what is missing) and kafkaemu in-process, both at their defaults."""
from __future__ import annotations

import socket
import time

import pytest

from kafka_reference import KafkaCluster, KafkaUnavailable, missing
from kafkaemu.protocol.api_keys import ApiKey
from kafkaemu.testing import KafkaEmulator
from kafkaemu.testing.raw_client import request

from .runner import Differential


def wait_for_coordinators(bootstrap: str, timeout_s: float = 60) -> None:
    """Until the group and transaction coordinators are found: Kafka creates their topics on
    the first FindCoordinator, so scenarios would otherwise see COORDINATOR_NOT_AVAILABLE first."""
    host, port = bootstrap.rsplit(":", 1)
    deadline = time.monotonic() + timeout_s
    with socket.create_connection((host, int(port)), timeout=30) as sock:
        for key_type in (0, 1):
            while True:
                answer = request(sock, ApiKey.FIND_COORDINATOR, 6, {"key_type": key_type, "coordinator_keys": ["warm-up"]})
                if answer.coordinators[0].error_code == 0:
                    break
                if time.monotonic() > deadline:
                    raise KafkaUnavailable(f"no coordinator of key type {key_type} in {timeout_s} s: {answer}")
                time.sleep(0.2)


@pytest.fixture(scope="session")
def kafka44():
    reason = missing()
    if reason:
        pytest.skip(reason)
    try:
        cluster = KafkaCluster().start()
    except KafkaUnavailable as exc:
        pytest.skip(f"the reference Kafka 4.4.0 broker could not start: {exc}")
    try:
        wait_for_coordinators(cluster.bootstrap_server)
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture(scope="session")
def differential(kafka44):
    with KafkaEmulator() as emulator:
        yield Differential(kafka44.bootstrap_server, emulator.bootstrap_server)
