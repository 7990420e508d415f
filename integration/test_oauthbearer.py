"""SASL/OAUTHBEARER with Kafka's unsecured-token validator: clients configured for OAUTHBEARER
with an unsecured token connect, and the token's subject is the principal the ACLs see."""
import base64
import json
import time
import uuid

import pytest

from kafkaemu.testing import KafkaEmulator

from .java_runs import assert_security_client_passed


@pytest.fixture(scope="module")
def emulator():
    with KafkaEmulator(sasl_mechanisms=("OAUTHBEARER",), authorizer=True, super_users="User:admin") as emulator:
        yield emulator


def unique(prefix):
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def confluent(emulator, principal, **extra):
    return {"bootstrap.servers": emulator.bootstrap_server, "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanism": "OAUTHBEARER", "enable.sasl.oauthbearer.unsecure.jwt": True,
            "sasl.oauthbearer.config": f"principal={principal}", **extra}


def test_confluent_oauthbearer_principal_is_the_token_subject(emulator):
    from confluent_kafka import KafkaError, Producer
    from confluent_kafka.admin import (AclBinding, AclOperation, AclPermissionType, AdminClient, NewTopic,
                                       ResourcePatternType, ResourceType)
    topic = unique("oauth")
    admin = AdminClient(confluent(emulator, "admin"))
    admin.create_topics([NewTopic(topic, 1)])[topic].result(10)
    binding = AclBinding(ResourceType.TOPIC, topic, ResourcePatternType.LITERAL, "User:alice", "*",
                         AclOperation.WRITE, AclPermissionType.ALLOW)
    list(admin.create_acls([binding]).values())[0].result(10)

    def send(principal):
        errors = []
        producer = Producer(confluent(emulator, principal, **{"message.timeout.ms": 5000}))
        producer.produce(topic, value=b"v", on_delivery=lambda err, msg: errors.append(err))
        producer.flush(10)
        return errors

    assert send("alice") == [None]
    errors = send("bob")
    assert errors[0] is not None and errors[0].code() == KafkaError.TOPIC_AUTHORIZATION_FAILED


def unsecured_jwt(subject: str, lifetime_s: int = 3600) -> str:
    part = lambda data: base64.urlsafe_b64encode(json.dumps(data).encode()).rstrip(b"=").decode()  # noqa: E731
    now = int(time.time())
    return f"{part({'alg': 'none'})}.{part({'sub': subject, 'iat': now, 'exp': now + lifetime_s})}."


def test_kafka_python_oauthbearer(emulator):
    from kafka import KafkaAdminClient
    from kafka.net.sasl.oauth import AbstractTokenProvider

    class Provider(AbstractTokenProvider):
        def token(self):
            return unsecured_jwt("admin")

    admin = KafkaAdminClient(bootstrap_servers=emulator.bootstrap_server, security_protocol="SASL_PLAINTEXT",
                             sasl_mechanism="OAUTHBEARER", sasl_oauth_token_provider=Provider())
    try:
        assert isinstance(admin.list_topics(), list)
    finally:
        admin.close()


def test_an_expired_token_is_refused(emulator, caplog):
    import logging

    from kafka import KafkaAdminClient
    from kafka.errors import KafkaError as KafkaPythonError
    from kafka.net.sasl.oauth import AbstractTokenProvider

    class Expired(AbstractTokenProvider):
        def token(self):
            return unsecured_jwt("admin", lifetime_s=-60)

    with caplog.at_level(logging.WARNING, logger="kafka"):
        with pytest.raises(KafkaPythonError):
            KafkaAdminClient(bootstrap_servers=emulator.bootstrap_server, security_protocol="SASL_PLAINTEXT",
                             sasl_mechanism="OAUTHBEARER", sasl_oauth_token_provider=Expired(),
                             bootstrap_timeout_ms=2000)
    assert "invalid_token" in caplog.text


def test_java_client_oauthbearer_unsecured_login(emulator, java_lib):
    # OAuthBearerLoginModule parses tokens with Jackson, which integration/java/pom.xml puts beside kafka-clients
    assert_security_client_passed(java_lib, "OAuthClient.java", emulator.bootstrap_server, "admin")
