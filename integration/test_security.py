"""SASL (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512), SSL and SASL_SSL listeners with real clients:
records go through the authenticated connection and back; a wrong password gets an
authentication error on the client; a client that does not authenticate is refused."""
import asyncio
import logging
import socket
import ssl
import subprocess
import time
import uuid

import pytest

from kafkaemu.protocol.api_keys import ApiKey
from kafkaemu.protocol.errors import ErrorCode
from kafkaemu.testing import KafkaEmulator

from kafkaemu.testing import raw_client as raw_kafka
from .java_runs import security_client_command
from .security_certs import self_signed_certificate

USERS = {"alice": "s3cret", "bob": "pässwörd"}
MECHANISMS = ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"]
RECORDS = [b"r0", b"r1", b"r2"]


@pytest.fixture(scope="module")
def certificate(tmp_path_factory):
    return self_signed_certificate(tmp_path_factory.mktemp("tls"))


@pytest.fixture(scope="module")
def sasl_emulator():
    with KafkaEmulator(sasl_users=USERS) as emulator:
        yield emulator


@pytest.fixture(scope="module")
def ssl_emulator(certificate):
    cert, key = certificate
    with KafkaEmulator(tls_cert=cert, tls_key=key) as emulator:
        yield emulator


@pytest.fixture(scope="module")
def sasl_ssl_emulator(certificate):
    cert, key = certificate
    with KafkaEmulator(sasl_users=USERS, tls_cert=cert, tls_key=key) as emulator:
        yield emulator


def topic_name(prefix):
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


# -- confluent-kafka (librdkafka) -------------------------------------------------------------
def confluent_config(emulator, mechanism=None, user="alice", password=None, ca=None):
    conf = {"bootstrap.servers": emulator.bootstrap_server, "security.protocol": emulator.security_protocol}
    if mechanism:
        conf.update({"sasl.mechanism": mechanism, "sasl.username": user,
                     "sasl.password": USERS[user] if password is None else password})
    if ca:
        conf["ssl.ca.location"] = ca
    return conf


def confluent_roundtrip(conf):
    from confluent_kafka import Consumer, Producer
    topic = topic_name("sec-ck")
    producer = Producer(conf)
    for value in RECORDS:
        producer.produce(topic, value=value)
    assert producer.flush(20) == 0
    consumer = Consumer({**conf, "group.id": topic, "auto.offset.reset": "earliest"})
    consumer.subscribe([topic])
    got, deadline = [], time.time() + 20
    while len(got) < len(RECORDS) and time.time() < deadline:
        message = consumer.poll(0.5)
        if message is not None:
            assert message.error() is None, message.error()
            got.append(message.value())
    consumer.close()
    assert got == RECORDS


@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_confluent_sasl_plaintext(sasl_emulator, mechanism):
    assert sasl_emulator.security_protocol == "SASL_PLAINTEXT"
    confluent_roundtrip(confluent_config(sasl_emulator, mechanism))


def test_confluent_scram_with_a_non_ascii_password(sasl_emulator):
    confluent_roundtrip(confluent_config(sasl_emulator, "SCRAM-SHA-256", user="bob"))


def test_confluent_ssl(ssl_emulator, certificate):
    assert ssl_emulator.security_protocol == "SSL"
    confluent_roundtrip(confluent_config(ssl_emulator, ca=certificate[0]))


@pytest.mark.parametrize("mechanism", ["PLAIN", "SCRAM-SHA-512"])
def test_confluent_sasl_ssl(sasl_ssl_emulator, certificate, mechanism):
    assert sasl_ssl_emulator.security_protocol == "SASL_SSL"
    confluent_roundtrip(confluent_config(sasl_ssl_emulator, mechanism, ca=certificate[0]))


def confluent_errors(conf, seconds=10):
    """Errors librdkafka reports through error_cb (served by poll) while it tries to connect."""
    from confluent_kafka import Producer
    errors = []
    producer = Producer({**conf, "error_cb": errors.append})
    deadline = time.time() + seconds
    while not errors and time.time() < deadline:
        producer.poll(0.2)
    return errors


