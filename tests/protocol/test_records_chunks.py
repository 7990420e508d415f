"""A ``records`` value may be a list (or tuple) of bytes-like chunks, the stored batches as they
are: encoded exactly as their concatenation, by the compiled and the plain codec, in every
Fetch version (and Produce's request codec, which shares the field type)."""
import pytest

from kafkaemu.protocol.api_keys import ApiKey
from kafkaemu.protocol.catalog import catalog
from kafkaemu.storage.record_batch import build_batch

BATCHES = [build_batch([(b"k", b"v" * n, [], 1_700_000_000_000 + n)]) for n in (1, 300, 70_000)]


def fetch_response(records):
    partition = {"partition_index": 0, "error_code": 0, "high_watermark": 3, "last_stable_offset": 3,
                 "log_start_offset": 0, "aborted_transactions": None, "preferred_read_replica": -1,
                 "records": records}
    other = dict(partition, partition_index=1, records=b"")
    return {"throttle_time_ms": 0, "error_code": 0, "session_id": 0, "node_endpoints": [],
            "responses": [{"topic": "t", "topic_id": bytes(range(16)), "partitions": [partition, other]}]}


CHUNKS = [
    [BATCHES[0]],
    BATCHES,
    (BATCHES[1], BATCHES[2]),
    [bytearray(BATCHES[0]), memoryview(BATCHES[2]), BATCHES[1]],
    [memoryview(BATCHES[2])[10:5000], b"", memoryview(bytearray(BATCHES[1]))],
    [],
]


@pytest.mark.parametrize("version", range(18))
@pytest.mark.parametrize("chunks", CHUNKS, ids=lambda c: f"{type(c).__name__}{len(c)}")
@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "plain"])
def test_fetch_records_as_chunks_encode_as_their_join(version, chunks, compiled):
    codec = catalog().response(ApiKey.FETCH, version)
    joined = b"".join(bytes(c) for c in chunks)
    as_chunks = codec.encode(fetch_response(chunks), compiled=compiled)
    assert as_chunks == codec.encode(fetch_response(joined), compiled=compiled)
    assert codec.decode(as_chunks)["responses"][0]["partitions"][0]["records"] == joined


@pytest.mark.parametrize("version", [3, 9, 11])
def test_produce_records_as_chunks_encode_as_their_join(version):
    codec = catalog().request(ApiKey.PRODUCE, version)
    body = {"transactional_id": None, "acks": 1, "timeout_ms": 1000,
            "topic_data": [{"name": "t", "partition_data": [{"index": 0, "records": None}]}]}
    body["topic_data"][0]["partition_data"][0]["records"] = BATCHES[:2]
    as_chunks = codec.encode(body)
    body["topic_data"][0]["partition_data"][0]["records"] = b"".join(BATCHES[:2])
    assert as_chunks == codec.encode(body)
