"""Share and streams groups under the authorizer with real clients over SASL, as Kafka's KafkaApis
answers them: an unprivileged user's share consumer (confluent-kafka's ShareConsumer and the Java
KafkaShareConsumer) gets GROUP_AUTHORIZATION_FAILED without READ on the group and
TOPIC_AUTHORIZATION_FAILED without DESCRIBE (heartbeat) or READ (fetch) on the topic, and consumes
once it has them; every share and streams API answers a principal without ACLs 29 or 30 on raw
SASL connections too."""
from __future__ import annotations

import time

import pytest

from kafkaemu.protocol.api_keys import ApiKey
from kafkaemu.protocol.errors import ErrorCode
from kafkaemu.testing import KafkaEmulator, raw_client

from .java_runs import assert_security_client_passed
from .test_authorization import _ADMINS, USERS, admin, allow, conf, create_topics, produce, unique

ck = pytest.importorskip("confluent_kafka")
pytestmark = pytest.mark.timeout(300)


@pytest.fixture(scope="module")
def emulator():
    with KafkaEmulator(sasl_users=USERS, authorizer=True, super_users="User:admin") as emulator:
        yield emulator
        _ADMINS.pop(emulator.bootstrap_server, None)   # its admin client goes before the broker does


def earliest(emulator, group):
    from confluent_kafka.admin import AlterConfigOpType, ConfigEntry, ConfigResource, ResourceType
    entry = ConfigEntry("share.auto.offset.reset", "earliest", incremental_operation=AlterConfigOpType.SET)
    for future in admin(emulator).incremental_alter_configs(
            [ConfigResource(ResourceType.GROUP, group, incremental_configs=[entry])]).values():
        future.result(timeout=30)


def share_consume(emulator, user, topic, group, count, seconds=15):
    """(values, the error the share consumer's poll raised, or None)."""
    consumer = ck.ShareConsumer(conf(emulator, user, **{"group.id": group}))
    consumer.subscribe([topic])
    values, deadline = [], time.monotonic() + seconds
    try:
        while len(values) < count and time.monotonic() < deadline:
            try:
                messages = consumer.poll(0.5)
            except ck.KafkaException as exc:
                return values, exc.args[0].code()
            values += [m.value() for m in messages if m.error() is None]
    finally:
        consumer.close()
    return values, None


def test_confluent_share_consumer_needs_read_on_the_group_and_the_topic(emulator):
    if not hasattr(ck, "ShareConsumer"):
        pytest.skip(f"confluent-kafka {ck.version()[0]} has no ShareConsumer (2.15+ has the preview)")
    from confluent_kafka import KafkaError
    topic, group = unique("share-acl"), unique("share-acl-g")
    create_topics(emulator, topic)
    earliest(emulator, group)
    assert produce(emulator, "admin", topic, [b"v0", b"v1", b"v2"]) == [None] * 3
    assert share_consume(emulator, "alice", topic, group, 3) == ([], KafkaError.GROUP_AUTHORIZATION_FAILED)
    allow(emulator, "User:alice", "GROUP", group, "DESCRIBE")   # FindCoordinator passes, the heartbeat does not
    assert share_consume(emulator, "alice", topic, group, 3) == ([], KafkaError.GROUP_AUTHORIZATION_FAILED)
    allow(emulator, "User:alice", "GROUP", group, "READ")
    assert share_consume(emulator, "alice", topic, group, 3) == ([], KafkaError.TOPIC_AUTHORIZATION_FAILED)
    allow(emulator, "User:alice", "TOPIC", topic, "DESCRIBE")   # the heartbeat passes, ShareFetch does not
    assert share_consume(emulator, "alice", topic, group, 3) == ([], KafkaError.TOPIC_AUTHORIZATION_FAILED)
    allow(emulator, "User:alice", "TOPIC", topic, "READ")
    values, error = share_consume(emulator, "alice", topic, group, 3)
    assert error is None and sorted(values) == [b"v0", b"v1", b"v2"]
    denied = emulator.call(lambda b: {(d["api"], d["operation"], d["resource_name"]) for d in b.authorizer.denials})
    assert {("SHARE_GROUP_HEARTBEAT", "READ", group), ("SHARE_GROUP_HEARTBEAT", "DESCRIBE", topic),
            ("SHARE_FETCH", "READ", topic)} <= denied