@pytest.mark.parametrize("mechanism,message", [
    ("PLAIN", "Invalid username or password"),
    ("SCRAM-SHA-256", "invalid credentials with SASL mechanism SCRAM-SHA-256"),
    ("SCRAM-SHA-512", "invalid credentials with SASL mechanism SCRAM-SHA-512"),
])
def test_confluent_wrong_password_is_an_authentication_error(sasl_emulator, mechanism, message):
    from confluent_kafka import KafkaError
    errors = confluent_errors(confluent_config(sasl_emulator, mechanism, password="wrong"))
    assert errors and errors[0].code() == KafkaError._AUTHENTICATION
    assert message in errors[0].str()


def test_confluent_unknown_user_is_an_authentication_error(sasl_emulator):
    from confluent_kafka import KafkaError
    conf = confluent_config(sasl_emulator, "PLAIN")
    conf["sasl.username"] = "mallory"
    errors = confluent_errors(conf)
    assert errors and errors[0].code() == KafkaError._AUTHENTICATION


def test_confluent_mechanism_not_enabled_is_refused(certificate):
    from confluent_kafka import KafkaError
    with KafkaEmulator(sasl_users=USERS, sasl_mechanisms=("SCRAM-SHA-512",)) as emulator:
        errors = confluent_errors(confluent_config(emulator, "PLAIN"))
    assert errors and errors[0].code() == KafkaError._AUTHENTICATION
    assert "SCRAM-SHA-512" in errors[0].str()  # librdkafka quotes the broker's enabled list


def test_confluent_plaintext_client_gets_no_metadata_from_a_sasl_listener(sasl_emulator):
    from confluent_kafka import KafkaException
    from confluent_kafka.admin import AdminClient
    admin = AdminClient({"bootstrap.servers": sasl_emulator.bootstrap_server})
    with pytest.raises(KafkaException):
        admin.list_topics(timeout=2)


# -- kafka-python ------------------------------------------------------------------------------
def kafka_python_config(emulator, mechanism, password=None, ca=None):
    conf = dict(bootstrap_servers=emulator.bootstrap_server, security_protocol=emulator.security_protocol,
                sasl_mechanism=mechanism, sasl_plain_username="alice",
                sasl_plain_password=USERS["alice"] if password is None else password)
    if ca:
        conf["ssl_context"] = ssl.create_default_context(cafile=ca)
    return conf


def kafka_python_roundtrip(conf):
    from kafka import KafkaConsumer, KafkaProducer
    topic = topic_name("sec-kp")
    producer = KafkaProducer(**conf)
    assert producer.config["api_version"] == (4, 3)  # version inference unchanged by SASL
    for value in RECORDS:
        producer.send(topic, value)
    producer.flush(20)
    producer.close()
    consumer = KafkaConsumer(topic, group_id=topic, auto_offset_reset="earliest", consumer_timeout_ms=10000, **conf)
    got = []
    for message in consumer:
        got.append(message.value)
        if len(got) == len(RECORDS):
            break
    consumer.close()
    assert got == RECORDS


@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_kafka_python_sasl_plaintext(sasl_emulator, mechanism):
    kafka_python_roundtrip(kafka_python_config(sasl_emulator, mechanism))


def test_kafka_python_sasl_ssl_scram(sasl_ssl_emulator, certificate):
    kafka_python_roundtrip(kafka_python_config(sasl_ssl_emulator, "SCRAM-SHA-256", ca=certificate[0]))


@pytest.mark.parametrize("mechanism", ["PLAIN", "SCRAM-SHA-512"])
def test_kafka_python_wrong_password_fails_bootstrap_with_an_authentication_error(sasl_emulator, caplog, mechanism):
    from kafka import KafkaProducer
    from kafka.errors import KafkaTimeoutError
    with caplog.at_level(logging.WARNING, logger="kafka"):
        with pytest.raises(KafkaTimeoutError):
            KafkaProducer(bootstrap_timeout_ms=1500,
                          **kafka_python_config(sasl_emulator, mechanism, password="wrong"))
    assert "SaslAuthenticationFailedError" in caplog.text, caplog.text


# -- aiokafka ----------------------------------------------------------------------------------
def aiokafka_config(emulator, mechanism, password=None, ca=None):
    from aiokafka.helpers import create_ssl_context
    conf = dict(bootstrap_servers=emulator.bootstrap_server, security_protocol=emulator.security_protocol,
                sasl_mechanism=mechanism, sasl_plain_username="alice",
                sasl_plain_password=USERS["alice"] if password is None else password)
    if ca:
        conf["ssl_context"] = create_ssl_context(cafile=ca)
    return conf


