"""The differential suite's brokers: one of each for the whole session, Apache Kafka 4.4.0
(kafka_reference/, skipped naming what is missing) and kafkaemu in-process, both at their defaults;
and pairs with other settings (``differential_pair``) for the test modules that need them."""
from __future__ import annotations

import contextlib
import time

import pytest

from kafka_reference import SASL_USERS, KafkaCluster, KafkaUnavailable, missing
from kafkaemu.config import BrokerConfig
from kafkaemu.protocol.api_keys import ApiKey
from kafkaemu.testing import KafkaEmulator

from .peer import Peer
from .runner import Differential


def wait_for_coordinators(bootstrap: str, timeout_s: float = 60, users: dict[str, str] | None = None,
                          user: str | None = None) -> None:
    """Until the group and transaction coordinators are found: Kafka creates their topics on
    the first FindCoordinator, so scenarios would otherwise see COORDINATOR_NOT_AVAILABLE first."""
    peer = Peer("warm-up", bootstrap, "warm-up", timeout_s=30, users=users, default_user=user)
    deadline = time.monotonic() + timeout_s
    try:
        for key_type in (0, 1):
            while True:
                answer = peer.send(ApiKey.FIND_COORDINATOR, 6, {"key_type": key_type,
                                                               "coordinator_keys": ["warm-up"]})
                if answer.coordinators[0].error_code == 0:
                    break
                if time.monotonic() > deadline:
                    raise KafkaUnavailable(f"no coordinator of key type {key_type} in {timeout_s} s: {answer}")
                time.sleep(0.2)
    finally:
        peer.close()


def start_kafka(**options) -> KafkaCluster:
    """A started reference broker (``KafkaCluster`` options), its coordinators found; skips naming
    what is missing."""
    reason = missing()
    if reason:
        pytest.skip(reason)
    try:
        cluster = KafkaCluster(**options).start()
    except KafkaUnavailable as exc:
        pytest.skip(f"the reference Kafka 4.4.0 broker could not start: {exc}")
    try:
        users = SASL_USERS if cluster.authorizer else None
        wait_for_coordinators(cluster.bootstrap_server, users=users, user="admin" if users else None)
    except BaseException:
        cluster.stop()
        raise
    return cluster


@contextlib.contextmanager
def differential_pair(settings: dict[str, str] | None = None, authorizer: bool = False):
    """Kafka and kafkaemu with the same Kafka ``settings``; ``authorizer``: both with StandardAuthorizer
    and a SASL/PLAIN listener of ``SASL_USERS``, ``admin`` their super user (scenarios connect as admin
    unless they name another user). For a test module's own brokers: the session's pair stays at the
    defaults."""
    cluster = start_kafka(settings=settings, authorizer=authorizer)
    security = dict(sasl_users=SASL_USERS, sasl_mechanisms="PLAIN", authorizer=True,
                    super_users="User:admin") if authorizer else {}
    try:
        with KafkaEmulator(config=BrokerConfig(port=0, extra=settings or {}, **security)) as emulator:
            yield Differential(cluster.bootstrap_server, emulator.bootstrap_server,
                               users=SASL_USERS if authorizer else None, default_user="admin" if authorizer else None)
    finally:
        cluster.stop()


@pytest.fixture(scope="session")
def kafka44():
    cluster = start_kafka()
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture(scope="session")
def differential(kafka44):
    with KafkaEmulator() as emulator:
        yield Differential(kafka44.bootstrap_server, emulator.bootstrap_server)
