"""pytest fixtures: ``kafka_emulator`` (one per session), ``clean_kafka_emulator`` (that one, reset
to empty before each test: cheap isolation) and ``fresh_kafka_emulator`` (a new one per test).

Unless the test session configured structlog itself, kafkaemu logs at ``KAFKAEMU_LOG_LEVEL``
(debug, info, warning or error, in any case; default warning) so test output stays readable."""
from __future__ import annotations

import pytest

from ..logging import configure_default_logging
from .emulator import KafkaEmulator


def pytest_configure(config):
    try:
        configure_default_logging()
    except ValueError as exc:
        raise pytest.UsageError(f"KAFKAEMU_LOG_LEVEL: {exc}") from None


@pytest.fixture(scope="session")
def kafka_emulator():
    with KafkaEmulator() as emulator:
        yield emulator


@pytest.fixture
def clean_kafka_emulator(kafka_emulator):
    """The session's emulator, reset before the test: no topics, groups, offsets, fault rules or
    version caps, every node running (see KafkaEmulator.reset; snapshots are kept)."""
    kafka_emulator.reset()
    return kafka_emulator


@pytest.fixture
def fresh_kafka_emulator():
    with KafkaEmulator() as emulator:
        yield emulator