def test_java_share_consumer_and_admin_against_acls(java_lib):
    with KafkaEmulator(sasl_users=USERS, authorizer=True, super_users="User:admin") as fresh:
        assert_security_client_passed(java_lib, "ShareAclClient.java", fresh.bootstrap_server, USERS["admin"],
                                      USERS["alice"])


def sasl_connect(emulator, user):
    """A raw connection authenticated as ``user`` with SASL/PLAIN."""
    sock = raw_client.connect(emulator, timeout=15)
    raw_client.request(sock, ApiKey.SASL_HANDSHAKE, 1, {"mechanism": "PLAIN"})
    reply = raw_client.request(sock, ApiKey.SASL_AUTHENTICATE, 2,
                               {"auth_bytes": b"\x00" + user.encode() + b"\x00" + USERS[user].encode()})
    assert reply.error_code == ErrorCode.NONE
    return sock


def test_every_share_and_streams_api_refuses_a_principal_without_acls(emulator):
    """Raw frames as bob (no ACLs): each API's group-level answer is GROUP_AUTHORIZATION_FAILED."""
    topic, group = unique("raw-acl"), unique("raw-acl-g")
    create_topics(emulator, topic)
    topic_id = emulator.call(lambda b: b.store.get(topic).topic_id)
    partitions = [{"partition_index": 0, "acknowledgement_batches": []}]
    acks = [{"partition_index": 0, "acknowledgement_batches": [
        {"first_offset": 0, "last_offset": 0, "acknowledge_types": [1]}]}]
    topology = {"epoch": 1, "subtopologies": [
        {"subtopology_id": "0", "source_topics": [topic], "source_topic_regex": [], "state_changelog_topics": [],
         "repartition_sink_topics": [], "repartition_source_topics": [], "copartition_groups": []}]}
    requests = [
        (ApiKey.SHARE_GROUP_HEARTBEAT, 1, {"group_id": group, "member_id": "m" * 22, "member_epoch": 0,
                                           "rack_id": None, "subscribed_topic_names": [topic]}),
        (ApiKey.SHARE_FETCH, 1, {"group_id": group, "member_id": "m" * 22, "share_session_epoch": 0,
                                 "max_wait_ms": 0, "min_bytes": 1, "max_bytes": 1 << 20, "max_records": 10,
                                 "batch_size": 10, "topics": [{"topic_id": topic_id, "partitions": partitions}],
                                 "forgotten_topics_data": []}),
        (ApiKey.SHARE_ACKNOWLEDGE, 1, {"group_id": group, "member_id": "m" * 22, "share_session_epoch": 1,
                                       "topics": [{"topic_id": topic_id, "partitions": acks}]}),
        (ApiKey.ALTER_SHARE_GROUP_OFFSETS, 0, {"group_id": group, "topics": [
            {"topic_name": topic, "partitions": [{"partition_index": 0, "start_offset": 0}]}]}),
        (ApiKey.DELETE_SHARE_GROUP_OFFSETS, 0, {"group_id": group, "topics": [{"topic_name": topic}]}),
        (ApiKey.STREAMS_GROUP_HEARTBEAT, 0, {
            "group_id": group, "member_id": "s1", "member_epoch": 0, "endpoint_information_epoch": 0,
            "instance_id": None, "rack_id": None, "rebalance_timeout_ms": 30000, "topology": topology,
            "active_tasks": None, "standby_tasks": None, "warmup_tasks": None, "process_id": "p",
            "user_endpoint": None, "client_tags": None, "task_offsets": None, "task_end_offsets": None,
            "shutdown_application": False}),
    ]
    described = [
        (ApiKey.SHARE_GROUP_DESCRIBE, 1, {"group_ids": [group], "include_authorized_operations": True}),
        (ApiKey.DESCRIBE_SHARE_GROUP_OFFSETS, 1, {"groups": [{"group_id": group, "topics": None}]}),
        (ApiKey.STREAMS_GROUP_DESCRIBE, 0, {"group_ids": [group], "include_authorized_operations": True}),
    ]
    with sasl_connect(emulator, "bob") as sock:
        for cid, (api_key, version, body) in enumerate(requests, 1):
            assert raw_client.request(sock, api_key, version, body, cid).error_code == \
                ErrorCode.GROUP_AUTHORIZATION_FAILED, api_key.name
        for cid, (api_key, version, body) in enumerate(described, 100):
            (answer,) = raw_client.request(sock, api_key, version, body, cid).groups
            assert answer.error_code == ErrorCode.GROUP_AUTHORIZATION_FAILED, api_key.name
    assert emulator.call(lambda b: b.coordinator.group(group)) is None
