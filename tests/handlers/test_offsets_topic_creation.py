"""``__consumer_offsets`` is the group coordinator's topic from the start: no client request
(Metadata auto-creation, CreateTopics, a Produce) can make a one-partition copy, which used to make
every group hashed past its end fail its OffsetCommit with a handler crash."""
import pytest

from kafkaemu.protocol.api_keys import ApiKey
from kafkaemu.protocol.errors import ErrorCode
from kafkaemu.storage.record_batch import build_batch
from tests.conftest import wire_call


GROUPS = [f"group-{i}" for i in range(20)]  # spread over many __consumer_offsets partitions


def _commit_everywhere(broker):
    broker.topics.create("t", 1, {})
    for group in GROUPS:
        answer = wire_call(broker, ApiKey.OFFSET_COMMIT, 8, {
            "group_id": group, "generation_id_or_member_epoch": -1, "member_id": "",
            "topics": [{"name": "t", "partitions": [{"partition_index": 0, "committed_offset": 7}]}]})
        assert answer.topics[0].partitions[0].error_code == ErrorCode.NONE


def test_metadata_auto_creates_the_offsets_topic_as_the_coordinator_does(broker):
    answer = wire_call(broker, ApiKey.METADATA, 12,
                       {"topics": [{"name": "__consumer_offsets"}], "allow_auto_topic_creation": True})
    (topic,) = answer.topics
    assert (topic.error_code, topic.is_internal, len(topic.partitions)) == (0, True, 50)
    assert broker.store.get("__consumer_offsets").configs["cleanup.policy"] == "compact"
    _commit_everywhere(broker)


@pytest.mark.parametrize("partitions", [-1, 3, 50])
def test_create_topics_finds_the_offsets_topic_already_made(broker, partitions):
    answer = wire_call(broker, ApiKey.CREATE_TOPICS, 7, {"topics": [
        {"name": "__consumer_offsets", "num_partitions": partitions, "replication_factor": 1}]})
    assert answer.topics[0].error_code == ErrorCode.TOPIC_ALREADY_EXISTS
    topic = broker.store.get("__consumer_offsets")
    assert (topic.internal, len(topic.partitions)) == (True, 50)
    _commit_everywhere(broker)


def test_an_ordinary_client_cannot_produce_to_the_offsets_topic(broker):
    records = build_batch([(b"k", b"v", [], 0)])
    answer = wire_call(broker, ApiKey.PRODUCE, 9, {
        "transactional_id": None, "acks": -1, "timeout_ms": 1000,
        "topic_data": [{"name": "__consumer_offsets", "partition_data": [{"index": 0, "records": records}]}]})
    assert answer.responses[0].partition_responses[0].error_code == ErrorCode.INVALID_TOPIC_EXCEPTION
    assert broker.store.get("__consumer_offsets").partitions[0].high_watermark == 0
    _commit_everywhere(broker)
