"""Authorization with real clients over SASL: ACLs decide what each user may do, with Kafka's
errors per resource (TOPIC/GROUP/TRANSACTIONAL_ID/CLUSTER_AUTHORIZATION_FAILED)."""
import time
import uuid

import pytest

from kafkaemu.testing import KafkaEmulator

from .java_runs import assert_security_client_passed

USERS = {"admin": "admin-secret", "alice": "alice-secret", "bob": "bob-secret"}


_ADMINS = {}


@pytest.fixture(scope="module")
def emulator():
    with KafkaEmulator(sasl_users=USERS, authorizer=True, super_users="User:admin") as emulator:
        yield emulator
        _ADMINS.clear()   # its admin client goes before the broker does


def unique(prefix):
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def conf(emulator, user, **extra):
    return {"bootstrap.servers": emulator.bootstrap_server, "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanism": "SCRAM-SHA-512", "sasl.username": user, "sasl.password": USERS[user], **extra}


def admin(emulator):
    """The super user's AdminClient (kept: librdkafka fails the futures of a client collected)."""
    from confluent_kafka.admin import AdminClient
    if emulator.bootstrap_server not in _ADMINS:
        _ADMINS[emulator.bootstrap_server] = AdminClient(conf(emulator, "admin"))
    return _ADMINS[emulator.bootstrap_server]


def allow(emulator, principal, resource_type, name, operation, pattern="LITERAL", permission="ALLOW"):
    from confluent_kafka.admin import AclBinding, AclOperation, AclPermissionType, ResourcePatternType, ResourceType
    binding = AclBinding(ResourceType[resource_type], name, ResourcePatternType[pattern], principal, "*",
                         AclOperation[operation], AclPermissionType[permission])
    for future in admin(emulator).create_acls([binding], request_timeout=10).values():
        future.result()


def create_topics(emulator, *names):
    from confluent_kafka.admin import NewTopic
    for future in admin(emulator).create_topics([NewTopic(n, 1) for n in names], request_timeout=10).values():
        future.result()


def produce(emulator, user, topic, values, **extra):
    from confluent_kafka import Producer
    errors = []
    producer = Producer(conf(emulator, user, **extra))
    for value in values:
        producer.produce(topic, value=value, on_delivery=lambda err, msg: errors.append(err))
    producer.flush(15)
    return errors


def consume(emulator, user, topic, group, count, seconds=15):
    """(values, the first error the consumer reports)."""
    from confluent_kafka import Consumer
    consumer = Consumer(conf(emulator, user, **{"group.id": group, "auto.offset.reset": "earliest"}))
    consumer.subscribe([topic])
    values, error, deadline = [], None, time.time() + seconds
    while len(values) < count and error is None and time.time() < deadline:
        message = consumer.poll(0.5)
        if message is None:
            continue
        if message.error():
            error = message.error()
        else:
            values.append(message.value())
    consumer.close()
    return values, error


# -- confluent-kafka --------------------------------------------------------------------------
def test_a_service_may_read_topic_a_but_not_b(emulator):
    from confluent_kafka import KafkaError
    a, b, group = unique("a"), unique("b"), unique("svc")
    create_topics(emulator, a, b)
    assert produce(emulator, "admin", a, [b"a1", b"a2"]) == [None, None]
    assert produce(emulator, "admin", b, [b"b1"]) == [None]
    allow(emulator, "User:alice", "TOPIC", a, "READ")
    allow(emulator, "User:alice", "GROUP", group, "READ")
    assert consume(emulator, "alice", a, group, 2) == ([b"a1", b"a2"], None)
    values, error = consume(emulator, "alice", b, group, 1)
    assert values == [] and error.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED


def test_a_consumer_without_group_read_gets_group_authorization_failed(emulator):
    from confluent_kafka import KafkaError
    topic, group = unique("t"), unique("g")
    create_topics(emulator, topic)
    produce(emulator, "admin", topic, [b"x"])
    allow(emulator, "User:bob", "TOPIC", topic, "READ")
    values, error = consume(emulator, "bob", topic, group, 1)
    assert values == [] and error.code() == KafkaError.GROUP_AUTHORIZATION_FAILED


def test_a_producer_without_write_fails_then_succeeds_once_allowed(emulator):
    from confluent_kafka import KafkaError
    topic = unique("w")
    create_topics(emulator, topic)
    allow(emulator, "User:bob", "TOPIC", topic, "DESCRIBE")
    errors = produce(emulator, "bob", topic, [b"1"], **{"message.timeout.ms": 5000})
    assert errors[0] is not None and errors[0].code() == KafkaError.TOPIC_AUTHORIZATION_FAILED
    allow(emulator, "User:bob", "TOPIC", topic, "WRITE")
    assert produce(emulator, "bob", topic, [b"2"]) == [None]


