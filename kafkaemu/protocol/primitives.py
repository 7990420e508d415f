"""Kafka's wire primitives: bounds-checked reads and writes of lengths, varints, strings, bytes,
arrays and tagged fields, shared by the reference codec (``constructs``) and the generated one
(``fastcodec``). A truncated or hostile body raises :class:`DecodeError` (a ValueError; not a
``construct`` class, so that the generated codecs never import ``construct``).
"""
from __future__ import annotations

import struct

_I16 = struct.Struct(">h")
_I32 = struct.Struct(">i")
_ONE_BYTE = [bytes([n]) for n in range(0x80)]


class DecodeError(ValueError):
    pass


def read_exact(io, n: int) -> bytes:
    if n < 0:
        raise DecodeError(f"negative length {n}")
    if n > 0x7FFFFFFF:  # no Kafka length exceeds an int32
        raise DecodeError(f"length {n} out of range")
    data = io.read(n)
    if len(data) != n:
        raise DecodeError(f"truncated: wanted {n} bytes, got {len(data)}")
    return data


def read_uvarint(io) -> int:
    b = io.read(1)
    if not b:
        raise DecodeError("truncated varint")
    result = b[0]
    if result < 0x80:  # the common case: one byte
        return result
    result &= 0x7F
    shift = 7
    while True:
        b = io.read(1)
        if not b:
            raise DecodeError("truncated varint")
        byte = b[0]
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result
        shift += 7
        if shift > 28:  # an unsigned varint32 has at most 5 bytes, as Kafka's ByteUtils reads it
            raise DecodeError("varint too long")


def uvarint_bytes(n: int) -> bytes:
    if 0 <= n < 0x80:
        return _ONE_BYTE[n]
    if n < 0:
        raise DecodeError(f"negative varint {n}")
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _read_len(io, compact: bool, wide: bool) -> int:
    if compact:
        return read_uvarint(io) - 1
    return (_I32 if wide else _I16).unpack(read_exact(io, 4 if wide else 2))[0]


def _write_len(io, n: int, compact: bool, wide: bool) -> None:
    if compact:
        io.write(uvarint_bytes(n + 1))
    else:
        io.write((_I32 if wide else _I16).pack(n))


def read_string(io, compact: bool, nullable: bool):
    n = _read_len(io, compact, False)
    if n < 0:
        if nullable and n == -1:
            return None
        raise DecodeError(f"invalid string length {n}")
    try:
        return read_exact(io, n).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DecodeError(f"string is not UTF-8: {exc}") from None


def write_string(io, obj, compact: bool, nullable: bool) -> None:
    if obj is None:
        if nullable:
            _write_len(io, -1, compact, False)
            return
        obj = ""
    data = obj.encode("utf-8")
    if len(data) > 0x7FFF and not compact:
        raise DecodeError("string longer than 32767 bytes")
    _write_len(io, len(data), compact, False)
    io.write(data)


def read_bytes(io, compact: bool, nullable: bool):
    n = _read_len(io, compact, True)
    if n < 0:
        if nullable and n == -1:
            return None
        raise DecodeError(f"invalid bytes length {n}")
    return read_exact(io, n)


def write_bytes(io, obj, compact: bool, nullable: bool) -> None:
    if obj is None:
        if nullable:
            _write_len(io, -1, compact, True)
            return
        obj = b""
    if isinstance(obj, (list, tuple)):  # chunks (a fetch's stored batches): their concatenation
        _write_len(io, sum(map(len, obj)), compact, True)
        for chunk in obj:
            io.write(chunk)
        return
    _write_len(io, len(obj), compact, True)
    io.write(obj)


def read_array_len(io, compact: bool, nullable: bool):
    n = _read_len(io, compact, True)
    if n < 0:
        if nullable and n == -1:
            return None
        raise DecodeError(f"invalid array length {n}")
    return n


def write_array_len(io, obj, compact: bool, nullable: bool) -> None:
    if obj is None:
        if nullable:
            _write_len(io, -1, compact, True)
            return
        obj = ()
    _write_len(io, len(obj), compact, True)


def read_tagged_header(io) -> tuple[int, bytes]:
    tag = read_uvarint(io)
    size = read_uvarint(io)
    return tag, read_exact(io, size)


def write_tagged(io, entries: list[tuple[int, bytes]]) -> None:
    io.write(uvarint_bytes(len(entries)))
    for tag, data in entries:
        io.write(uvarint_bytes(tag))
        io.write(uvarint_bytes(len(data)))
        io.write(data)


def write_uuid(io, obj):
    if len(obj) != 16:
        raise DecodeError(f"uuid must be 16 bytes, got {len(obj)}")
    io.write(obj)
    return obj
