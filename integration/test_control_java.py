"""The Java client against a subprocess emulator driven from Java over the HTTP control API
(integration/java/src/kafkaemu/jvm/ControlCases.java): each case must print PASS."""
from __future__ import annotations

import pytest

from kafkaemu.control.client import ControlClient
from kafkaemu.testing import KafkaEmulator

from .java_runs import assert_passed, listed_cases, run_case

CASES = ["control-expire-member", "control-partition-fault", "control-node-failover", "control-version-cap",
         "control-snapshot-restore"]


@pytest.fixture(scope="module")
def served():
    with KafkaEmulator(subprocess_mode=True, nodes=3) as emulator:
        yield emulator


def test_case_list_matches_runner(java_classpath):
    assert listed_cases(java_classpath, "ControlCases") == CASES


@pytest.mark.parametrize("case", CASES)
def test_java_client_driven_over_http(case, java_classpath, served):
    ControlClient(served.control_url).call("reset")
    bootstrap = ",".join(f"127.0.0.1:{n['port']}" for n in served.nodes())
    assert_passed(run_case(java_classpath, "ControlCases", case, bootstrap, served.control_url), case)
