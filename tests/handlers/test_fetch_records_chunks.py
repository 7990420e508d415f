"""Fetch answers a partition's records as the list of stored batches, which the codec writes without
joining; on the wire that is the same bytes as their concatenation, in every version and for
read_committed."""
import pytest

from kafkaemu.handlers import REGISTRY
from kafkaemu.broker.context import DEFERRED
from kafkaemu.protocol.api_keys import ApiKey
from kafkaemu.protocol.catalog import catalog
from kafkaemu.storage.record_batch import build_batch
from tests.conftest import T0, new_broker


@pytest.fixture
def broker():
    b = new_broker(T0, topics={"t": 1})
    plog = b.store.get("t").partitions[0]
    for n in (1, 50, 3):
        assert plog.append(build_batch([(b"k%d" % i, b"v" * 200, [], T0 + i) for i in range(n)]), T0).error == "NONE"
    return b


def fetch(broker, version, isolation=0):
    cat = catalog()
    body = {"replica_id": -1, "max_wait_ms": 0, "min_bytes": 1, "max_bytes": 1 << 20, "isolation_level": isolation,
            "session_id": 0, "session_epoch": -1, "rack_id": "", "forgotten_topics_data": [],
            "topics": [{"topic": "t", "topic_id": broker.store.get("t").topic_id, "partitions": [
                {"partition": 0, "current_leader_epoch": -1, "fetch_offset": 0, "last_fetched_epoch": -1,
                 "log_start_offset": -1, "partition_max_bytes": 1 << 20}]}]}
    req = cat.request(ApiKey.FETCH, version).decode(cat.request(ApiKey.FETCH, version).encode(body))
    ctx = broker.context(ApiKey.FETCH, version, client_id="c", now_ms=T0)
    result = FETCH.func(ctx, req)
    assert result is not DEFERRED
    return result


FETCH = REGISTRY.get(ApiKey.FETCH)


@pytest.mark.parametrize("version", range(FETCH.min_version, FETCH.max_version + 1))
def test_fetch_records_are_the_stored_batches_unjoined(broker, version):
    plog = broker.store.get("t").partitions[0]
    stored = plog.read(0, 1 << 20)
    response = fetch(broker, version, isolation=version % 2)
    records = response["responses"][0]["partitions"][0]["records"]
    assert isinstance(records, list) and len(records) == 3
    assert [bytes(r) for r in records] == [bytes(b) for b in stored]
    codec = catalog().response(ApiKey.FETCH, version)
    joined = dict(response, responses=[dict(response["responses"][0], partitions=[
        dict(response["responses"][0]["partitions"][0], records=b"".join(bytes(r) for r in records))])])
    encoded = codec.encode(response)
    assert encoded == codec.encode(joined)
    assert codec.decode(encoded)["responses"][0]["partitions"][0]["records"] == b"".join(bytes(r) for r in records)
