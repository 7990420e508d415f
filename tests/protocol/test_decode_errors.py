"""Hostile and broken bodies: every failure of ``Codec.decode`` is a ``DecodeError``, fast; the reference
``construct`` codec alone raises ``DecodeError`` or construct's own errors."""
from __future__ import annotations

import random
import time
import tracemalloc

import pytest
from construct import ConstructError

from kafkaemu.protocol.constructs import build_struct
from kafkaemu.protocol.constructs import KBool, KStruct, KUuid
from kafkaemu.protocol.primitives import DecodeError

REFERENCE_ERRORS = (DecodeError, ConstructError)   # what the construct codec alone raises
from kafkaemu.protocol.spec import parse_spec
from tests.protocol.samples import all_cases, codec_for, normalise, plain, sample

pytestmark = pytest.mark.timeout(120)

# A few messages of each shape: flexible and not, tagged fields, uuids, nullable structs, a
# non-flexible body ending in a bool (MetadataRequest v4) and records.
SOME = [
    ("request", "JoinGroupRequest", 5), ("request", "JoinGroupRequest", 9),
    ("request", "FetchRequest", 4), ("request", "FetchRequest", 17),
    ("request", "MetadataRequest", 4), ("request", "MetadataRequest", 12),
    ("request", "OffsetCommitRequest", 2), ("request", "OffsetCommitRequest", 9),
    ("request", "ProduceRequest", 3), ("request", "ProduceRequest", 11),
    ("response", "MetadataResponse", 12), ("response", "FetchResponse", 16),
    ("response", "ConsumerGroupHeartbeatResponse", 0), ("response", "SyncGroupResponse", 5),
    ("data", "RequestHeader", 2), ("data", "GroupMetadataValue", 3),
]
IDS = [f"{n}-v{v}" for _, n, v in SOME]


def _valid(kind, name, version, seed=0):
    codec = codec_for(kind, name, version)
    obj = sample(codec.spec.fields, version, random.Random(f"err-{name}-{version}-{seed}"), n=2)
    return codec, codec.encode(obj)


@pytest.mark.parametrize(("kind", "name", "version"), SOME, ids=IDS)
def test_truncated_at_every_byte_boundary(kind, name, version):
    codec, data = _valid(kind, name, version)
    for cut in range(len(data)):
        for compiled in (True, False):
            with pytest.raises(DecodeError):
                codec.decode(data[:cut], compiled=compiled)


@pytest.mark.parametrize(("kind", "name", "version"), SOME, ids=IDS)
def test_trailing_bytes_rejected(kind, name, version):
    codec, data = _valid(kind, name, version)
    for compiled in (True, False):
        with pytest.raises(DecodeError, match="trailing"):
            codec.decode(data + b"\x00", compiled=compiled)


@pytest.mark.parametrize(("kind", "name", "version"), SOME, ids=IDS)
def test_mutated_bodies_decode_alike_or_fail_as_decode_errors(kind, name, version):
    """Flipped, inserted and deleted bytes: compiled and plain agree, and any failure is a
    DecodeError (never another exception escaping ``Codec.decode``)."""
    codec, data = _valid(kind, name, version)
    rng = random.Random(f"mutate-{name}-{version}")
    for _ in range(150):
        mutated = bytearray(data)
        for _ in range(rng.randint(1, 3)):
            pos = rng.randrange(len(mutated))
            op = rng.random()
            if op < 0.6:
                mutated[pos] = rng.choice([0x00, 0x7F, 0x80, 0xFF, rng.randrange(256)])
            elif op < 0.8:
                mutated.insert(pos, rng.randrange(256))
            elif len(mutated) > 1:
                del mutated[pos]
        outcomes = []
        try:  # the plain codec (the server's header decoder and the error path) only raises
            outcomes.append(("ok", plain(codec.plain.parse(bytes(mutated)))))  # construct errors
        except REFERENCE_ERRORS:
            outcomes.append(("error", None))
        try:
            outcomes.append(("ok", plain(codec.compiled.parse(bytes(mutated)))))
        except Exception as exc:  # the compiled codec may fail differently: Codec.decode maps it
            outcomes.append(("error", type(exc).__name__))
        assert outcomes[0][0] == outcomes[1][0], bytes(mutated).hex()
        if outcomes[0][0] == "ok":
            assert outcomes[0][1] == outcomes[1][1]
        for compiled in (True, False):
            try:
                codec.decode(bytes(mutated), compiled=compiled)
            except DecodeError:
                pass


