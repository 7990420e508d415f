"""kafka-python 3.x's JSON-schema message classes, used as an independent encoder/decoder."""
from __future__ import annotations

import importlib
import pkgutil
import uuid
from functools import lru_cache

import kafka.protocol
from kafka.protocol.api_data import ApiData
from kafka.protocol.api_message import ApiMessage


def _subclasses(cls):
    for sub in cls.__subclasses__():
        yield sub
        yield from _subclasses(sub)


@lru_cache(maxsize=1)
def message_classes() -> dict:
    """kafka-python's primary message class for each JSON message name."""
    for mod in pkgutil.walk_packages(kafka.protocol.__path__, "kafka.protocol."):
        if ".old" not in mod.name and "generate_stubs" not in mod.name:
            importlib.import_module(mod.name)
    found = {}
    for base in (ApiMessage, ApiData):
        for cls in _subclasses(base):
            json = getattr(cls, "_json", None)
            if json and getattr(cls, "_class_version", None) is None:
                found.setdefault(json["name"], cls)
    return found


def versions(cls) -> range:
    lo, hi = cls._json["validVersions"].split("-") if "-" in cls._json["validVersions"] else (
        cls._json["validVersions"], cls._json["validVersions"])
    return range(int(lo), int(hi) + 1)


def _bitfield(value):
    """kafka-python patches the int32 authorized-operations fields into sets of bit numbers."""
    if not isinstance(value, int):
        return value
    bits = {b for b in range(32) if (value & 0xFFFFFFFF) >> b & 1}
    return None if bits == {31} else bits


# kafka-python's names for fields Kafka has since renamed (TxnOffsetCommit's, in Kafka 4.4)
RENAMED = {"generation_id": "generation_id_or_member_epoch"}


def _convert(struct_fields, obj: dict, version: int) -> dict:
    out = {}
    for name, field in struct_fields.items():
        if not field.for_version_q(version):
            continue
        if name not in obj and RENAMED.get(name) in obj:
            name = RENAMED[name]
        if name not in obj and field.type_str == "bitfield":
            # ...and renames cluster_/topic_authorized_operations to authorized_operations.
            name = next((k for k in obj if k.endswith("_" + name)), name)
        if name not in obj:
            continue
        value = obj[name]
        if field.type_str == "bitfield":
            value = _bitfield(value)
        elif value is not None:
            if field.is_struct_array():
                value = [field.data_class(**_convert(field.fields, v, version)) for v in value]
            elif field.is_struct():
                value = field.data_class(**_convert(field.fields, value, version))
            elif field.type_str == "uuid" and not isinstance(value, uuid.UUID):
                value = uuid.UUID(bytes=bytes(value))
        out[field.name] = value
    return out


def drop_default_tagged(spec_fields, version: int, obj: dict) -> dict:
    """kafka-python writes a tagged struct (or uuid) given at its default, as its defaults for
    them are None, where Kafka omits it; leave such fields out so both sides mean the same."""
    out = {}
    for f in spec_fields:
        if f.name not in obj:
            continue
        value = obj[f.name]
        if version in f.tagged and value == _default(f):
            continue
        if f.is_struct and not f.is_array and version in f.tagged and value is not None and all(
                value.get(c.name) == _default(c) for c in f.fields if version in c.versions):
            continue
        if f.is_struct and value is not None:
            if f.is_array:
                value = [drop_default_tagged(f.fields, version, v) for v in value]
            else:
                value = drop_default_tagged(f.fields, version, value)
        out[f.name] = value
    return out


def _default(f):
    from tests.protocol.samples import default_of
    return default_of(f)


def to_kafka_python(cls, obj: dict, version: int):
    """An instance of kafka-python's ``cls`` at ``version`` holding the values of ``obj``."""
    return cls(version=version, **_convert(cls._struct.fields, obj, version))


def encode(cls, obj: dict, version: int) -> bytes:
    msg = to_kafka_python(cls, obj, version)
    if issubclass(cls, ApiData):
        return msg.encode(version=version, header=False)
    return msg.encode(version=version)


def decode(cls, data: bytes, version: int):
    if issubclass(cls, ApiData):
        return cls.decode(data, version=version, header=False)
    return cls.decode(data, version=version)
