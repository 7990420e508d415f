"""Delegation tokens with the Java client: created by a SCRAM user, used to authenticate (SCRAM with
tokenauth=true) as its owner, refused to token-authenticated clients, and refused once expired on
the broker's manual clock."""
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from kafkaemu.testing import KafkaEmulator

USERS = {"admin": "admin-secret", "alice": "alice-secret"}
JAVA_DIR = Path(__file__).resolve().parent / "java"


@pytest.fixture(scope="module")
def java_lib():
    if shutil.which("java") is None:
        pytest.skip("the Java client tests need `java` (a JDK 17+) on PATH")
    sys.path.insert(0, str(JAVA_DIR))
    try:
        import fetch_jars
        fetch_jars.ensure_jars()
    except Exception as exc:  # no registry, no pip: report, do not fail the run
        pytest.skip(f"the Java client tests need the kafka-clients jars (integration/java/fetch_jars.py): {exc}")
    finally:
        sys.path.remove(str(JAVA_DIR))
    return str(JAVA_DIR / "lib" / "*")


def test_java_delegation_token_lifecycle(java_lib):
    with KafkaEmulator(sasl_users=USERS, manual_clock=True, authorizer=True, super_users="User:admin",
                       delegation_token_secret_key="token-secret", delegation_token_expiry_time_ms=60_000) as kafka:
        topic = "tokens"
        kafka.create_topic(topic)
        from kafkaemu.auth.acl import Acl, AclOperation, AclPermissionType, PatternType, ResourceType
        kafka.call(lambda broker: broker.authorizer.create([Acl(
            ResourceType.TOPIC, topic, PatternType.LITERAL, "User:alice", "*", AclOperation.WRITE,
            AclPermissionType.ALLOW)]))
        proc = subprocess.Popen(
            ["java", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
             f"-Dlog4j2.configurationFile={JAVA_DIR / 'log4j2.properties'}", "-cp", java_lib,
             str(Path(__file__).resolve().parent / "java_security" / "TokenClient.java"), kafka.bootstrap_server,
             USERS["alice"], topic], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        lines = []
        try:
            for line in proc.stdout:
                lines.append(line.rstrip())
                if line.startswith("ADVANCE"):
                    kafka.advance_clock(120_000)   # past the token's expiry (60 s after it was made)
                    proc.stdin.write("go\n")
                    proc.stdin.flush()
                if line.startswith(("PASS", "FAIL")):
                    break
        finally:
            proc.kill()
            stderr = proc.stderr.read()
            proc.wait()
        assert lines and lines[-1] == "PASS", "\n".join(lines) + "\n" + stderr[-3000:]
