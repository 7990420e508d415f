"""Share groups (KIP-932) with the Java KafkaShareConsumer of kafka-clients 4.4.0
(integration/java/src/kafkaemu/jvm/ShareCases.java) against an in-process emulator with a manual
clock, which a case advances over the HTTP control API to make an acquisition lock lapse."""
from __future__ import annotations

import pytest

from kafkaemu.testing import KafkaEmulator

from .java_runs import assert_passed, listed_cases, run_case

CASES = ["share-three-consumers", "share-release-reject", "share-lock-expiry", "share-delivery-limit",
         "share-admin-offsets"]


@pytest.fixture(scope="module")
def served():
    with KafkaEmulator(manual_clock=True, control_port=0) as emulator:
        yield emulator


def test_case_list_matches_runner(java_classpath):
    assert listed_cases(java_classpath, "ShareCases") == CASES


@pytest.mark.parametrize("case", CASES)
def test_java_share_consumer(case, java_classpath, served):
    assert_passed(run_case(java_classpath, "ShareCases", case, served.bootstrap_server, served.control_url), case)


def test_java_share_consumers_across_three_nodes(java_classpath):
    """Partition leaders and the group coordinator spread over three emulated nodes: ShareFetch
    goes to each partition's leader, with a share session per node."""
    with KafkaEmulator(manual_clock=True, control_port=0, nodes=3) as emulator:
        result = run_case(java_classpath, "ShareCases", "share-three-consumers", emulator.bootstrap_server,
                          emulator.control_url)
    assert_passed(result, "share-three-consumers")
