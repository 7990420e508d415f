"""``__consumer_offsets`` created by a client request (Metadata auto-creation, CreateTopics, a
Produce) is the group coordinator's topic or nothing: a one-partition copy used to make every
group hashed past its end fail its OffsetCommit with a handler crash."""
import pytest

from kafkaemu.broker import Broker
from kafkaemu.config import BrokerConfig
from kafkaemu.protocol.errors import ErrorCode
from kafkaemu.storage.record_batch import build_batch

from .wire_call import call

GROUPS = [f"group-{i}" for i in range(20)]  # spread over many __consumer_offsets partitions


def _commit_everywhere(broker):
    broker.create_topic("t", 1, {})
    for group in GROUPS:
        answer = call(broker, 8, 8, {"group_id": group, "generation_id_or_member_epoch": -1, "member_id": "",
                                     "topics": [{"name": "t", "partitions": [
                                         {"partition_index": 0, "committed_offset": 7}]}]})
        assert answer.topics[0].partitions[0].error_code == ErrorCode.NONE


def test_metadata_auto_creates_the_offsets_topic_as_the_coordinator_does():
    broker = Broker(BrokerConfig(), 0)
    answer = call(broker, 3, 12, {"topics": [{"name": "__consumer_offsets"}], "allow_auto_topic_creation": True})
    (topic,) = answer.topics
    assert (topic.error_code, topic.is_internal, len(topic.partitions)) == (0, True, 50)
    assert broker.store.get("__consumer_offsets").configs["cleanup.policy"] == "compact"
    _commit_everywhere(broker)


@pytest.mark.parametrize("partitions,code", [(-1, ErrorCode.INVALID_PARTITIONS), (3, ErrorCode.INVALID_PARTITIONS),
                                             (50, ErrorCode.NONE)])
def test_create_topics_makes_the_offsets_topic_only_with_the_coordinators_partition_count(partitions, code):
    broker = Broker(BrokerConfig(), 0)
    answer = call(broker, 19, 7, {"topics": [{"name": "__consumer_offsets", "num_partitions": partitions,
                                              "replication_factor": 1}]})
    assert answer.topics[0].error_code == code
    if code == ErrorCode.NONE:
        assert broker.store.get("__consumer_offsets").internal
    else:
        assert broker.store.get("__consumer_offsets") is None
    _commit_everywhere(broker)


def test_produce_does_not_create_the_offsets_topic():
    broker = Broker(BrokerConfig(), 0)
    answer = call(broker, 0, 9, {"transactional_id": None, "acks": -1, "timeout_ms": 1000, "topic_data": [
        {"name": "__consumer_offsets", "partition_data": [{"index": 0, "records": build_batch([(b"k", b"v", [], 0)])}]}]})
    assert answer.responses[0].partition_responses[0].error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    assert broker.store.get("__consumer_offsets") is None
    _commit_everywhere(broker)
