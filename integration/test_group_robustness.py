"""Bad input to the group coordinator, from real clients and raw requests over loopback: each is
answered as Kafka does, every other connection keeps being served, and nothing is lost across a
restart on the same data directory."""
import struct
import time

from kafkaemu.core.classic import records as group_records
from kafkaemu.core.placement import partition_for
from kafkaemu.protocol.api_keys import ApiKey
from kafkaemu.protocol.catalog import catalog
from kafkaemu.storage.record_batch import build_batch
from kafkaemu.testing import KafkaEmulator
from kafkaemu.testing.raw_client import api_versions_frame, connect, encode_request, read_reply, request

from .group_clients import POLL_MS, append_records, create_topic, unique

OFFSETS = "__consumer_offsets"
INT64_MAX = 2**63 - 1


def consume_and_commit(bootstrap: str, topic: str, group: str, expected: int, **settings) -> list:
    from kafka import KafkaConsumer
    consumer = KafkaConsumer(topic, bootstrap_servers=bootstrap, group_id=group, client_id=group,
                             auto_offset_reset="earliest", enable_auto_commit=False, session_timeout_ms=6000,
                             heartbeat_interval_ms=500, **settings)
    try:
        got, deadline = [], time.time() + 30
        while len(got) < expected and time.time() < deadline:
            got += [m.value for msgs in consumer.poll(timeout_ms=POLL_MS).values() for m in msgs]
        consumer.commit()
        return got
    finally:
        consumer.close()


def committed(bootstrap: str, topic: str, group: str, partition: int = 0):
    from kafka import KafkaConsumer, TopicPartition
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=group, enable_auto_commit=False)
    try:
        return consumer.committed(TopicPartition(topic, partition))
    finally:
        consumer.close()


def test_offsets_topic_looked_up_before_any_group_then_groups_work_and_survive_a_restart(tmp_path):
    from kafka import KafkaProducer
    topic = unique("lookup")
    groups = [unique(f"g{i}") for i in range(5)]
    assert len({partition_for(g, 50) for g in groups}) > 1
    with KafkaEmulator(data_dir=str(tmp_path)) as emulator:
        producer = KafkaProducer(bootstrap_servers=emulator.bootstrap_server)
        try:
            assert producer.partitions_for(OFFSETS) == set(range(50))
        finally:
            producer.close()
        create_topic(emulator, topic, 1)
        append_records(emulator, topic, 3)
        for group in groups:
            assert len(consume_and_commit(emulator.bootstrap_server, topic, group, 3)) == 3
    with KafkaEmulator(data_dir=str(tmp_path)) as emulator:
        assert all(committed(emulator.bootstrap_server, topic, g) == 3 for g in groups)


def _subscription(topic: str) -> bytes:
    """ConsumerProtocolSubscription v0 naming one topic."""
    return struct.pack(">hih", 0, 1, len(topic)) + topic.encode() + struct.pack(">i", -1)


def test_a_join_listing_a_protocol_twice_does_not_wedge_the_group_or_close_others(kafka_emulator):
    bootstrap = kafka_emulator.bootstrap_server
    topic, group = unique("twice"), unique("twice-g")
    create_topic(kafka_emulator, topic, 2)
    append_records(kafka_emulator, topic, 2)
    meta = _subscription(topic)
    with connect(kafka_emulator) as bystander, connect(kafka_emulator) as sock:
        join = request(sock, ApiKey.JOIN_GROUP, 3, {"group_id": group, "session_timeout_ms": 6000,
                                                    "rebalance_timeout_ms": 6000, "member_id": "",
                                                    "protocol_type": "consumer",
                                                    "protocols": [{"name": "range", "metadata": meta},
                                                                  {"name": "range", "metadata": meta}]})
        assert (join.error_code, join.protocol_name, join.generation_id) == (0, "range", 1)
        sync = request(sock, ApiKey.SYNC_GROUP, 3, {"group_id": group, "generation_id": 1, "member_id": join.member_id,
                                                    "group_instance_id": None, "assignments": []}, 2)
        assert sync.error_code == 0
        leave = request(sock, ApiKey.LEAVE_GROUP, 3, {"group_id": group, "members": [
            {"member_id": join.member_id, "group_instance_id": None}]}, 3)
        assert leave.error_code == 0
        # A real client joins the same group afterwards (it got INCONSISTENT_GROUP_PROTOCOL and crashed).
        got = consume_and_commit(bootstrap, topic, group, 4)
        assert sorted(got) == sorted(b"%d-%d" % (p, i) for p in range(2) for i in range(2))
        bystander.sendall(api_versions_frame(correlation_id=7))
        assert struct.unpack(">i", read_reply(bystander)[:4])[0] == 7


