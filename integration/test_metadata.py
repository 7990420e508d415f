"""Metadata answers as a Kafka broker gives them, checked on the wire."""
import uuid

from kafkaemu.protocol.api_keys import ApiKey
from kafkaemu.protocol.errors import ErrorCode
from kafkaemu.testing import KafkaEmulator

from kafkaemu.testing.raw_client import connect, request


def create(sock, name, partitions):
    r = request(sock, ApiKey.CREATE_TOPICS, 7,
                {"topics": [{"name": name, "num_partitions": partitions, "replication_factor": 1}]})
    assert r.topics[0].error_code == 0
    return r.topics[0].topic_id


def test_topics_are_looked_up_by_id_when_an_id_is_given(kafka_emulator):
    with connect(kafka_emulator) as sock:
        name = f"by-id-{uuid.uuid4().hex[:6]}"
        topic_id = create(sock, name, 2)
        unknown = uuid.uuid4().bytes
        # the Java client sends name "" (the field's default) beside the id
        md = request(sock, ApiKey.METADATA, 12, {
            "topics": [{"topic_id": topic_id, "name": ""}, {"topic_id": unknown, "name": ""}],
            "allow_auto_topic_creation": False}, 2)
        found, missing = md.topics
        assert (found.error_code, found.name, found.topic_id, len(found.partitions)) == (0, name, topic_id, 2)
        assert (missing.error_code, missing.name, missing.topic_id) == (ErrorCode.UNKNOWN_TOPIC_ID, None, unknown)


def test_auto_creation_follows_broker_and_request_settings():
    with KafkaEmulator(auto_create_topics=False) as emulator, connect(emulator) as sock:
        md = request(sock, ApiKey.METADATA, 12, {"topics": [{"name": "nope"}], "allow_auto_topic_creation": True})
        assert md.topics[0].error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    with KafkaEmulator(num_partitions=3) as emulator, connect(emulator) as sock:
        md = request(sock, ApiKey.METADATA, 12, {"topics": [{"name": "no-create"}], "allow_auto_topic_creation": False})
        assert md.topics[0].error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        md = request(sock, ApiKey.METADATA, 12,
                     {"topics": [{"name": "made-now"}], "allow_auto_topic_creation": True}, 2)
        assert md.topics[0].error_code == 0 and len(md.topics[0].partitions) == 3
        md = request(sock, ApiKey.METADATA, 12, {"topics": [{"name": "bad/name"}]}, 3)
        assert md.topics[0].error_code == ErrorCode.INVALID_TOPIC_EXCEPTION


def test_all_topics_include_the_internal_offsets_topic_marked_internal(kafka_emulator):
    with connect(kafka_emulator) as sock:
        # as in Kafka, the first FindCoordinator creates __consumer_offsets
        request(sock, ApiKey.FIND_COORDINATOR, 3, {"key": "some-group", "key_type": 0}, 9)
        md = request(sock, ApiKey.METADATA, 1, {"topics": None})
        internal = {t.name: t.is_internal for t in md.topics}
        assert internal.get("__consumer_offsets") is True
        assert len(next(t for t in md.topics if t.name == "__consumer_offsets").partitions) == 50
        v0 = request(sock, ApiKey.METADATA, 0, {"topics": []}, 2)  # v0: an empty list means every topic
        assert {t.name for t in v0.topics} == set(internal)


def test_delete_topics_validates_names_and_ids_as_kafka(kafka_emulator):
    with connect(kafka_emulator) as sock:
        name = f"del-{uuid.uuid4().hex[:6]}"
        topic_id = create(sock, name, 1)
        zero = bytes(16)
        answer = request(sock, ApiKey.DELETE_TOPICS, 6, {"timeout_ms": 1000, "topics": [
            {"name": name, "topic_id": zero}, {"name": name, "topic_id": zero},      # named twice
            {"name": None, "topic_id": zero},                                          # neither
            {"name": "x", "topic_id": topic_id},                                       # both
            {"name": None, "topic_id": uuid.uuid4().bytes}]}, 2)                       # unknown id
        codes = [(r.name, r.error_code) for r in answer.responses]
        assert codes[:3] == [(name, ErrorCode.INVALID_REQUEST), (None, ErrorCode.INVALID_REQUEST),
                             ("x", ErrorCode.INVALID_REQUEST)]
        assert codes[3] == (None, ErrorCode.UNKNOWN_TOPIC_ID)
        by_id = request(sock, ApiKey.DELETE_TOPICS, 6,
                        {"timeout_ms": 1000, "topics": [{"name": None, "topic_id": topic_id}]}, 3)
        assert [(r.name, r.error_code) for r in by_id.responses] == [(name, 0)]
        md = request(sock, ApiKey.METADATA, 12, {"topics": [{"name": name}], "allow_auto_topic_creation": False}, 4)
        assert md.topics[0].error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
