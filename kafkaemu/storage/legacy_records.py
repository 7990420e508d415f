"""Legacy message sets (magic 0 and 1): read them on produce (converted to v2, as Kafka 3.9 does
for the old Produce v0-2 clients) and write them for Fetch v0-3 (down-conversion).

Message layout: offset int64, size int32, crc uint32 (CRC-32 of magic..end), magic int8,
attributes int8 (codec in bits 0-2, v1 timestamp type in bit 3), timestamp int64 (v1 only),
key bytes, value bytes. A compressed message's value is a compressed inner message set; in v1
the inner offsets are relative and the wrapper carries the last inner offset.
"""
from __future__ import annotations

import struct
import zlib

from . import compression
from .record_batch import InvalidBatch, NO_TIMESTAMP, build_batch, iter_records, parse_header

_MSG_HEAD = struct.Struct(">qiIbb")
TIMESTAMP_TYPE_BIT = 0x08


def _read_bytes(buf, pos: int) -> tuple[bytes | None, int]:
    (n,) = struct.unpack_from(">i", buf, pos)
    pos += 4
    if n < 0:
        return None, pos
    if pos + n > len(buf):
        raise InvalidBatch("CORRUPT_MESSAGE", "truncated legacy message")
    return bytes(buf[pos:pos + n]), pos + n


def _messages(buf, budget: list, depth: int = 0):
    """Yield (magic, timestamp, key, value, codec) for every message, unwrapping compressed ones.
    ``budget`` is [bytes still allowed to inflate, bytes inflated]; exceeding it is TooLarge."""
    pos, end = 0, len(buf)
    while end - pos >= 12:
        (size,) = struct.unpack_from(">i", buf, pos + 8)
        if pos + 12 + size > end:
            return  # a partial trailing message is ignored, as Kafka's iterator does
        if size < 14:
            raise InvalidBatch("CORRUPT_MESSAGE", f"legacy message size {size} too small")
        _, _, crc, magic, attrs = _MSG_HEAD.unpack_from(buf, pos)
        if zlib.crc32(memoryview(buf)[pos + 16:pos + 12 + size]) != crc:
            raise InvalidBatch("CORRUPT_MESSAGE", "legacy message CRC mismatch")
        p = pos + 18  # past offset, size, crc, magic, attributes
        ts = NO_TIMESTAMP
        if magic == 1:
            (ts,) = struct.unpack_from(">q", buf, p)
            p += 8
        elif magic != 0:
            raise InvalidBatch("CORRUPT_MESSAGE", f"invalid legacy magic {magic}")
        key, p = _read_bytes(buf, p)
        value, p = _read_bytes(buf, p)
        codec = attrs & 0x07
        if codec:
            if depth:
                raise InvalidBatch("CORRUPT_MESSAGE", "nested compressed legacy messages")
            if value is None:
                raise InvalidBatch("INVALID_RECORD", "compressed legacy message without a value")
            try:
                inner = compression.decompress(codec, value, budget[0] - budget[1])
            except compression.TooLarge as exc:
                raise InvalidBatch("MESSAGE_TOO_LARGE", f"The message set {exc}, the most this broker "
                                   "inflates (max_uncompressed_batch_bytes)") from exc
            except compression.CompressionError as exc:
                raise InvalidBatch("UNKNOWN_SERVER_ERROR", f"Failed to decompress record stream: {exc}") from exc
            budget[1] += len(inner)
            for m in _messages(inner, budget, depth + 1):
                yield m[0], m[1], m[2], m[3], codec
        else:
            yield magic, ts, key, value, 0
        pos += 12 + size


def to_v2_batch(buf, limit: int = compression.DEFAULT_LIMIT,
                codec: int | None = None) -> tuple[bytes, int, int, int]:
    """Convert a legacy message set to one RecordBatch v2, in ``codec`` (None: the message set's
    own); compressed messages may inflate to ``limit`` bytes in all. Returns (batch, record count,
    bytes inflated, the message set's codec)."""
    records, source = [], 0
    budget = [limit, 0]
    for magic, ts, key, value, c in _messages(buf, budget):
        source = source or c
        records.append((key, value, (), ts))
    if not records:
        raise InvalidBatch("INVALID_RECORD", "legacy message set without a complete message")
    return build_batch(records, codec=source if codec is None else codec), len(records), budget[1], source


def _encode_message(offset: int, magic: int, attrs: int, ts: int, key, value) -> bytes:
    body = bytearray(struct.pack(">bb", magic, attrs))
    if magic == 1:
        body += struct.pack(">q", ts)
    for f in (key, value):
        if f is None:
            body += b"\xff\xff\xff\xff"
        else:
            body += struct.pack(">i", len(f)) + f
    crc = zlib.crc32(body)
    return struct.pack(">qiI", offset, len(body) + 4, crc) + bytes(body)


def down_convert(batch, magic: int, max_bytes: int | None = None, limit: int = compression.DEFAULT_LIMIT) -> bytes:
    """One stored v2 batch as a legacy message set of ``magic`` (headers are dropped, as Kafka does).
    With ``max_bytes``, conversion stops once the messages reach it (always one message, so the
    consumer progresses): a batch that inflates far beyond its stored size is not converted whole
    into one response."""
    h = parse_header(batch)
    if h.is_control:
        return b""
    ts_attr = TIMESTAMP_TYPE_BIT if (magic == 1 and h.log_append_time) else 0
    budget = max_bytes if max_bytes is not None else 0x7FFFFFFF
    recs, size = [], 0
    try:
        for r in iter_records(batch, limit):
            if recs and size >= budget:
                break
            recs.append(r)
            size += 34 + len(r.key or b"") + len(r.value or b"")   # a v1 message with its log overhead
    except (InvalidBatch, struct.error, IndexError, ValueError):
        return b""  # records a client stored that do not decode cannot be converted
    # zstd has no legacy form and magic-0 lz4 used a broken frame checksum: send those uncompressed
    if h.codec == compression.NONE or h.codec == compression.ZSTD or (h.codec == compression.LZ4 and magic == 0):
        return b"".join(_encode_message(r.offset, magic, ts_attr, r.timestamp, r.key, r.value) for r in recs)
    inner = b"".join(
        _encode_message(r.offset - h.base_offset if magic == 1 else r.offset, magic, ts_attr, r.timestamp,
                        r.key, r.value) for r in recs)
    wrapper_ts = h.max_timestamp
    return _encode_message(recs[-1].offset if len(recs) < h.records_count else h.last_offset, magic,
                           h.codec | ts_attr, wrapper_ts, None, compression.compress(h.codec, inner))
