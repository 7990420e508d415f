"""How the connection encodes replies: ApiVersions' cached answer at every version, and records given
as chunks handed on uncopied."""
from kafkaemu.handlers import REGISTRY
from kafkaemu.handlers.registry import ApiRegistry
from kafkaemu.core.features import FinalizedFeatures
from kafkaemu.handlers.api_versions import _features, advertised_api_keys
from kafkaemu.protocol import envelope
from kafkaemu.protocol.api_keys import ApiKey
from kafkaemu.protocol.catalog import catalog
from kafkaemu.protocol.fastcodec import BIG_CHUNK
from kafkaemu.testing.raw_client import encode_request
from kafkaemu.wire.connection import Connection
from kafkaemu.wire.framing import FrameDecoder
from tests.conftest import new_broker


def _conn(registry=REGISTRY):
    return Connection(new_broker(), registry, 1, "127.0.0.1")


def test_api_versions_answers_the_registry_at_every_version_twice_over():
    conn = _conn()
    expected = advertised_api_keys(client_telemetry=False)
    request = {"client_software_name": "t", "client_software_version": "1"}
    for version in catalog().requests[ApiKey.API_VERSIONS].version_list * 2:   # the second pass uses the cached bytes
        conn.receive(encode_request(ApiKey.API_VERSIONS, version, request, correlation_id=version), 0)
        (reply,) = FrameDecoder(1 << 30).feed(conn.take_output())
        correlation_id, body = envelope.decode_response(ApiKey.API_VERSIONS, version, reply)
        assert correlation_id == version
        assert body.error_code == 0
        assert [dict(k) for k in body.api_keys] == expected
        assert reply == envelope.encode_response(ApiKey.API_VERSIONS, version, version, {
            "error_code": 0, "api_keys": expected, **_features(FinalizedFeatures(), version < 4)})[4:]


def test_api_versions_keys_from_the_registry_are_a_fresh_list_each_time():
    keys = REGISTRY.api_keys()
    keys.clear()
    assert REGISTRY.api_keys()


def test_fetch_records_given_as_chunks_reach_the_transport_uncopied():
    big = memoryview(bytes(range(256)) * (2 * BIG_CHUNK // 256))
    small = memoryview(b"second batch")
    registry = ApiRegistry()

    @registry.register(ApiKey.FETCH, 0, 17)
    def fetch(ctx, req):
        return {"throttle_time_ms": 0, "error_code": 0, "session_id": 0, "responses": [
            {"topic": "t", "topic_id": bytes(16), "partitions": [
                {"partition_index": 0, "error_code": 0, "high_watermark": 2, "last_stable_offset": 2,
                 "log_start_offset": 0, "aborted_transactions": None, "preferred_read_replica": -1,
                 "records": [big, small]}]}]}
    conn = _conn(registry)
    request_body = {"max_wait_ms": 0, "min_bytes": 1, "max_bytes": 1 << 20, "topics": []}
    conn.receive(encode_request(ApiKey.FETCH, 12, request_body, correlation_id=7), 0)
    assert conn.buffered_bytes > len(big)          # counted towards backpressure
    chunks = conn.take_output_chunks()
    assert any(c is big for c in chunks)            # the stored batch itself, not a copy
    assert conn.buffered_bytes == 0
    (reply,) = FrameDecoder(1 << 30).feed(b"".join(chunks))
    correlation_id, body = envelope.decode_response(ApiKey.FETCH, 12, reply)
    assert correlation_id == 7
    assert body.responses[0].partitions[0].records == bytes(big) + bytes(small)
    # take_output gives the same bytes joined
    conn.receive(encode_request(ApiKey.FETCH, 12, request_body, correlation_id=8), 0)
    (again,) = FrameDecoder(1 << 30).feed(conn.take_output())
    assert envelope.decode_response(ApiKey.FETCH, 12, again)[1] == body