async def aiokafka_roundtrip(conf):
    from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
    topic = topic_name("sec-aio")
    producer = AIOKafkaProducer(**conf)
    await producer.start()
    try:
        for value in RECORDS:
            await producer.send_and_wait(topic, value)
    finally:
        await producer.stop()
    consumer = AIOKafkaConsumer(topic, group_id=topic, auto_offset_reset="earliest", **conf)
    await consumer.start()
    try:
        got = [(await asyncio.wait_for(consumer.getone(), 20)).value for _ in RECORDS]
    finally:
        await consumer.stop()
    assert got == RECORDS


@pytest.mark.parametrize("mechanism", ["PLAIN", "SCRAM-SHA-256"])
def test_aiokafka_sasl_plaintext(sasl_emulator, mechanism):
    asyncio.run(aiokafka_roundtrip(aiokafka_config(sasl_emulator, mechanism)))


def test_aiokafka_sasl_ssl_scram(sasl_ssl_emulator, certificate):
    asyncio.run(aiokafka_roundtrip(aiokafka_config(sasl_ssl_emulator, "SCRAM-SHA-512", ca=certificate[0])))


def test_aiokafka_wrong_password(sasl_emulator, caplog):
    from aiokafka import AIOKafkaProducer
    from aiokafka.errors import KafkaConnectionError

    async def start():
        producer = AIOKafkaProducer(**aiokafka_config(sasl_emulator, "SCRAM-SHA-256", password="wrong"))
        try:
            with pytest.raises(KafkaConnectionError):
                await producer.start()
        finally:
            await producer.stop()
    with caplog.at_level(logging.ERROR, logger="aiokafka"):
        asyncio.run(start())
    assert "SaslAuthenticationFailed" in caplog.text


# -- raw protocol --------------------------------------------------------------------------------
def test_request_before_authentication_closes_the_connection(sasl_emulator):
    with raw_kafka.connect(sasl_emulator) as sock:
        assert raw_kafka.request(sock, ApiKey.API_VERSIONS, 3, {
            "client_software_name": "t", "client_software_version": "1"}).error_code == ErrorCode.NONE
        sock.sendall(raw_kafka.encode_request(ApiKey.METADATA, 12, {"topics": [], "allow_auto_topic_creation": False}))
        assert raw_kafka.is_closed(sock)


def test_handshake_v0_raw_plain_token_then_requests(sasl_emulator):
    with raw_kafka.connect(sasl_emulator) as sock:
        resp = raw_kafka.request(sock, ApiKey.SASL_HANDSHAKE, 0, {"mechanism": "PLAIN"})
        assert resp.error_code == ErrorCode.NONE and list(resp.mechanisms) == MECHANISMS
        sock.sendall(raw_kafka.frame(b"\x00alice\x00s3cret"))
        assert raw_kafka.read_reply(sock) == b""  # the empty PLAIN reply, size-framed
        resp = raw_kafka.request(sock, ApiKey.METADATA, 12, {"topics": [], "allow_auto_topic_creation": False},
                                 correlation_id=2)
        assert resp.cluster_id and resp.brokers


def test_wrong_password_reply_then_close(sasl_emulator):
    with raw_kafka.connect(sasl_emulator) as sock:
        raw_kafka.request(sock, ApiKey.SASL_HANDSHAKE, 1, {"mechanism": "PLAIN"})
        resp = raw_kafka.request(sock, ApiKey.SASL_AUTHENTICATE, 2, {"auth_bytes": b"\x00alice\x00nope"},
                                 correlation_id=2)
        assert resp.error_code == ErrorCode.SASL_AUTHENTICATION_FAILED
        assert resp.error_message == "Authentication failed: Invalid username or password"
        assert raw_kafka.is_closed(sock)


def test_plaintext_listener_answers_sasl_handshake_with_illegal_sasl_state(kafka_emulator):
    with raw_kafka.connect(kafka_emulator) as sock:
        resp = raw_kafka.request(sock, ApiKey.SASL_HANDSHAKE, 1, {"mechanism": "PLAIN"})
        assert resp.error_code == ErrorCode.ILLEGAL_SASL_STATE


def test_plaintext_bytes_to_a_tls_listener_close_the_connection(ssl_emulator):
    with raw_kafka.connect(ssl_emulator) as sock:
        sock.sendall(raw_kafka.api_versions_frame())
        assert raw_kafka.is_closed(sock)


