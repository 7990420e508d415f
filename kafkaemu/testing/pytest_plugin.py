"""pytest fixtures: ``kafka_emulator`` (one per session) and ``fresh_kafka_emulator`` (one per test)."""
from __future__ import annotations

import pytest

from .emulator import KafkaEmulator


@pytest.fixture(scope="session")
def kafka_emulator():
    with KafkaEmulator() as emulator:
        yield emulator


@pytest.fixture
def fresh_kafka_emulator():
    with KafkaEmulator() as emulator:
        yield emulator
