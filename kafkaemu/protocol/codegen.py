"""Turn parsed specs into ``construct`` codecs, one per (message, version).

Every version of a message decodes to the same shape: a ``Container`` with snake_case field
names, where fields absent from the version hold their defaults. Encoding takes that shape
(any mapping; missing keys take defaults) and writes only what the version has.
"""
from __future__ import annotations

import io
from functools import cached_property

from construct import (Construct, ConstructError, Float64b, Int8sb, Int16sb, Int16ub, Int32sb,
                       Int32ub, Int64sb)

from .constructs import KArray, KBool, KBytes, KOptional, KString, KStruct, KUuid
from .defaults import field_default, shape_default
from .fastcodec import FastCodec
from .primitives import DecodeError
from .spec import FieldSpec, MessageSpec

_FIXED: dict[str, Construct] = {
    "bool": KBool(), "int8": Int8sb, "int16": Int16sb, "int32": Int32sb, "int64": Int64sb,
    "uint16": Int16ub, "uint32": Int32ub, "float64": Float64b, "uuid": KUuid(),
}

def _field_construct(f: FieldSpec, version: int, flexible: bool) -> Construct:
    compact = flexible if f.flex is None else version in f.flex
    nullable = version in f.nullable
    elem = f.element_type
    if f.is_struct:
        sub = build_struct(f.fields, version, flexible)
    elif elem in ("string",):
        sub = KString(compact, nullable and not f.is_array)
    elif elem in ("bytes", "records"):
        sub = KBytes(compact, nullable and not f.is_array)
    else:
        sub = _FIXED[elem]
    if f.is_array:
        return KArray(sub, compact, nullable)
    if f.is_struct and nullable:
        return KOptional(sub)
    return sub


def build_struct(fields: list[FieldSpec], version: int, flexible: bool) -> KStruct:
    plain, tagged, absent, fill = [], {}, [], {}
    for f in fields:
        if version not in f.versions:
            absent.append((f.name, shape_default(f)))
            continue
        entry = (f.name, _field_construct(f, version, flexible), field_default(f, version))
        if flexible and version in f.tagged:
            tagged[f.tag] = entry
            fill[f.name] = shape_default(f)  # what decoding gives when the tag is not sent
        else:
            plain.append(entry)
    return KStruct(plain, tagged, flexible, absent, fill)


class Codec:
    """Encoder/decoder of one message at one version."""

    def __init__(self, spec: MessageSpec, version: int):
        self.spec = spec
        self.version = version
        self.flexible = version in spec.flexible

    @cached_property
    def plain(self):
        """The ``construct`` codec: the reference, and the decoder that names what fails to parse
        (built on first use; the server's requests go through ``fast``)."""
        return build_struct(self.spec.fields, self.version, self.flexible)

    @cached_property
    def compiled(self):
        return self.plain.compile()

    @cached_property
    def fast(self) -> FastCodec:
        """The generated straight-line codec (``fastcodec``); this ``construct`` one is its reference."""
        return FastCodec(self.spec, self.version)

    def decode(self, data: bytes, *, compiled: bool = True, strict: bool = True):
        """Decode a whole body. Raises DecodeError. Trailing bytes are an error when ``strict``;
        the server is lenient, as Kafka is (librdkafka pads some Metadata requests). ``compiled``:
        the generated codec, falling back to the reference codec (for its error) when it fails."""
        if compiled:
            try:
                obj, end = self.fast.decode_at(data, 0)
            except Exception:  # hostile bytes: the reference codec names the failing field
                pass
            else:
                if not strict or end == len(data):
                    return obj
        stream = io.BytesIO(data)
        try:
            obj = self.plain.parse_stream(stream)
        except ConstructError:
            raise
        except Exception as exc:
            raise DecodeError(f"{self.spec.name} v{self.version}: {exc}") from exc
        if strict and stream.tell() != len(data):
            raise DecodeError(f"{self.spec.name} v{self.version}: {len(data) - stream.tell()} trailing bytes")
        return obj

    def decode_prefix(self, stream: io.BytesIO):
        """Decode from a stream, leaving it positioned after the message (headers)."""
        return self.plain.parse_stream(stream)

    def encode(self, obj, *, compiled: bool = True) -> bytes:
        """The message's bytes; a bytes/records field may be a list of chunks (joined here)."""
        if compiled:
            return self.fast.encode(obj)
        stream = io.BytesIO()
        self.plain.build_stream(obj, stream)
        return stream.getvalue()

    def encode_into(self, obj, stream) -> None:
        stream.write(self.fast.encode(obj))
