"""kafka_reference: the reference Kafka broker's JVM dies with the Python process that started it,
even when that process is killed with SIGKILL."""
import pytest

from kafka_reference import missing
from tests.orphans import kill, orphan_of_killed_parent, wait_gone


def test_the_jvm_dies_when_the_process_that_started_it_is_killed():
    if missing():
        pytest.skip(missing())
    pid = orphan_of_killed_parent("""
        from kafka_reference import KafkaCluster
        cluster = KafkaCluster(nodes=1).start()
        print(cluster.nodes[0].pid, flush=True)
        """)
    try:
        assert wait_gone(pid)
    finally:
        kill(pid)
