"""The Java client conformance suite: each case in integration/java/ runs the real kafka-clients
jar against a fresh in-process kafkaemu and must print PASS.

The jars come from PyPI (integration/java/fetch_jars.py); the programs are compiled with the
machine's javac into integration/java/classes/ and recompiled only when a source changes.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

JAVA_DIR = Path(__file__).resolve().parent / "java"
SRC_DIR = JAVA_DIR / "src"
CLASSES_DIR = JAVA_DIR / "classes"
LIB_DIR = JAVA_DIR / "lib"
STAMP = CLASSES_DIR / ".compiled"

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
CASE_TIMEOUT_S = 180


def _sources() -> list[Path]:
    return sorted(SRC_DIR.rglob("*.java"))


def _up_to_date() -> bool:
    if not STAMP.is_file():
        return False
    built = STAMP.stat().st_mtime
    return all(src.stat().st_mtime <= built for src in _sources())


@pytest.fixture(scope="session")
def java_classpath() -> str:
    """Classpath with the compiled cases and the client jars; skips when Java or the jars are missing."""
    for tool in ("java", "javac"):
        if shutil.which(tool) is None:
            pytest.skip(f"Java client suite needs `{tool}` (a JDK 17+) on PATH")
    sys.path.insert(0, str(JAVA_DIR))
    try:
        import fetch_jars
    finally:
        sys.path.pop(0)
    try:
        fetch_jars.ensure_jars()
    except Exception as exc:  # no registry, no pip: report, do not fail the run
        pytest.skip(f"Java client suite needs the kafka-clients jars (integration/java/fetch_jars.py): {exc}")
    classpath = os.pathsep.join([str(CLASSES_DIR), str(LIB_DIR / "*")])
    if not _up_to_date():
        CLASSES_DIR.mkdir(parents=True, exist_ok=True)
        result = subprocess.run(
            ["javac", "-d", str(CLASSES_DIR), "-cp", str(LIB_DIR / "*"), "-encoding", "UTF-8",
             *[str(s) for s in _sources()]],
            capture_output=True, text=True, timeout=300,
        )
        assert result.returncode == 0, f"javac failed:\n{result.stderr}"
        STAMP.touch()
    return classpath


def run_case(classpath: str, case: str, bootstrap: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["java", "-Xss1m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
         f"-Dlog4j2.configurationFile={JAVA_DIR / 'log4j2.properties'}",
         "-cp", classpath, "kafkaemu.jvm.Main", case, bootstrap],
        capture_output=True, text=True, timeout=CASE_TIMEOUT_S,
    )


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
