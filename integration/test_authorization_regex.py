"""A KIP-848 regex subscription with authorization on, with librdkafka's consumer-protocol consumer
(confluent-kafka, ``group.protocol=consumer``, a ``^prefix-.*`` subscription) over SASL: the member
is assigned only the topics its user may DESCRIBE, and a topic granted later (CreateAcls) once the
group's regexes are resolved again, after group.consumer.regex.refresh.interval.ms (the broker's
manual clock moves it)."""
import pytest

from kafkaemu.testing import KafkaEmulator

from .group_clients import ConsumerThread, tps, unique, wait_until

pytestmark = pytest.mark.timeout(120)

USERS = {"admin": "admin-secret", "alice": "alice-secret"}
REFRESH_MS = 10_000


@pytest.fixture(scope="module")
def emulator():
    extra = {"group.consumer.regex.refresh.interval.ms": REFRESH_MS, "group.consumer.heartbeat.interval.ms": 500,
             "group.consumer.min.heartbeat.interval.ms": 500}
    with KafkaEmulator(sasl_users=USERS, authorizer=True, super_users="User:admin", manual_clock=True,
                       extra=extra) as emulator:
        yield emulator


def conf(emulator, user, **extra):
    return {"bootstrap.servers": emulator.bootstrap_server, "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanism": "SCRAM-SHA-512", "sasl.username": user, "sasl.password": USERS[user], **extra}


def allow(admin, principal, resource_type, name, operation, pattern="LITERAL"):
    from confluent_kafka.admin import AclBinding, AclOperation, AclPermissionType, ResourcePatternType, ResourceType
    binding = AclBinding(ResourceType[resource_type], name, ResourcePatternType[pattern], principal, "*",
                         AclOperation[operation], AclPermissionType.ALLOW)
    for future in admin.create_acls([binding], request_timeout=10).values():
        future.result()


def regex_consumer(emulator, user, regex, group) -> ConsumerThread:
    from confluent_kafka import Consumer

    def make():
        c = Consumer(conf(emulator, user, **{"group.id": group, "group.protocol": "consumer",
                                             "auto.offset.reset": "earliest", "enable.auto.commit": False}))
        c.subscribe([regex])
        return c

    def poll(c):
        return [(m.topic(), m.partition(), m.offset()) for m in c.consume(100, 0.05) if m.error() is None]

    return ConsumerThread(make, poll, lambda c: {(tp.topic, tp.partition) for tp in c.assignment()},
                          lambda c: c.close(), user)


def member_assignments(emulator, group):
    """Each member's assigned topic names, as the coordinator holds them."""
    def read(broker):
        g = broker.coordinator.consumer.groups.get(group)
        names = {topic.topic_id: name for name, topic in broker.store.topics.items()}
        return [] if g is None else [{names[tid] for tid in m.assigned} for m in g.members.values()]
    return emulator.call(read)


def heartbeat_since_now(emulator, group) -> bool:
    """Whether every member has heartbeated since the broker's clock last moved (its session
    timer runs from the broker's now)."""
    def read(broker):
        coordinator = broker.coordinator
        g = coordinator.consumer.groups.get(group)
        session = coordinator.consumer.session_timeout_ms(group)
        return g is not None and all(
            coordinator.ctx.timers.deadline(("consumer-session", group, mid)) == broker.now_ms + session
            for mid in g.members)
    return emulator.call(read)


def test_a_regex_member_gets_only_describable_topics_until_a_grant_is_resolved(emulator):
    from confluent_kafka.admin import AdminClient, NewTopic
    prefix, group = unique("regexauth"), unique("regexauth-g")
    allowed, secret = f"{prefix}-allowed", f"{prefix}-secret"
    admin = AdminClient(conf(emulator, "admin"))
    for future in admin.create_topics([NewTopic(allowed, 2), NewTopic(secret, 1)], request_timeout=10).values():
        future.result()
    allow(admin, "User:alice", "GROUP", group, "READ")
    allow(admin, "User:alice", "TOPIC", allowed, "READ")   # READ implies DESCRIBE

    consumer = regex_consumer(emulator, "alice", f"^{prefix}-.*", group)
    try:
        wait_until(lambda: consumer.assigned == tps(allowed, 2), what="the describable topic assigned")
        assert member_assignments(emulator, group) == [{allowed}]

        allow(admin, "User:alice", "TOPIC", secret, "DESCRIBE")
        emulator.advance_clock(REFRESH_MS // 2)   # the grant alone resolves nothing
        wait_until(lambda: heartbeat_since_now(emulator, group), what="a heartbeat after the grant")
        assert member_assignments(emulator, group) == [{allowed}] and consumer.assigned == tps(allowed, 2)
        emulator.advance_clock(REFRESH_MS // 2 + 1)
        wait_until(lambda: consumer.assigned == tps(allowed, 2) | tps(secret, 1),
                   what="the granted topic assigned at the next resolution")
        assert member_assignments(emulator, group) == [{allowed, secret}]
    finally:
        consumer.close()
