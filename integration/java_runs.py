"""Running the Java client programs with the kafka-clients jars (integration/java/fetch_jars.py, from
Maven Central):
the case runners of integration/java/src (compiled into integration/java/classes/, recompiled only
when a source changes; each case prints PASS or FAIL) and the single-file programs of
integration/java_security/ (run from source). What is missing (a JDK, the jars) skips the test."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

import pytest

JAVA_DIR = Path(__file__).resolve().parent / "java"
SRC_DIR = JAVA_DIR / "src"
CLASSES_DIR = JAVA_DIR / "classes"
LIB_DIR = JAVA_DIR / "lib"
STAMP = CLASSES_DIR / ".compiled"
SECURITY_DIR = Path(__file__).resolve().parent / "java_security"
CASE_TIMEOUT_S = 180
JVM_OPTIONS = ["-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
               f"-Dlog4j2.configurationFile={JAVA_DIR / 'log4j2.properties'}"]


@contextmanager
def fetch_jars_module():
    """integration/java/fetch_jars.py, imported."""
    sys.path.insert(0, str(JAVA_DIR))
    try:
        import fetch_jars
        yield fetch_jars
    finally:
        sys.path.remove(str(JAVA_DIR))


def client_jars(*tools: str) -> str:
    """The classpath of the kafka-clients jars; skips without ``tools`` (default java) or the jars."""
    for tool in tools or ("java",):
        if shutil.which(tool) is None:
            pytest.skip(f"the Java client tests need `{tool}` (a JDK 17+) on PATH")
    try:
        with fetch_jars_module() as fetch_jars:
            fetch_jars.ensure_jars()
    except Exception as exc:  # no Maven, no registry: report, do not fail the run
        pytest.skip(f"the Java client tests need the kafka-clients jars (integration/java/fetch_jars.py): {exc}")
    return str(LIB_DIR / "*")


def _sources() -> list[Path]:
    return sorted(SRC_DIR.rglob("*.java"))


def _up_to_date() -> bool:
    if not STAMP.is_file():
        return False
    built = STAMP.stat().st_mtime
    return all(src.stat().st_mtime <= built for src in _sources())


def compiled_classpath() -> str:
    """The compiled case runners and the client jars, compiling when a source changed."""
    jars = client_jars("java", "javac")
    if not _up_to_date():
        CLASSES_DIR.mkdir(parents=True, exist_ok=True)
        result = subprocess.run(
            ["javac", "-d", str(CLASSES_DIR), "-cp", jars, "-encoding", "UTF-8", *[str(s) for s in _sources()]],
            capture_output=True, text=True, timeout=300)
        assert result.returncode == 0, f"javac failed:\n{result.stderr}"
        STAMP.touch()
    return os.pathsep.join([str(CLASSES_DIR), jars])


def run_case(classpath: str, runner: str, *args: str) -> subprocess.CompletedProcess:
    """``java kafkaemu.jvm.<runner> CASE OPERANDS...`` (or ``list``)."""
    return subprocess.run(["java", "-Xss1m", *JVM_OPTIONS, "-cp", classpath, f"kafkaemu.jvm.{runner}", *args],
                          capture_output=True, text=True, timeout=CASE_TIMEOUT_S)


def listed_cases(classpath: str, runner: str) -> list[str]:
    return run_case(classpath, runner, "list").stdout.split()


def assert_passed(result: subprocess.CompletedProcess, case: str) -> None:
    verdict = [line for line in result.stdout.splitlines() if line.startswith(("PASS ", "FAIL "))]
    assert result.returncode == 0 and verdict and verdict[-1].startswith(f"PASS {case} "), (
        f"{case}: exit {result.returncode}\n{result.stdout}\n--- stderr (last 6000 chars) ---\n{result.stderr[-6000:]}")


def security_client_command(classpath: str, program: str, *args: str) -> list[str]:
    """The command running integration/java_security/<program> from source."""
    return ["java", *JVM_OPTIONS, "-cp", classpath, str(SECURITY_DIR / program), *args]


def assert_security_client_passed(classpath: str, program: str, *args: str) -> None:
    """A java_security program that prints PASS (or FAIL) once, at the end."""
    result = subprocess.run(security_client_command(classpath, program, *args), capture_output=True, text=True,
                            timeout=240)
    verdicts = [line for line in result.stdout.splitlines() if line.startswith(("PASS", "FAIL"))]
    assert verdicts == ["PASS"], f"{result.stdout}\n{result.stderr[-3000:]}"
