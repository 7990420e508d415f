"""SCRAM users managed over the wire (DescribeUserScramCredentials, AlterUserScramCredentials)
with confluent-kafka and the Java AdminClient: a user added that way authenticates with each SCRAM
mechanism on its next connection, a deleted credential is refused, errors are Kafka's."""
import time
import uuid

import pytest

from kafkaemu.testing import KafkaEmulator

from .java_runs import assert_security_client_passed

ADMIN = {"admin": "admin-secret"}


@pytest.fixture(scope="module")
def emulator():
    with KafkaEmulator(sasl_users=ADMIN) as emulator:
        yield emulator


def conf(emulator, user, password, mechanism="SCRAM-SHA-256"):
    return {"bootstrap.servers": emulator.bootstrap_server, "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanism": mechanism, "sasl.username": user, "sasl.password": password}


@pytest.fixture(scope="module")
def admin(emulator):
    from confluent_kafka.admin import AdminClient
    return AdminClient(conf(emulator, "admin", ADMIN["admin"]))


def authenticates(emulator, user, password, mechanism) -> bool:
    """Whether a producer with these credentials gets metadata (authentication errors: False)."""
    from confluent_kafka import KafkaError, Producer
    errors = []
    producer = Producer({**conf(emulator, user, password, mechanism), "error_cb": errors.append})
    deadline = time.time() + 10
    while time.time() < deadline:
        try:
            producer.list_topics(timeout=1)
            return True
        except Exception:
            producer.poll(0.2)   # serves error_cb
            if any(e.code() == KafkaError._AUTHENTICATION for e in errors):
                return False
    raise AssertionError(f"neither metadata nor an authentication error: {errors}")


def test_a_user_added_over_the_wire_authenticates_with_each_mechanism(emulator, admin):
    from confluent_kafka.admin import (ScramCredentialInfo, ScramMechanism, UserScramCredentialDeletion,
                                       UserScramCredentialUpsertion)
    user = f"carol-{uuid.uuid4().hex[:6]}"
    assert not authenticates(emulator, user, "pw-256", "SCRAM-SHA-256")
    futures = admin.alter_user_scram_credentials([
        UserScramCredentialUpsertion(user, ScramCredentialInfo(ScramMechanism.SCRAM_SHA_256, 8192), b"pw-256"),
    ], request_timeout=10)
    assert futures[user].result() is None
    futures = admin.alter_user_scram_credentials([
        UserScramCredentialUpsertion(user, ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 4096), b"pw-512"),
    ], request_timeout=10)
    assert futures[user].result() is None
    described = admin.describe_user_scram_credentials([user], request_timeout=10)[user].result()
    assert sorted((i.mechanism, i.iterations) for i in described.scram_credential_infos) == \
        [(ScramMechanism.SCRAM_SHA_256, 8192), (ScramMechanism.SCRAM_SHA_512, 4096)]
    assert authenticates(emulator, user, "pw-256", "SCRAM-SHA-256")
    assert authenticates(emulator, user, "pw-512", "SCRAM-SHA-512")
    assert not authenticates(emulator, user, "pw-512", "SCRAM-SHA-256")
    futures = admin.alter_user_scram_credentials([UserScramCredentialDeletion(user, ScramMechanism.SCRAM_SHA_512)],
                                                 request_timeout=10)
    assert futures[user].result() is None
    assert not authenticates(emulator, user, "pw-512", "SCRAM-SHA-512")
    assert authenticates(emulator, user, "pw-256", "SCRAM-SHA-256")
    everyone = admin.describe_user_scram_credentials(request_timeout=10).result()
    assert {user, "admin"} <= set(everyone)


def test_kafkas_errors(emulator, admin):
    from confluent_kafka import KafkaError, KafkaException
    from confluent_kafka.admin import ScramCredentialInfo, ScramMechanism, UserScramCredentialUpsertion
    with pytest.raises(KafkaException) as info:
        admin.describe_user_scram_credentials(["nobody"], request_timeout=10)["nobody"].result()
    assert info.value.args[0].code() == KafkaError.RESOURCE_NOT_FOUND
    futures = admin.alter_user_scram_credentials([
        UserScramCredentialUpsertion("dave", ScramCredentialInfo(ScramMechanism.SCRAM_SHA_256, 20000), b"x")],
        request_timeout=10)
    with pytest.raises(KafkaException) as info:
        futures["dave"].result()
    assert info.value.args[0].code() == KafkaError.UNACCEPTABLE_CREDENTIAL
    assert "Too many iterations" in info.value.args[0].str()


def test_credentials_last_across_a_restart_with_a_data_dir(tmp_path):
    from confluent_kafka.admin import AdminClient, ScramCredentialInfo, ScramMechanism, UserScramCredentialUpsertion
    with KafkaEmulator(sasl_users=ADMIN, data_dir=str(tmp_path)) as first:
        admin = AdminClient(conf(first, "admin", ADMIN["admin"]))
        futures = admin.alter_user_scram_credentials([
            UserScramCredentialUpsertion("erin", ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 4096), b"e")],
            request_timeout=10)
        assert futures["erin"].result() is None
    with KafkaEmulator(sasl_users=ADMIN, data_dir=str(tmp_path)) as second:
        assert authenticates(second, "erin", "e", "SCRAM-SHA-512")


def test_java_admin_manages_scram_users(emulator, java_lib):
    assert_security_client_passed(java_lib, "ScramClient.java", emulator.bootstrap_server, ADMIN["admin"])