def test_a_transactional_producer_without_transactional_id_write_fails_init(emulator):
    from confluent_kafka import KafkaException, Producer
    topic = unique("tx")
    create_topics(emulator, topic)
    allow(emulator, "User:alice", "TOPIC", topic, "WRITE")
    producer = Producer(conf(emulator, "alice", **{"transactional.id": unique("tid")}))
    with pytest.raises(KafkaException) as info:
        producer.init_transactions(10)
    assert "TRANSACTIONAL_ID_AUTHORIZATION_FAILED" in str(info.value) or \
        "Transactional Id authorization failed" in str(info.value)


def test_a_transactional_producer_with_transactional_id_write_commits(emulator):
    from confluent_kafka import Producer
    topic, tid = unique("txok"), unique("tid")
    create_topics(emulator, topic)
    allow(emulator, "User:alice", "TOPIC", topic, "WRITE")
    allow(emulator, "User:alice", "TRANSACTIONAL_ID", tid, "WRITE")
    producer = Producer(conf(emulator, "alice", **{"transactional.id": tid}))
    producer.init_transactions(10)
    producer.begin_transaction()
    producer.produce(topic, value=b"t")
    producer.commit_transaction(10)


def test_metadata_hides_topics_the_principal_may_not_describe(emulator):
    from confluent_kafka.admin import AdminClient
    visible, hidden = unique("visible"), unique("hidden")
    create_topics(emulator, visible, hidden)
    allow(emulator, "User:bob", "TOPIC", visible, "DESCRIBE")
    bob = AdminClient(conf(emulator, "bob"))
    topics = bob.list_topics(timeout=10).topics
    assert visible in topics and hidden not in topics
    assert {visible, hidden} <= set(admin(emulator).list_topics(timeout=10).topics)   # a super user sees all


def test_prefixed_acls_and_deny_over_allow(emulator):
    from confluent_kafka import KafkaError
    base = unique("team")
    ok, blocked = f"{base}.orders", f"{base}.secret"
    create_topics(emulator, ok, blocked)
    allow(emulator, "User:alice", "TOPIC", f"{base}.", "WRITE", pattern="PREFIXED")
    allow(emulator, "User:alice", "TOPIC", blocked, "WRITE", permission="DENY")
    assert produce(emulator, "alice", ok, [b"1"]) == [None]
    errors = produce(emulator, "alice", blocked, [b"2"], **{"message.timeout.ms": 5000})
    assert errors[0] is not None and errors[0].code() == KafkaError.TOPIC_AUTHORIZATION_FAILED


# -- kafka-python -------------------------------------------------------------------------------
def kafka_python_conf(emulator, user):
    return dict(bootstrap_servers=emulator.bootstrap_server, security_protocol="SASL_PLAINTEXT",
                sasl_mechanism="PLAIN", sasl_plain_username=user, sasl_plain_password=USERS[user])


def test_kafka_python_commit_without_group_read_fails(emulator):
    from kafka import KafkaConsumer, TopicPartition
    from kafka.errors import GroupAuthorizationFailedError
    from kafka.structs import OffsetAndMetadata
    topic, group = unique("kp"), unique("kpg")
    create_topics(emulator, topic)
    allow(emulator, "User:bob", "TOPIC", topic, "READ")
    consumer = KafkaConsumer(group_id=group, enable_auto_commit=False, **kafka_python_conf(emulator, "bob"))
    try:
        with pytest.raises(GroupAuthorizationFailedError):
            consumer.commit({TopicPartition(topic, 0): OffsetAndMetadata(0, "", -1)})
    finally:
        consumer.close(autocommit=False)


def test_kafka_python_fetch_of_a_topic_without_read_fails(emulator):
    from kafka import KafkaConsumer, TopicPartition
    from kafka.errors import TopicAuthorizationFailedError
    readable, other = unique("kpr"), unique("kpo")
    create_topics(emulator, readable, other)
    produce(emulator, "admin", readable, [b"r"])
    produce(emulator, "admin", other, [b"o"])
    allow(emulator, "User:alice", "TOPIC", readable, "READ")
    allow(emulator, "User:alice", "TOPIC", other, "DESCRIBE")
    consumer = KafkaConsumer(**kafka_python_conf(emulator, "alice"), auto_offset_reset="earliest")
    try:
        consumer.assign([TopicPartition(readable, 0)])
        records = consumer.poll(timeout_ms=10000)
        assert [r.value for batch in records.values() for r in batch] == [b"r"]
        consumer.assign([TopicPartition(other, 0)])
        consumer.seek(TopicPartition(other, 0), 0)
        with pytest.raises(TopicAuthorizationFailedError):
            for _ in range(20):
                consumer.poll(timeout_ms=500)
    finally:
        consumer.close()


