"""The cluster administration APIs through the Java AdminClient (kafka-clients 4.3) against a
3-node kafkaemu: reassignments that move replicas, elections, log dirs, the metadata quorum,
config resources, with Kafka's errors for bad input (integration/java/.../ClusterAdminCases.java);
voters added and removed and a broker unregistered on a 3-node kafkaemu of their own."""
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


def test_quorum_membership_and_unregistration(java_classpath):
    """AddRaftVoter, RemoveRaftVoter and UnregisterBroker round-trip with Kafka's errors; the
    unregistered broker registers again when it restarts."""
    with KafkaEmulator(nodes=3) as emulator:
        result = run_case(java_classpath, "ClusterAdminCases", "quorum-membership", emulator.bootstrap_server)
        assert result.returncode == 0 and "PASS quorum-membership" in result.stdout.splitlines(), (
            f"exit {result.returncode}\n{result.stdout}\n--- stderr ---\n{result.stderr[-6000:]}")
        assert [(n["node_id"], n["registered"], n["voter"]) for n in emulator.nodes()] == \
            [(0, True, True), (1, True, False), (2, False, False)]
        emulator.stop_node(2)
        emulator.start_node(2)
        assert [n["registered"] for n in emulator.nodes()] == [True, True, True]
