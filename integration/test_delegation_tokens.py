"""Delegation tokens with the Java client: created by a SCRAM user, used to authenticate (SCRAM with
tokenauth=true) as its owner, refused to token-authenticated clients, and refused once expired on
the broker's manual clock."""
import subprocess

from kafkaemu.testing import KafkaEmulator

from .java_runs import security_client_command

USERS = {"admin": "admin-secret", "alice": "alice-secret"}


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
            security_client_command(java_lib, "TokenClient.java", kafka.bootstrap_server, USERS["alice"], topic),
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
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
