"""Round-trip every (message, version) of every spec, compiled and plain."""
from __future__ import annotations

import random

import pytest

from tests.protocol.samples import (all_cases, codec_for, has_tagged, normalise, plain, sample,
                                    spec_for, with_tagged_at_default, without_tagged)

CASES = all_cases()
IDS = [f"{kind}-{name}-v{v}" for kind, name, v in CASES]


def _round_trip(codec, fields, obj):
    data = codec.encode(obj, compiled=False)
    assert codec.encode(obj, compiled=True) == data
    expected = normalise(fields, obj)
    for compiled in (False, True):
        decoded = codec.decode(data, compiled=compiled)
        assert plain(decoded) == expected
        # What was decoded (in the one shape) encodes back to the same bytes.
        assert codec.encode(decoded, compiled=compiled) == data
    # Codec.decode falls back to the plain codec when compiled code fails: check that the
    # compiled codec itself decodes valid bytes.
    assert plain(codec.compiled.parse(data)) == expected
    return data


@pytest.mark.parametrize(("kind", "name", "version"), CASES, ids=IDS)
def test_round_trip_non_default_values(kind, name, version):
    spec, codec = spec_for(kind, name), codec_for(kind, name, version)
    for seed in range(3):
        rng = random.Random(f"{name}-{version}-{seed}")
        _round_trip(codec, spec.fields, sample(spec.fields, version, rng, n=seed + 1))


@pytest.mark.parametrize(("kind", "name", "version"), CASES, ids=IDS)
def test_round_trip_nulls_and_empty_arrays(kind, name, version):
    spec, codec = spec_for(kind, name), codec_for(kind, name, version)
    rng = random.Random(f"{name}-{version}-nulls")
    _round_trip(codec, spec.fields, sample(spec.fields, version, rng, nulls=True))
    _round_trip(codec, spec.fields, sample(spec.fields, version, rng, n=0))


@pytest.mark.parametrize(("kind", "name", "version"), CASES, ids=IDS)
def test_missing_keys_take_defaults(kind, name, version):
    spec, codec = spec_for(kind, name), codec_for(kind, name, version)
    data = _round_trip(codec, spec.fields, {})
    full = normalise(spec.fields, {})
    assert codec.encode(full, compiled=False) == data
    assert codec.encode(full, compiled=True) == data


TAGGED = [c for c in CASES if has_tagged(spec_for(c[0], c[1]).fields, c[2])]


@pytest.mark.parametrize(("kind", "name", "version"), TAGGED,
                         ids=[f"{k}-{n}-v{v}" for k, n, v in TAGGED])
def test_tagged_fields_at_default_are_omitted(kind, name, version):
    spec, codec = spec_for(kind, name), codec_for(kind, name, version)
    obj = sample(spec.fields, version, random.Random(f"{name}-{version}-tags"))
    at_default = with_tagged_at_default(spec.fields, version, obj)
    left_out = without_tagged(spec.fields, version, obj)
    for compiled in (False, True):
        expected = codec.encode(left_out, compiled=compiled)
        assert codec.encode(at_default, compiled=compiled) == expected
        # With non-default values the tags are written, so the encoding grows.
        assert len(codec.encode(obj, compiled=compiled)) > len(expected)


def test_tagged_field_bytes_match_kafka_layout():
    """FetchResponse v12: partition-level tag 1 (current_leader) written, tags 0 and 2 not."""
    codec = codec_for("response", "FetchResponse", 12)
    obj = {"responses": [{"topic": "t", "partitions": [
        {"partition_index": 1, "current_leader": {"leader_id": 3, "leader_epoch": -1}}]}]}
    expected = bytes.fromhex(
        "00000000" "0000" "00000000"          # throttle, error, session id
        "02" "0274"                             # 1 topic, "t"
        "02" "00000001" "0000"                  # 1 partition, index 1, error 0
        "0000000000000000" "ffffffffffffffff" "ffffffffffffffff"  # hw, lso, log start
        "01"                                    # aborted_transactions: empty compact array
        "ffffffff"                              # preferred_read_replica -1
        "00"                                    # records: null compact bytes
        "01" "01" "09" "00000003" "ffffffff" "00"  # 1 tag: tag 1, 9 bytes, leader 3, epoch -1
        "00"                                    # topic tags
        "00")                                   # message tags (node_endpoints empty: omitted)
    assert codec.encode(obj, compiled=False) == expected
    assert codec.encode(obj, compiled=True) == expected
    decoded = codec.decode(expected)
    assert decoded.responses[0].partitions[0].current_leader.leader_id == 3
    assert decoded.responses[0].partitions[0].snapshot_id == {"end_offset": -1, "epoch": -1}


def test_old_version_decodes_to_newest_shape():
    codec = codec_for("request", "JoinGroupRequest", 0)
    data = bytes.fromhex("000167" "00000001" "00016d" "0008" + b"consumer".hex()
                         + "00000001" "000572616e6765" "000000027879")
    for compiled in (False, True):
        req = codec.decode(data, compiled=compiled)
        assert req.group_id == "g" and req.protocols[0].metadata == b"xy"
        assert req.rebalance_timeout_ms == -1
        assert req.group_instance_id is None and req.reason is None


def test_decoded_defaults_are_not_shared_between_messages():
    codec = codec_for("response", "FetchResponse", 12)
    data = codec.encode({"responses": [{"topic": "t", "partitions": [{}]}]})
    for compiled in (False, True):
        first = codec.decode(data, compiled=compiled)
        first.responses[0].partitions[0].snapshot_id["epoch"] = 7
        first.node_endpoints.append("x")
        second = codec.decode(data, compiled=compiled)
        assert second.responses[0].partitions[0].snapshot_id["epoch"] == -1
        assert second.node_endpoints == []