# -- the Java client ------------------------------------------------------------------------------
def test_java_admin_producer_consumer_against_acls(java_lib):
    with KafkaEmulator(sasl_users=USERS, authorizer=True, super_users="User:admin") as fresh:  # its own ACLs only
        assert_security_client_passed(java_lib, "AclClient.java", fresh.bootstrap_server, USERS["admin"],
                                      USERS["alice"])


# -- principals from TLS client certificates -------------------------------------------------------
def test_a_tls_client_certificate_is_the_principal(tmp_path):
    from confluent_kafka import KafkaError, Producer
    from .security_certs import client_certificate, self_signed_certificate
    server_cert, server_key = self_signed_certificate(tmp_path)
    ca, cert, key = client_certificate(tmp_path, "/O=Example/OU=ServiceUsers/CN=svc-orders")
    topic = unique("tls")
    with KafkaEmulator(tls_cert=server_cert, tls_key=server_key, tls_client_auth="requested", tls_ca=ca,
                       authorizer=True, ssl_principal_mapping_rules="RULE:^CN=([^,]*),OU=ServiceUsers.*$/$1/,DEFAULT",
                       extra={"super.users": "User:svc-orders"}) as tls:
        base = {"bootstrap.servers": tls.bootstrap_server, "security.protocol": "SSL", "ssl.ca.location": server_cert,
                "message.timeout.ms": 5000}
        with_cert = {**base, "ssl.certificate.location": cert, "ssl.key.location": key}

        def send(config):
            errors = []
            producer = Producer(config)
            producer.produce(topic, value=b"v", on_delivery=lambda err, msg: errors.append(err))
            producer.flush(10)
            return errors

        assert send(with_cert) == [None]   # User:svc-orders, a super user
        errors = send(base)                 # no certificate: User:ANONYMOUS, no ACL
        assert errors[0] is not None and errors[0].code() == KafkaError.TOPIC_AUTHORIZATION_FAILED


# -- aiokafka ---------------------------------------------------------------------------------------
def test_aiokafka_producer_and_consumer_get_kafkas_authorization_errors(emulator):
    import asyncio

    from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
    from aiokafka.errors import GroupAuthorizationFailedError, TopicAuthorizationFailedError
    topic, group = unique("aio"), unique("aiog")
    create_topics(emulator, topic)
    produce(emulator, "admin", topic, [b"x"])
    allow(emulator, "User:alice", "TOPIC", topic, "DESCRIBE")
    sasl = dict(bootstrap_servers=emulator.bootstrap_server, security_protocol="SASL_PLAINTEXT",
                sasl_mechanism="SCRAM-SHA-256", sasl_plain_username="alice", sasl_plain_password=USERS["alice"])

    async def run():
        producer = AIOKafkaProducer(**sasl)
        await producer.start()
        try:
            with pytest.raises(TopicAuthorizationFailedError):
                await producer.send_and_wait(topic, b"denied")
        finally:
            await producer.stop()
        allow(emulator, "User:alice", "TOPIC", topic, "READ")
        consumer = AIOKafkaConsumer(topic, group_id=group, auto_offset_reset="earliest", **sasl)
        try:
            with pytest.raises(GroupAuthorizationFailedError):   # aiokafka raises it from start or getone
                await consumer.start()
                await asyncio.wait_for(consumer.getone(), 15)
        finally:
            await consumer.stop()

    asyncio.run(run())


def test_the_request_log_names_each_connections_principal(emulator):
    topic = unique("logged")
    create_topics(emulator, topic)
    allow(emulator, "User:bob", "TOPIC", topic, "DESCRIBE")
    emulator.enable_request_log()
    try:
        produce(emulator, "admin", topic, [b"x"])
        produce(emulator, "bob", topic, [b"y"], **{"message.timeout.ms": 3000})
        principals = {(e["principal"], tuple(e["error_codes"])) for e in emulator.requests(api="Produce")}
    finally:
        emulator.disable_request_log()
    assert any(principal == "User:admin" and "TOPIC_AUTHORIZATION_FAILED" not in codes
               for principal, codes in principals)
    assert ("User:bob", ("TOPIC_AUTHORIZATION_FAILED",)) in principals
    assert any(d["principal"] == "User:bob" and d["resource_name"] == topic for d in emulator.denials())
