"""The cluster administration APIs through the Java AdminClient (kafka-clients 4.3) against a
3-node kafkaemu: reassignments that move replicas, elections, log dirs, the metadata quorum,
config resources, with Kafka's errors for bad input (integration/java/.../ClusterAdminCases.java)."""
from __future__ import annotations

import subprocess

import pytest

from .test_java_clients import CASE_TIMEOUT_S, JAVA_DIR, java_classpath  # noqa: F401  (the fixture)

from kafkaemu.testing import KafkaEmulator


@pytest.fixture(scope="module")
def three_nodes():
    with KafkaEmulator(nodes=3) as emulator:
        yield emulator


@pytest.mark.parametrize("case", ["reassign-elect", "log-dirs-quorum", "configs"])
def test_cluster_admin(case, java_classpath, three_nodes):  # noqa: F811
    result = subprocess.run(
        ["java", "-Xss1m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
         f"-Dlog4j2.configurationFile={JAVA_DIR / 'log4j2.properties'}",
         "-cp", java_classpath, "kafkaemu.jvm.ClusterAdminCases", case, three_nodes.bootstrap_server],
        capture_output=True, text=True, timeout=CASE_TIMEOUT_S)
    assert result.returncode == 0 and f"PASS {case}" in result.stdout, (
        f"{case}: exit {result.returncode}\n{result.stdout}\n--- stderr ---\n{result.stderr[-6000:]}")
