"""pytest fixtures: ``kafka_emulator`` (one per session) and ``fresh_kafka_emulator`` (one per test).

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
def fresh_kafka_emulator():
    with KafkaEmulator() as emulator:
        yield emulator