def _fails_fast(codec, data):
    tracemalloc.start()
    start = time.perf_counter()
    try:
        for compiled in (True, False):
            with pytest.raises(DecodeError):
                codec.decode(data, compiled=compiled)
        with pytest.raises(REFERENCE_ERRORS):
            codec.plain.parse(data)  # no other exception type, even without Codec.decode
        elapsed = time.perf_counter() - start
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert elapsed < 0.5
    assert peak < 1 << 20, f"decoding allocated {peak} bytes"


def test_huge_array_count_fails_fast():
    # JoinGroupRequest v5: group_id "g", session 1, rebalance 1, member "m", instance null,
    # protocol_type "c", then a protocols count of 2**31-1 with one element's worth of bytes.
    codec = codec_for("request", "JoinGroupRequest", 5)
    head = bytes.fromhex("000167" "00000001" "00000001" "00016d" "ffff" "000163")
    _fails_fast(codec, head + bytes.fromhex("7fffffff" "000178" "00000000"))


def test_huge_compact_array_count_fails_fast():
    codec = codec_for("request", "JoinGroupRequest", 9)
    head = bytes.fromhex("0267" "00000001" "00000001" "026d" "00" "0263")
    _fails_fast(codec, head + bytes.fromhex("ffffffff07" "0278" "01" "00"))


@pytest.mark.parametrize("length", ["fffe", "8000", "ffff"])
def test_negative_string_length_rejected(length):
    # group_id is not nullable: -1 is as bad as -2.
    codec = codec_for("request", "HeartbeatRequest", 0)
    _fails_fast(codec, bytes.fromhex(length + "00000001" "00016d"))


def test_negative_bytes_and_array_lengths_rejected():
    codec = codec_for("request", "SyncGroupRequest", 0)  # group, generation, member, assignments
    assignment = "000161" + "fffffffe"                   # member "a", bytes length -2
    _fails_fast(codec, bytes.fromhex("000167" "00000001" "00016d" "00000001" + assignment))
    _fails_fast(codec, bytes.fromhex("000167" "00000001" "00016d" "fffffffe"))


def test_bytes_length_beyond_body_fails_fast():
    codec = codec_for("request", "SyncGroupRequest", 0)
    _fails_fast(codec, bytes.fromhex("000167" "00000001" "00016d" "00000001" "000161" "7fffffff" "00"))


@pytest.mark.parametrize("varint", ["ffffffffffffffffffff01", "ffffffffffffffffffffffff", "ff" * 40,
                                    "8080808080808080808001", "ffffffff7f", "808080808001"])
def test_huge_varints_fail_fast(varint):
    codec = codec_for("request", "HeartbeatRequest", 4)  # flexible: compact group id first
    _fails_fast(codec, bytes.fromhex(varint) + b"g" * 8)


def test_huge_compact_string_length_fails_fast():
    codec = codec_for("request", "HeartbeatRequest", 4)
    _fails_fast(codec, bytes.fromhex("ffffffff0f") + b"g" * 8)


def test_huge_tag_count_and_tag_size_fail_fast():
    codec = codec_for("request", "HeartbeatRequest", 4)
    body = bytes.fromhex("0267" "00000001" "026d" "00")   # group "g", generation, member "m", null
    _fails_fast(codec, body + bytes.fromhex("ffffffff0f" "00" "00"))
    _fails_fast(codec, body + bytes.fromhex("01" "05" "ffffffff0f" "00"))


def test_invalid_utf8_is_a_decode_error():
    codec = codec_for("request", "HeartbeatRequest", 0)
    for compiled in (True, False):
        with pytest.raises(DecodeError, match="UTF-8"):
            codec.decode(bytes.fromhex("0002c328" "00000001" "00016d"), compiled=compiled)


