"""Byte parity with kafka-python's hand-written ``kafka.protocol.old`` structs for the old,
non-flexible versions (its JSON-schema classes skip some of them: Produce v0-2, Fetch v0-3...)."""
from __future__ import annotations

import importlib
import pkgutil
import random
from functools import lru_cache

import pytest

import kafka.protocol.old
from kafka.protocol.old.types import Array, BitField, Schema
from tests.protocol.samples import all_messages, codec_for, default_of, normalise, plain, sample


@lru_cache(maxsize=1)
def old_classes() -> dict[str, type]:
    found = {}
    for mod in pkgutil.iter_modules(kafka.protocol.old.__path__, "kafka.protocol.old."):
        module = importlib.import_module(mod.name)
        for attr, value in vars(module).items():
            if "_v" in attr and hasattr(value, "SCHEMA") and getattr(value, "API_VERSION", None) is not None:
                found.setdefault(attr, value)
    return found


def to_old(old_type, f, version: int, value):
    """Our value of field ``f`` as the old struct type ``old_type`` takes it."""
    if value is None:
        return None
    if isinstance(old_type, Array):
        return [to_old(old_type.array_of, f, version, v) for v in value]
    if isinstance(old_type, Schema):
        present = [c for c in f.fields if version in c.versions]
        return tuple(to_old(t, c, version, value.get(c.name, default_of(c)))
                     for t, c in zip(old_type.fields, present, strict=True))
    if isinstance(value, dict):  # a one-field struct the old schema writes as the bare field
        (child,) = [c for c in f.fields if version in c.versions]
        return to_old(old_type, child, version, value.get(child.name, default_of(child)))
    if old_type is BitField:  # int32 authorized operations, as a set of bit numbers
        bits = {b for b in range(32) if (value & 0xFFFFFFFF) >> b & 1}
        return None if bits == {31} else bits
    return value


def positional(spec, version: int, obj: dict, schema) -> list:
    """``obj`` as the positional values the old struct takes, in wire order."""
    present = [f for f in spec.fields if version in f.versions]
    return [to_old(t, f, version, obj.get(f.name, default_of(f)))
            for t, f in zip(schema.fields, present, strict=True)]


# Old structs that disagree with Kafka's own definition (and so with protocol_specs/, which
# test_spec_vs_reference.py holds to it): DescribeLogDirs v0 has ``partitions`` as one int32
# instead of an array; CreatePartitions v0-1 nests ``count``/``assignment`` in a struct (its
# own comment: "not compatible with new protocol").
OLD_STRUCTS_WRONG = {"DescribeLogDirsRequest", "CreatePartitionsRequest"}


def _cases():
    out = []
    for kind, spec in all_messages():
        if kind not in ("request", "response") or spec.name in OLD_STRUCTS_WRONG:
            continue
        for v in spec.version_list:
            if v not in spec.flexible and f"{spec.name}_v{v}" in old_classes():
                out.append((kind, spec.name, v))
    return out


CASES = _cases()


def test_old_structs_cover_the_versions_the_json_classes_lack():
    have = {(n, v) for _, n, v in CASES}
    for name, version in [("ProduceRequest", 0), ("ProduceRequest", 2), ("FetchRequest", 0),
                          ("FetchResponse", 3), ("OffsetCommitRequest", 0), ("ListOffsetsRequest", 0)]:
        assert (name, version) in have


@pytest.mark.parametrize(("kind", "name", "version"), CASES, ids=[f"{k}-{n}-v{v}" for k, n, v in CASES])
def test_same_bytes_as_kafka_python_old_structs(kind, name, version):
    cls = old_classes()[f"{name}_v{version}"]
    codec = codec_for(kind, name, version)
    rng = random.Random(f"old-{name}-{version}")
    for obj in (sample(codec.spec.fields, version, rng), sample(codec.spec.fields, version, rng, nulls=True)):
        theirs = cls(*positional(codec.spec, version, obj, cls.SCHEMA)).encode()
        assert codec.encode(obj, compiled=True) == theirs
        assert codec.encode(obj, compiled=False) == theirs
        assert plain(codec.decode(theirs)) == normalise(codec.spec.fields, obj)
