"""The generated codecs (``fastcodec``) against their reference, the ``construct`` codec.

For every version of the hot APIs' requests and responses and of the request header: bodies drawn by
hypothesis from the specs encode to the reference's bytes and decode to the reference's values; for
arbitrary bytes, whatever the generated decoder accepts the reference accepts with the same value
and length (what it rejects, ``Codec.decode`` hands to the reference). A bytes/records field also
takes a list of chunks, in both codecs, and the generated encoder keeps the chunks uncopied.
"""
from __future__ import annotations

import io

import pytest

pytest.importorskip("hypothesis", reason="the codec property tests need hypothesis (pip install kafkaemu[test])")

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from kafkaemu.protocol.api_keys import ApiKey  # noqa: E402
from kafkaemu.protocol.catalog import catalog  # noqa: E402
from kafkaemu.protocol.fastcodec import BIG_CHUNK, coalesce  # noqa: E402
from tests.fuzz.strategies import Seen, fields_dict  # noqa: E402
from tests.protocol.samples import plain  # noqa: E402

HOT = {ApiKey.PRODUCE: "Produce", ApiKey.FETCH: "Fetch", ApiKey.LIST_OFFSETS: "ListOffsets",
       ApiKey.METADATA: "Metadata", ApiKey.OFFSET_COMMIT: "OffsetCommit", ApiKey.OFFSET_FETCH: "OffsetFetch",
       ApiKey.FIND_COORDINATOR: "FindCoordinator", ApiKey.JOIN_GROUP: "JoinGroup", ApiKey.HEARTBEAT: "Heartbeat",
       ApiKey.SYNC_GROUP: "SyncGroup", ApiKey.API_VERSIONS: "ApiVersions"}


def _cases():
    cat = catalog()
    cases = []
    for key in HOT:
        for kind, table in (("request", cat.requests), ("response", cat.responses)):
            for version in table[key].version_list:
                cases.append((kind, key, version))
    return cases


CASES = _cases()
IDS = [f"{HOT[k]}{kind.capitalize()}-v{v}" for kind, k, v in CASES]
HEADERS = [("RequestHeader", v) for v in catalog().others["RequestHeader"].version_list]


def _codec(kind: str, key: int, version: int):
    cat = catalog()
    return cat.request(key, version) if kind == "request" else cat.response(key, version)


def _reference_decode(codec, data: bytes):
    stream = io.BytesIO(data)
    return codec.plain.parse_stream(stream), stream.tell()


def _settings(examples: int):
    return settings(max_examples=examples, derandomize=True, database=None, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                           HealthCheck.filter_too_much])


def _check_body(codec, body: dict) -> None:
    reference = codec.encode(body, compiled=False)
    assert codec.fast.encode(body) == reference
    decoded, end = codec.fast.decode(reference)
    assert end == len(reference)
    assert plain(decoded) == plain(codec.decode(reference, compiled=False))
    for name in decoded:   # every field reads as an attribute too, as the reference's Container
        assert getattr(decoded, name) is decoded[name]
    assert codec.fast.encode(decoded) == reference


@pytest.mark.parametrize(("kind", "key", "version"), CASES, ids=IDS)
@_settings(6)
@given(data=st.data())
def test_generated_bodies_match_the_reference(kind, key, version, data):
    codec = _codec(kind, key, version)
    _check_body(codec, data.draw(fields_dict(codec.spec.fields, version, Seen())))


@pytest.mark.parametrize(("name", "version"), HEADERS, ids=[f"{n}-v{v}" for n, v in HEADERS])
@_settings(30)
@given(data=st.data())
def test_request_headers_match_the_reference(name, version, data):
    codec = catalog().data(name, version)
    _check_body(codec, data.draw(fields_dict(codec.spec.fields, version, Seen())))


@pytest.mark.parametrize(("kind", "key", "version"), CASES, ids=IDS)
@_settings(6)
@given(data=st.data())
def test_what_the_generated_decoder_accepts_the_reference_reads_alike(kind, key, version, data):
    codec = _codec(kind, key, version)
    valid = codec.encode(data.draw(fields_dict(codec.spec.fields, version, Seen())), compiled=False)
    # Damage a valid body: truncate it, flip a byte, or append junk.
    cut = data.draw(st.integers(0, len(valid)))
    flip = data.draw(st.integers(0, max(len(valid) - 1, 0)))
    junk = data.draw(st.binary(max_size=8))
    for raw in (valid[:cut], valid[:flip] + bytes([valid[flip] ^ 0xFF]) + valid[flip + 1:] if valid else b"",
                valid + junk, junk):
        try:
            got, end = codec.fast.decode(raw)
        except Exception:
            continue   # Codec.decode re-reads it with the reference, which gives the error
        ref, ref_end = _reference_decode(codec, raw)
        assert (plain(got), end) == (plain(ref), ref_end)


def test_truncated_bodies_fall_back_to_the_reference_error():
    codec = catalog().request(ApiKey.HEARTBEAT, 4)
    data = codec.encode({"group_id": "g", "generation_id": 1, "member_id": "m"})
    for cut in range(len(data)):
        with pytest.raises(Exception) as fast_error:
            codec.decode(data[:cut])
        with pytest.raises(Exception) as reference_error:
            codec.decode(data[:cut], compiled=False)
        assert str(fast_error.value) == str(reference_error.value)


def _fetch_response(records) -> dict:
    return {"throttle_time_ms": 0, "error_code": 0, "session_id": 0, "responses": [
        {"topic": "t", "topic_id": bytes(16), "partitions": [
            {"partition_index": 0, "error_code": 0, "high_watermark": 5, "last_stable_offset": 5,
             "log_start_offset": 0, "aborted_transactions": [], "preferred_read_replica": -1,
             "records": records}]}]}


@pytest.mark.parametrize("version", catalog().responses[ApiKey.FETCH].version_list)
def test_records_given_as_chunks_encode_as_their_concatenation(version):
    codec = catalog().response(ApiKey.FETCH, version)
    big = memoryview(bytes(range(256)) * (BIG_CHUNK // 256 + 1))
    small = memoryview(b"tail-batch")
    joined = bytes(big) + bytes(small)
    expected = codec.encode(_fetch_response(joined), compiled=False)
    for chunks in ([big, small], (big, small), [bytes(big), small], [], [small]):
        want = codec.encode(_fetch_response(b"".join(chunks)), compiled=False)
        assert codec.encode(_fetch_response(chunks), compiled=False) == want
        assert codec.encode(_fetch_response(chunks)) == want
    assert codec.encode(_fetch_response([big, small])) == expected
    # The generated encoder hands the chunks on as they are: the big one is never copied.
    parts = coalesce(codec.fast.encode_parts(_fetch_response([big, small])))
    assert any(p is big for p in parts)
    assert b"".join(parts) == expected


def test_produce_request_records_as_chunks():
    codec = catalog().request(ApiKey.PRODUCE, 9)
    body = {"transactional_id": None, "acks": -1, "timeout_ms": 1000, "topic_data": [
        {"name": "t", "partition_data": [{"index": 0, "records": [b"ab", memoryview(b"cd")]}]}]}
    expected = codec.encode(dict(body, topic_data=[{"name": "t", "partition_data": [{"index": 0, "records": b"abcd"}]}]),
                            compiled=False)
    assert codec.encode(body) == expected
    assert codec.encode(body, compiled=False) == expected
