"""Share groups (KIP-932) with the Java KafkaShareConsumer of kafka-clients 4.3.0
(integration/java/src/kafkaemu/jvm/ShareCases.java) against an in-process emulator with a manual
clock, which a case advances over the HTTP control API to make an acquisition lock lapse."""
from __future__ import annotations

import subprocess

import pytest

from kafkaemu.testing import KafkaEmulator

from .test_java_clients import CASE_TIMEOUT_S, JAVA_DIR, java_classpath  # noqa: F401 (the fixture)

CASES = ["share-three-consumers", "share-release-reject", "share-lock-expiry", "share-delivery-limit",
         "share-admin-offsets"]


@pytest.fixture(scope="module")
def served():
    with KafkaEmulator(manual_clock=True, control_port=0) as emulator:
        yield emulator


def run(classpath: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["java", "-Xss1m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
                           f"-Dlog4j2.configurationFile={JAVA_DIR / 'log4j2.properties'}",
                           "-cp", classpath, "kafkaemu.jvm.ShareCases", *args],
                          capture_output=True, text=True, timeout=CASE_TIMEOUT_S)


def test_case_list_matches_runner(java_classpath):  # noqa: F811
    assert run(java_classpath, "list").stdout.split() == CASES


@pytest.mark.parametrize("case", CASES)
def test_java_share_consumer(case, java_classpath, served):  # noqa: F811
    result = run(java_classpath, case, served.bootstrap_server, served.control_url)
    verdict = [line for line in result.stdout.splitlines() if line.startswith(("PASS ", "FAIL "))]
    assert result.returncode == 0 and verdict and verdict[-1].startswith(f"PASS {case} "), (
        f"{case}: exit {result.returncode}\n{result.stdout}\n--- stderr (last 6000 chars) ---\n{result.stderr[-6000:]}")


def test_java_share_consumers_across_three_nodes(java_classpath):  # noqa: F811
    """Partition leaders and the group coordinator spread over three emulated nodes: ShareFetch
    goes to each partition's leader, with a share session per node."""
    with KafkaEmulator(manual_clock=True, control_port=0, nodes=3) as emulator:
        result = run(java_classpath, "share-three-consumers", emulator.bootstrap_server, emulator.control_url)
    assert result.returncode == 0 and "PASS share-three-consumers" in result.stdout, (
        f"{result.stdout}\n--- stderr ---\n{result.stderr[-6000:]}")