def test_nullable_string_minus_one_is_null():
    codec = codec_for("request", "JoinGroupRequest", 5)
    data = bytes.fromhex("000167" "00000001" "00000001" "00016d" "ffff" "000163" "00000000")
    for compiled in (True, False):
        assert codec.decode(data, compiled=compiled).group_instance_id is None


def test_nullable_struct_marker_any_negative_is_null():
    # ConsumerGroupHeartbeatResponse v0 ends with a nullable struct (assignment): marker -1 or
    # any other negative byte means null, as Kafka reads it.
    codec = codec_for("response", "ConsumerGroupHeartbeatResponse", 0)
    head = codec.encode({"assignment": None})
    assert head[-2:] == b"\xff\x00"
    for marker in (b"\xff", b"\x80"):
        for compiled in (True, False):
            assert codec.decode(head[:-2] + marker + b"\x00", compiled=compiled).assignment is None


def test_compiled_bool_and_uuid_reject_short_reads():
    """construct's own compiled Flag/Bytes(16) would read past the end silently."""
    struct = KStruct([("b", KBool(), False), ("u", KUuid(), bytes(16))], {}, False)
    compiled = struct.compile()
    good = b"\x02" + bytes(range(16))
    assert compiled.parse(good) == {"b": True, "u": bytes(range(16))}
    for cut in range(len(good)):
        for codec in (struct, compiled):
            with pytest.raises(DecodeError):
                codec.parse(good[:cut])


def test_uuid_of_wrong_length_is_not_encoded():
    codec = codec_for("request", "MetadataRequest", 12)
    for compiled in (True, False):
        with pytest.raises(DecodeError):
            codec.encode({"topics": [{"topic_id": b"short", "name": "t"}]}, compiled=compiled)


def test_spec_build_struct_is_usable_alone():
    spec = parse_spec("data  Tiny  versions:0-1  flexible:1+\n  a: int32\n  b: string  v1+  null:1+\n")[0]
    struct = build_struct(spec.fields, 1, True)
    assert struct.parse(struct.build({"a": 5, "b": None})) == {"a": 5, "b": None}


ALL = all_cases()


@pytest.mark.parametrize(("kind", "name", "version"), ALL, ids=[f"{k}-{n}-v{v}" for k, n, v in ALL])
def test_every_codec_rejects_cuts_and_agrees_with_plain_on_mutations(kind, name, version):
    """A lighter sweep over every codec: some cut points, some mutations."""
    codec, data = _valid(kind, name, version, seed=1)
    if not data:
        # Empty bodies (ListGroups v0-2, ApiVersions v0-2) decode to the defaults of the shape.
        assert plain(codec.decode(b"")) == normalise(codec.spec.fields, {})
        return
    rng = random.Random(f"sweep-{name}-{version}")
    for cut in {0, len(data) - 1, *(rng.randrange(len(data)) for _ in range(6))}:
        for compiled in (True, False):
            with pytest.raises(DecodeError):
                codec.decode(data[:cut], compiled=compiled)
    for _ in range(12):
        mutated = bytearray(data)
        mutated[rng.randrange(len(mutated))] = rng.choice([0x00, 0x01, 0x7F, 0x80, 0xFF])
        results = []
        try:
            results.append(plain(codec.plain.parse(bytes(mutated))))
        except REFERENCE_ERRORS:  # the plain codec raises nothing else
            results.append("error")
        try:
            results.append(plain(codec.compiled.parse(bytes(mutated))))
        except Exception:  # compared below: both fail or both give the same message
            results.append("error")
        assert results[0] == results[1], bytes(mutated).hex()


def test_lenient_decode_ignores_trailing_bytes():
    """The server decodes with ``strict=False``, as Kafka ignores bytes after a request body."""
    codec, data = _valid("request", "MetadataRequest", 12)
    for compiled in (True, False):
        assert codec.decode(data + b"\x00\x00", compiled=compiled, strict=False) == codec.decode(data)
