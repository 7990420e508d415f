"""Which Produce errors carry a message, as Kafka's: only an error met reading the request's
batches (ByteBufferLogInputStream's CorruptRecordException, answered through ApiError with its
message) and record errors (ReplicaManager's RecordValidationException); a CRC mismatch, a batch
cut short and an error of the producer's state are answered bare."""
import pytest

from kafkaemu.protocol.api_keys import ApiKey
from kafkaemu.protocol.errors import ErrorCode
from kafkaemu.storage.record_batch import build_batch
from tests.conftest import new_broker, wire_call

GOOD = build_batch([(None, b"v", [], 0), (None, b"w", [], 0)])


def _produce(broker, records):
    resp = wire_call(broker, ApiKey.PRODUCE, 9, {
        "transactional_id": None, "acks": -1, "timeout_ms": 1000,
        "topic_data": [{"name": "t", "partition_data": [{"index": 0, "records": records}]}]})
    (part,) = resp.responses[0].partition_responses
    return part.error_code, part.error_message


@pytest.mark.parametrize("records, expected", [
    (GOOD[:17] + bytes([GOOD[17] ^ 0xFF]) + GOOD[18:], (ErrorCode.CORRUPT_MESSAGE, None)),
    (GOOD[:-3], (ErrorCode.INVALID_RECORD, None)),
    (GOOD[:16] + b"\x03" + GOOD[17:], (ErrorCode.CORRUPT_MESSAGE, "Invalid magic found in record: 3")),
    (GOOD[:16] + b"\xff" + GOOD[17:], (ErrorCode.CORRUPT_MESSAGE, "Invalid magic found in record: -1")),
], ids=["crc", "truncated", "magic 3", "magic -1"])
def test_which_append_errors_carry_a_message(records, expected):
    broker = new_broker()
    assert _produce(broker, GOOD) == (ErrorCode.NONE, None)     # the topic exists
    assert _produce(broker, records) == expected


def test_a_legacy_batch_and_an_unknown_partition_are_answered_after_the_appended_partitions():
    """KafkaApis merges the appended partitions' answers before those of partitions not in its
    metadata and those ProduceRequest.validateRecords refused (magic 0/1 from v3 on)."""
    from kafka.record.legacy_records import LegacyRecordBatchBuilder
    legacy = LegacyRecordBatchBuilder(magic=1, compression_type=0, batch_size=1 << 20)
    legacy.append(0, timestamp=1, key=b"k", value=b"v")
    broker = new_broker(topics={"two": 2})
    resp = wire_call(broker, ApiKey.PRODUCE, 9, {
        "transactional_id": None, "acks": -1, "timeout_ms": 1000, "topic_data": [{"name": "two", "partition_data": [
            {"index": 0, "records": bytes(legacy.build())}, {"index": 7, "records": GOOD},
            {"index": 1, "records": GOOD}]}]})
    assert [(p.index, p.error_code) for p in resp.responses[0].partition_responses] == [
        (1, ErrorCode.NONE), (7, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION), (0, ErrorCode.INVALID_RECORD)]
