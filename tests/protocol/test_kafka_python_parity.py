"""Byte-for-byte parity with kafka-python 3.x's own encoders for every version both know."""
from __future__ import annotations

import random

import pytest

from kafkaemu.protocol.api_keys import ApiKey
from tests.protocol import kafka_python_oracle as oracle
from tests.protocol.samples import (all_messages, codec_for, normalise, plain, sample,
                                    with_tagged_at_default)


def _cases():
    classes = oracle.message_classes()
    out = []
    for kind, spec in all_messages():
        cls = classes.get(spec.name)
        if cls is None or kind not in ("request", "response", "data"):
            continue
        for v in spec.version_list:
            if v in oracle.versions(cls):
                out.append((kind, spec.name, v))
    return out


CASES = _cases()


def test_parity_covers_every_request_and_response_kafka_python_knows():
    names = {name for kind, name, _ in CASES if kind in ("request", "response")}
    # Every API kafkaemu specifies that kafka-python also speaks is compared, at some version.
    ours = {s.name for kind, s in all_messages() if kind in ("request", "response")}
    assert ours & set(oracle.message_classes()) == names
    assert len(CASES) > 300


@pytest.mark.parametrize(("kind", "name", "version"), CASES,
                         ids=[f"{k}-{n}-v{v}" for k, n, v in CASES])
def test_same_bytes_as_kafka_python(kind, name, version):
    cls = oracle.message_classes()[name]
    codec = codec_for(kind, name, version)
    spec = codec.spec
    rng = random.Random(f"kp-{name}-{version}")
    variants = [sample(spec.fields, version, rng, n=2),
                sample(spec.fields, version, rng, nulls=True),
                sample(spec.fields, version, rng, n=0)]
    variants.append(with_tagged_at_default(spec.fields, version, variants[0]))
    for obj in variants:
        theirs = oracle.encode(cls, oracle.drop_default_tagged(spec.fields, version, obj), version)
        assert codec.encode(obj, compiled=True) == theirs
        assert codec.encode(obj, compiled=False) == theirs
        for compiled in (True, False):
            assert plain(codec.decode(theirs, compiled=compiled)) == normalise(spec.fields, obj)
        if name == "ApiVersionsResponse" and obj.get("error_code"):
            continue  # kafka-python reads an ApiVersions error as v0, as Kafka's clients do
        # And kafka-python reads ours back to the same bytes.
        assert oracle.encode(cls, oracle.decode(cls, theirs, version).to_dict(json=False), version) == theirs


@pytest.mark.parametrize("client_id", ["kafka-python", None, "", "клиент-✓", "c" * 300])
@pytest.mark.parametrize("flexible", [False, True])
def test_request_header_matches_kafka_python(client_id, flexible):
    from kafka.protocol.api_header import RequestHeader as KpRequestHeader

    values = {"request_api_key": ApiKey.METADATA, "request_api_version": 12, "correlation_id": 2**31 - 1,
              "client_id": client_id}
    theirs = KpRequestHeader(**values).encode(flexible=flexible)
    codec = codec_for("data", "RequestHeader", 2 if flexible else 1)
    assert codec.encode(values, compiled=False) == theirs
    assert codec.encode(values, compiled=True) == theirs
    assert plain(codec.decode(theirs)) == values


@pytest.mark.parametrize("flexible", [False, True])
def test_response_header_matches_kafka_python(flexible):
    from kafka.protocol.api_header import ResponseHeader as KpResponseHeader

    theirs = KpResponseHeader(correlation_id=-7).encode(flexible=flexible)
    codec = codec_for("data", "ResponseHeader", 1 if flexible else 0)
    assert codec.encode({"correlation_id": -7}) == theirs
    assert codec.decode(theirs).correlation_id == -7


def test_request_header_v0_has_no_client_id():
    codec = codec_for("data", "RequestHeader", 0)
    data = bytes.fromhex("0012" "0000" "0000002a")
    assert codec.encode({"request_api_key": ApiKey.API_VERSIONS, "request_api_version": 0, "correlation_id": 42,
                         "client_id": "ignored"}) == data
    decoded = codec.decode(data)
    # Absent from v0, so it decodes to the field's default, the empty string (as in Kafka).
    assert (decoded.request_api_key, decoded.correlation_id, decoded.client_id) == (18, 42, "")
