"""Streams groups (KIP-1071) with Kafka Streams' protocol client of kafka-clients 4.4.0 (an
AsyncKafkaConsumer given StreamsRebalanceData, as Kafka Streams' StreamThread makes it) and the
Java Admin client's streams-group calls (integration/java/src/kafkaemu/jvm/StreamsCases.java)."""
from __future__ import annotations

import pytest

from kafkaemu.testing import KafkaEmulator

from .java_runs import assert_passed, listed_cases, run_case

CASES = ["streams-two-members", "streams-missing-source-topic"]


@pytest.fixture(scope="module")
def served():
    with KafkaEmulator() as emulator:
        yield emulator


def test_case_list_matches_runner(java_classpath):
    assert listed_cases(java_classpath, "StreamsCases") == CASES


@pytest.mark.parametrize("case", CASES)
def test_java_streams_client(case, java_classpath, served):
    assert_passed(run_case(java_classpath, "StreamsCases", case, served.bootstrap_server), case)
