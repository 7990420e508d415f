"""A share group survives a restart with a data dir: its ShareGroup* records in __consumer_offsets
bring it back, with its epoch, member, subscription and assignment, before any member rejoins, and
its group configs are kept
(a real ``kafkaemu serve`` process, confluent-kafka's ShareConsumer)."""
from __future__ import annotations

import socket
import time

import pytest

from kafkaemu.protocol.api_keys import ApiKey
from kafkaemu.testing import KafkaEmulator, raw_client

from .group_clients import unique

ck = pytest.importorskip("confluent_kafka")
if not hasattr(ck, "ShareConsumer"):
    pytest.skip(f"confluent-kafka {ck.version()[0]} has no ShareConsumer (2.15+ has the preview)",
                allow_module_level=True)

pytestmark = pytest.mark.timeout(180)


def describe(bootstrap: str, group: str) -> dict:
    host, port = bootstrap.rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        reply = raw_client.request(sock, ApiKey.SHARE_GROUP_DESCRIBE, 1,
                                   {"group_ids": [group], "include_authorized_operations": False})
    return reply["groups"][0]


def test_a_share_group_is_back_after_a_restart_before_its_member_rejoins(tmp_path):
    from confluent_kafka.admin import AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource, ResourceType
    topic, group = unique("shrestart"), unique("shrestart-g")
    first = KafkaEmulator(subprocess_mode=True, data_dir=str(tmp_path)).start()
    consumer = None
    try:
        admin = AdminClient({"bootstrap.servers": first.bootstrap_server})
        admin.create_topics([ck.admin.NewTopic(topic, 2, 1)])[topic].result(timeout=30)
        entry = ConfigEntry("share.auto.offset.reset", "earliest", incremental_operation=AlterConfigOpType.SET)
        for f in admin.incremental_alter_configs([ConfigResource(ResourceType.GROUP, group,
                                                                 incremental_configs=[entry])]).values():
            f.result(timeout=30)
        producer = ck.Producer({"bootstrap.servers": first.bootstrap_server})
        for i in range(4):
            producer.produce(topic, value=b"v%d" % i, partition=i % 2)
        assert producer.flush(30) == 0
        consumer = ck.ShareConsumer({"bootstrap.servers": first.bootstrap_server, "group.id": group})
        consumer.subscribe([topic])
        got = []
        deadline = time.monotonic() + 60
        while len(got) < 4 and time.monotonic() < deadline:
            got += [m.value() for m in consumer.poll(0.2) if m.error() is None]
        assert sorted(got) == [b"v0", b"v1", b"v2", b"v3"]
        before = describe(first.bootstrap_server, group)
        assert before["error_code"] == 0 and len(before["members"]) == 1
    finally:
        first.stop()      # the member is still in the group: it never left
    second = KafkaEmulator(subprocess_mode=True, data_dir=str(tmp_path)).start()
    try:
        after = describe(second.bootstrap_server, group)   # the consumer knows only the old address
        assert after["error_code"] == 0
        assert (after["group_state"], after["group_epoch"], after["assignment_epoch"]) == \
            (before["group_state"], before["group_epoch"], before["assignment_epoch"]) == ("Stable", 2, 2)
        [member] = after["members"]
        [old] = before["members"]
        assert (member["member_id"], member["member_epoch"], member["subscribed_topic_names"]) == \
            (old["member_id"], old["member_epoch"], [topic])
        assert member["assignment"]["topic_partitions"][0]["partitions"] == [0, 1]
        assert member["assignment"]["topic_partitions"][0]["topic_name"] == topic
        admin = AdminClient({"bootstrap.servers": second.bootstrap_server})
        [configs] = admin.describe_configs([ConfigResource(ResourceType.GROUP, group)]).values()
        assert configs.result(timeout=30)["share.auto.offset.reset"].value == "earliest"   # kept too
    finally:
        second.stop()
        if consumer is not None:
            consumer.close()


def delete_offsets(bootstrap: str, group: str, topics: list[str]) -> dict:
    host, port = bootstrap.rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        reply = raw_client.request(sock, ApiKey.DELETE_SHARE_GROUP_OFFSETS, 0,
                                   {"group_id": group, "topics": [{"topic_name": t} for t in topics]})
    assert reply["error_code"] == 0, reply
    return {r["topic_name"]: (r["error_code"], r["error_message"]) for r in reply["responses"]}


def consume_all(bootstrap: str, group: str, topic: str, n: int) -> list[bytes]:
    consumer = ck.ShareConsumer({"bootstrap.servers": bootstrap, "group.id": group})
    try:
        consumer.subscribe([topic])
        got: list[bytes] = []
        deadline = time.monotonic() + 60
        while len(got) < n and time.monotonic() < deadline:
            got += [m.value() for m in consumer.poll(0.2) if m.error() is None]
        return sorted(got)
    finally:
        consumer.close()   # acknowledges what it got and leaves: the group is empty


def test_which_share_partitions_are_initialized_survives_restarts(tmp_path):
    """ShareGroupStatePartitionMetadata: after a restart the group still knows its topic's share
    state is initialized (DeleteShareGroupOffsets deletes it) and, after the next restart, that it
    was deleted (nothing left to delete); consumption then starts again where
    share.auto.offset.reset says."""
    from confluent_kafka.admin import AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource, ResourceType
    topic, other, group = unique("shmeta"), unique("shmeta-other"), unique("shmeta-g")
    values = [b"v0", b"v1", b"v2", b"v3"]
    with KafkaEmulator(subprocess_mode=True, data_dir=str(tmp_path)) as first:
        admin = AdminClient({"bootstrap.servers": first.bootstrap_server})
        for f in admin.create_topics([ck.admin.NewTopic(topic, 2, 1), ck.admin.NewTopic(other, 1, 1)]).values():
            f.result(timeout=30)
        entry = ConfigEntry("share.auto.offset.reset", "earliest", incremental_operation=AlterConfigOpType.SET)
        for f in admin.incremental_alter_configs([ConfigResource(ResourceType.GROUP, group,
                                                                 incremental_configs=[entry])]).values():
            f.result(timeout=30)
        producer = ck.Producer({"bootstrap.servers": first.bootstrap_server})
        for i, v in enumerate(values):
            producer.produce(topic, value=v, partition=i % 2)
        assert producer.flush(30) == 0
        assert consume_all(first.bootstrap_server, group, topic, 4) == values
    with KafkaEmulator(subprocess_mode=True, data_dir=str(tmp_path)) as second:
        assert delete_offsets(second.bootstrap_server, group, [topic, other]) == {
            topic: (0, None), other: (3, "There is no offset information to delete.")}
    with KafkaEmulator(subprocess_mode=True, data_dir=str(tmp_path)) as third:
        assert delete_offsets(third.bootstrap_server, group, [topic]) == {
            topic: (3, "There is no offset information to delete.")}
        # its share state is gone: a consumer starts over at the earliest offset
        assert consume_all(third.bootstrap_server, group, topic, 4) == values
