"""pytest fixtures: ``kafka_emulator`` (one per session) and ``fresh_kafka_emulator`` (one per test).

Unless the test session configured structlog itself, kafkaemu logs at ``KAFKAEMU_LOG_LEVEL``
(default warning) so test output stays readable."""
from __future__ import annotations

import os

import pytest
import structlog

from ..logging import configure_logging
from .emulator import KafkaEmulator


def pytest_configure(config):
    if not structlog.is_configured():
        configure_logging("console", os.environ.get("KAFKAEMU_LOG_LEVEL", "warning"))


@pytest.fixture(scope="session")
def kafka_emulator():
    with KafkaEmulator() as emulator:
        yield emulator


@pytest.fixture
def fresh_kafka_emulator():
    with KafkaEmulator() as emulator:
        yield emulator
