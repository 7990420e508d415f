"""The Java client conformance suite: each case in integration/java/ runs the real kafka-clients
jar against a fresh in-process kafkaemu and must print PASS.

The jars come from Maven Central (integration/java/fetch_jars.py); the programs are compiled with the
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
    "transactions-epoch-per-transaction",
]
TRANSACTION_CASES = [c for c in CASES if c.startswith("transactions-")]
# KIP-848 cases run against an emulator with a short consumer-group heartbeat interval and session.
KIP848_CASES = ["group-consumer-protocol", "group-consumer-protocol-static-regex", "group-migration"]
KIP848_SETTINGS = {"group.consumer.heartbeat.interval.ms": 500, "group.consumer.session.timeout.ms": 6000,
                   "group.consumer.min.heartbeat.interval.ms": 500, "group.consumer.min.session.timeout.ms": 6000}
# run against an emulator checking for timed-out transactions every 200 ms
TRANSACTION_VERSION_CASES = ["transactions-version-change"]


def run_case(classpath: str, case: str, bootstrap: str) -> subprocess.CompletedProcess:
    return java_runs.run_case(classpath, "Main", case, bootstrap)


def test_case_list_matches_runner(java_classpath):
    listed = subprocess.run(["java", "-cp", java_classpath, "kafkaemu.jvm.Main", "list"],
                            capture_output=True, text=True, timeout=60, check=True).stdout.split()
    assert listed == CASES + KIP848_CASES + TRANSACTION_VERSION_CASES


def _assert_passed(case: str, result: subprocess.CompletedProcess) -> None:
    verdict = [line for line in result.stdout.splitlines() if line.startswith(("PASS ", "FAIL "))]
    assert result.returncode == 0 and verdict and verdict[-1].startswith(f"PASS {case} "), (
        f"{case}: exit {result.returncode}\n{result.stdout}\n--- stderr (last 6000 chars) ---\n{result.stderr[-6000:]}"
    )


def _assert_transaction_version(emulator, v2: bool) -> None:
    """What the transactional producer sent: under V2 (KIP-890 part 2) EndTxn v5, transactional
    Produce v12+, TxnOffsetCommit v5 or v6 and neither AddPartitionsToTxn nor AddOffsetsToTxn; under V1
    EndTxn v4, AddPartitionsToTxn, and AddOffsetsToTxn with TxnOffsetCommit v4."""
    entries = emulator.requests(limit=100_000)
    versions: dict[int, set[int]] = {}
    for e in entries:
        versions.setdefault(e["api_key"], set()).add(e["version"])
    end_txn, add_partitions = versions.get(26, set()), versions.get(24, set())
    if not end_txn:
        return   # a case without EndTxn (abort-hanging's producer is fenced first)
    offsets, add_offsets = versions.get(28, set()), versions.get(25, set())
    if v2:
        assert end_txn == {5} and not add_partitions and not add_offsets, versions
        assert min(versions[0]) >= 12 and offsets <= {5, 6}, versions   # v6: by topic id (Kafka 4.4)
    else:
        assert end_txn == {4} and add_partitions and offsets <= {4}, versions
        assert bool(offsets) == bool(add_offsets), versions


@pytest.mark.parametrize("case", CASES)
def test_java_client(case, java_classpath, fresh_kafka_emulator):
    if case in TRANSACTION_CASES:
        fresh_kafka_emulator.enable_request_log()
    result = run_case(java_classpath, case, fresh_kafka_emulator.bootstrap_server)
    _assert_passed(case, result)
    if case in TRANSACTION_CASES:   # transaction.version 2 is finalized: the client uses V2
        _assert_transaction_version(fresh_kafka_emulator, v2=True)


@pytest.mark.parametrize("case", TRANSACTION_CASES)
def test_java_transactions_capped_to_v1(case, java_classpath):
    """The transaction cases again on a cluster whose transaction.version is 1: the client stays on
    transactions V1 (AddPartitionsToTxn, EndTxn v4, the epoch kept across transactions)."""
    from kafkaemu.testing import KafkaEmulator
    with KafkaEmulator(transaction_version=1) as emulator:
        emulator.enable_request_log()
        result = run_case(java_classpath, case, emulator.bootstrap_server)
        _assert_passed(case, result)
        _assert_transaction_version(emulator, v2=False)


@pytest.mark.parametrize("case", KIP848_CASES)
def test_java_client_consumer_protocol(case, java_classpath):
    from kafkaemu.testing import KafkaEmulator
    with KafkaEmulator(extra=dict(KIP848_SETTINGS)) as emulator:
        result = run_case(java_classpath, case, emulator.bootstrap_server)
    _assert_passed(case, result)


def test_java_transactions_follow_a_transaction_version_change(java_classpath):
    """Admin.updateFeatures lowers transaction.version to 1 and raises it back while the cluster
    runs: new producers run V1 then V2, and the coordinator's timeout aborts follow (one epoch bump
    under V1, two under V2); the request log shows EndTxn v4 and v5 both."""
    from kafkaemu.testing import KafkaEmulator
    with KafkaEmulator(transaction_abort_timed_out_transaction_cleanup_interval_ms=200) as emulator:
        emulator.enable_request_log()
        [case] = TRANSACTION_VERSION_CASES
        result = run_case(java_classpath, case, emulator.bootstrap_server)
        _assert_passed(case, result)
        end_txn = {e["version"] for e in emulator.requests(limit=100_000) if e["api_key"] == 26}
        assert end_txn == {4, 5}
