"""The cluster administration APIs through the Java AdminClient (kafka-clients 4.3) against a
3-node kafkaemu: reassignments that move replicas, elections, log dirs, the metadata quorum,
config resources, with Kafka's errors for bad input (integration/java/.../ClusterAdminCases.java)."""
from __future__ import annotations

import pytest

from kafkaemu.testing import KafkaEmulator

from .java_runs import run_case


@pytest.fixture(scope="module")
def three_nodes():
    with KafkaEmulator(nodes=3) as emulator:
        yield emulator


@pytest.mark.parametrize("case", ["reassign-elect", "log-dirs-quorum", "configs"])
def test_cluster_admin(case, java_classpath, three_nodes):
    result = run_case(java_classpath, "ClusterAdminCases", case, three_nodes.bootstrap_server)
    assert result.returncode == 0 and f"PASS {case}" in result.stdout.splitlines(), (
        f"{case}: exit {result.returncode}\n{result.stdout}\n--- stderr ---\n{result.stderr[-6000:]}")