def test_the_empty_group_id_gets_invalid_group_id(kafka_emulator):
    with connect(kafka_emulator) as sock:
        hb = request(sock, ApiKey.HEARTBEAT, 4,
                     {"group_id": "", "generation_id": 1, "member_id": "m", "group_instance_id": None})
        assert hb.error_code == 24
        sync = request(sock, ApiKey.SYNC_GROUP, 5, {
            "group_id": "", "generation_id": 1, "member_id": "m", "group_instance_id": None,
            "protocol_type": "consumer", "protocol_name": "range", "assignments": []}, 2)
        assert sync.error_code == 24
        leave = request(sock, ApiKey.LEAVE_GROUP, 5, {"group_id": "", "members": [
            {"member_id": "m", "group_instance_id": None, "reason": None}]}, 3)
        assert leave.error_code == 24


def _commit_v2(group: str, topic: str, offset: int, retention: int) -> dict:
    return {"group_id": group, "generation_id_or_member_epoch": -1, "member_id": "", "retention_time_ms": retention,
            "topics": [{"name": topic, "partitions": [
                {"partition_index": 0, "committed_offset": offset, "committed_metadata": "m"}]}]}


def test_a_commit_with_int64_max_retention_is_answered_and_survives_a_restart(tmp_path):
    topic, group = unique("retain"), unique("retain-g")
    with KafkaEmulator(data_dir=str(tmp_path)) as emulator:
        create_topic(emulator, topic, 1)
        with connect(emulator) as sock:
            resp = request(sock, ApiKey.OFFSET_COMMIT, 2, _commit_v2(group, topic, 17, INT64_MAX))
            assert resp.topics[0].partitions[0].error_code == 0
            fetched = request(sock, ApiKey.OFFSET_FETCH, 1,
                              {"group_id": group, "topics": [{"name": topic, "partition_indexes": [0]}]}, 2)
            assert fetched.topics[0].partitions[0].committed_offset == 17   # the same connection goes on
    with KafkaEmulator(data_dir=str(tmp_path)) as emulator, connect(emulator) as sock:
        fetched = request(sock, ApiKey.OFFSET_FETCH, 1,
                          {"group_id": group, "topics": [{"name": topic, "partition_indexes": [0]}]})
        assert fetched.topics[0].partitions[0].committed_offset == 17


def test_records_of_unknown_type_in_the_offsets_topic_do_not_stop_a_restart(tmp_path):
    topic, group = unique("junk"), unique("junk-g")
    with KafkaEmulator(data_dir=str(tmp_path)) as emulator:
        create_topic(emulator, topic, 1)
        with connect(emulator) as sock:
            committed = request(sock, ApiKey.OFFSET_COMMIT, 2, _commit_v2(group, topic, 5, -1))
            assert committed.topics[0].partitions[0].error_code == 0
            now = int(time.time() * 1000)
            junk = build_batch([(struct.pack(">h", 99) + b"a newer record type", b"\x00\x00?", (), now),
                                (group_records.encode_group_key(group), b"\x00\x03cut short", (), now)])
            body = {"transactional_id": None, "acks": -1, "timeout_ms": 5000, "topic_data": [
                {"name": OFFSETS, "partition_data": [{"index": partition_for(group, 50), "records": junk}]}]}
            # Kafka lets a client with this client.id write to internal topics; so does kafkaemu.
            sock.sendall(encode_request(ApiKey.PRODUCE, 9, body, 2, client_id="__admin_client"))
            produced = catalog().response(ApiKey.PRODUCE, 9).decode(read_reply(sock)[5:])
            assert produced.responses[0].partition_responses[0].error_code == 0
    with KafkaEmulator(data_dir=str(tmp_path)) as emulator, connect(emulator) as sock:
        fetched = request(sock, ApiKey.OFFSET_FETCH, 1,
                          {"group_id": group, "topics": [{"name": topic, "partition_indexes": [0]}]})
        assert fetched.topics[0].partitions[0].committed_offset == 5
        committed = request(sock, ApiKey.OFFSET_COMMIT, 2, _commit_v2(group, topic, 6, -1), 2)
        assert committed.topics[0].partitions[0].error_code == 0