def test_tls_listener_serves_kafka_requests(ssl_emulator, certificate):
    host, port = ssl_emulator.bootstrap_server.split(":")
    context = ssl.create_default_context(cafile=certificate[0])
    with context.wrap_socket(socket.create_connection((host, int(port)), timeout=5), server_hostname=host) as sock:
        resp = raw_kafka.request(sock, ApiKey.API_VERSIONS, 3,
                                 {"client_software_name": "t", "client_software_version": "1"})
        assert resp.error_code == ErrorCode.NONE


def test_subprocess_emulator_passes_security_options_to_the_cli(certificate):
    cert, key = certificate
    with KafkaEmulator(subprocess_mode=True, sasl_users=USERS, sasl_mechanisms=("SCRAM-SHA-256",),
                       tls_cert=cert, tls_key=key) as emulator:
        assert emulator.security_protocol == "SASL_SSL"
        confluent_roundtrip(confluent_config(emulator, "SCRAM-SHA-256", ca=cert))


def test_every_node_of_a_cluster_authenticates(certificate):
    """Partition leaders spread over three nodes: the client logs in on each node's listener."""
    from confluent_kafka import Consumer, Producer, TopicPartition
    cert, key = certificate
    with KafkaEmulator(nodes=3, sasl_users=USERS, tls_cert=cert, tls_key=key) as emulator:
        topic = topic_name("sec-nodes")
        emulator.call(lambda broker: broker.topics.create(topic, 3, {}))
        leaders = emulator.call(lambda broker: {broker.placement.partition_leader(p)
                                                for p in broker.store.topics[topic].partitions})
        assert len(leaders) == 3
        conf = confluent_config(emulator, "SCRAM-SHA-256", ca=cert)
        producer = Producer(conf)
        for partition in range(3):
            producer.produce(topic, value=b"p%d" % partition, partition=partition)
        assert producer.flush(20) == 0
        consumer = Consumer({**conf, "group.id": topic})
        consumer.assign([TopicPartition(topic, p, 0) for p in range(3)])
        got, deadline = set(), time.time() + 20
        while len(got) < 3 and time.time() < deadline:
            message = consumer.poll(0.5)
            if message is not None and message.error() is None:
                got.add(message.value())
        consumer.close()
        assert got == {b"p0", b"p1", b"p2"}


def test_confluent_sasl_client_against_a_plaintext_listener_fails_authentication(kafka_emulator):
    """Kafka answers SaslHandshake on a PLAINTEXT listener with ILLEGAL_SASL_STATE; librdkafka
    reports that as an authentication error instead of hanging."""
    from confluent_kafka import KafkaError
    conf = {"bootstrap.servers": kafka_emulator.bootstrap_server, "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanism": "PLAIN", "sasl.username": "alice", "sasl.password": "s3cret"}
    errors = confluent_errors(conf)
    assert errors and errors[0].code() == KafkaError._AUTHENTICATION, errors
    assert "Request not valid in current SASL state" in errors[0].str()  # librdkafka's text for error 34


# -- Java kafka-clients (the reference SCRAM client) -------------------------------------------
def run_java_client(java_lib, emulator, mechanism, password, ca=""):
    result = subprocess.run(
        security_client_command(java_lib, "SecurityClient.java", emulator.bootstrap_server,
                                emulator.security_protocol, mechanism, "alice", password, ca),
        capture_output=True, text=True, timeout=180)
    lines = [line for line in result.stdout.splitlines() if line.startswith(("GOT ", "ERROR "))]
    assert lines, f"no verdict (exit {result.returncode}):\n{result.stdout}\n{result.stderr[-3000:]}"
    return lines[-1]


def test_java_client_sasl_plaintext_plain(java_lib, sasl_emulator):
    assert run_java_client(java_lib, sasl_emulator, "PLAIN", USERS["alice"]) == "GOT [v0, v1, v2]"


def test_java_client_sasl_ssl_scram_sha_512(java_lib, sasl_ssl_emulator, certificate):
    verdict = run_java_client(java_lib, sasl_ssl_emulator, "SCRAM-SHA-512", USERS["alice"], certificate[0])
    assert verdict == "GOT [v0, v1, v2]"


def test_java_client_wrong_password_gets_kafkas_sasl_authentication_exception(java_lib, sasl_emulator):
    verdict = run_java_client(java_lib, sasl_emulator, "SCRAM-SHA-256", "wrong")
    assert verdict == ("ERROR org.apache.kafka.common.errors.SaslAuthenticationException: Authentication failed "
                       "during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-256")
