"""Produce to a topic that does not exist: Kafka's produce path only asks its metadata cache, so an
illegal name is UNKNOWN_TOPIC_OR_PARTITION like any unknown topic, never INVALID_TOPIC_EXCEPTION."""
import pytest

from kafkaemu.protocol.api_keys import ApiKey
from kafkaemu.protocol.errors import ErrorCode
from kafkaemu.storage.record_batch import build_batch
from tests.conftest import new_broker, wire_call



@pytest.mark.parametrize("auto_create", [True, False])
@pytest.mark.parametrize("name", ["bad/name", "", "x" * 250, "."])
def test_produce_to_an_illegal_topic_name_is_unknown_topic_or_partition(name, auto_create):
    broker = new_broker(auto_create_topics=auto_create)
    records = build_batch([(None, b"v", [], 0)])
    resp = wire_call(broker, ApiKey.PRODUCE, 9, {
        "transactional_id": None, "acks": -1, "timeout_ms": 1000,
        "topic_data": [{"name": name, "partition_data": [{"index": 0, "records": records}]}]})
    (part,) = resp.responses[0].partition_responses
    assert (part.error_code, part.base_offset) == (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, -1)
    assert [name for name, t in broker.store.topics.items() if not t.internal] == []
