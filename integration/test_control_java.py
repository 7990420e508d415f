"""The Java client against a subprocess emulator driven from Java over the HTTP control API
(integration/java/src/kafkaemu/jvm/ControlCases.java): each case must print PASS."""
from __future__ import annotations

import subprocess

import pytest

from kafkaemu.control.client import ControlClient
from kafkaemu.testing import KafkaEmulator

from .test_java_clients import CASE_TIMEOUT_S, JAVA_DIR, java_classpath  # noqa: F401 (the fixture)

CASES = ["control-expire-member", "control-partition-fault", "control-node-failover", "control-version-cap",
         "control-snapshot-restore"]


@pytest.fixture(scope="module")
def served():
    with KafkaEmulator(subprocess_mode=True, nodes=3) as emulator:
        yield emulator


def run(classpath: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["java", "-Xss1m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
                           f"-Dlog4j2.configurationFile={JAVA_DIR / 'log4j2.properties'}",
                           "-cp", classpath, "kafkaemu.jvm.ControlCases", *args],
                          capture_output=True, text=True, timeout=CASE_TIMEOUT_S)


def test_case_list_matches_runner(java_classpath):  # noqa: F811
    assert run(java_classpath, "list").stdout.split() == CASES


@pytest.mark.parametrize("case", CASES)
def test_java_client_driven_over_http(case, java_classpath, served):  # noqa: F811
    ControlClient(served.control_url).call("reset")
    bootstrap = ",".join(f"127.0.0.1:{n['port']}" for n in served.nodes())
    result = run(java_classpath, case, bootstrap, served.control_url)
    verdict = [line for line in result.stdout.splitlines() if line.startswith(("PASS ", "FAIL "))]
    assert result.returncode == 0 and verdict and verdict[-1].startswith(f"PASS {case} "), (
        f"{case}: exit {result.returncode}\n{result.stdout}\n--- stderr (last 6000 chars) ---\n{result.stderr[-6000:]}")
