"""Record-batch compression codecs, by Kafka's attribute code.

gzip uses the standard library (zlib); snappy, lz4 and zstd use ``cramjam`` (one Rust-backed,
well-kept library for all three). Snappy comes in two shapes on the wire: raw blocks (librdkafka
may send these) and the xerial framing the Java client and librdkafka's default use; both are read.
"""
from __future__ import annotations

import gzip
import struct
import zlib

import cramjam

NONE, GZIP, SNAPPY, LZ4, ZSTD = 0, 1, 2, 3, 4
NAMES = {NONE: "none", GZIP: "gzip", SNAPPY: "snappy", LZ4: "lz4", ZSTD: "zstd"}

_XERIAL_MAGIC = b"\x82SNAPPY\x00"


class CompressionError(Exception):
    pass


def _snappy_decompress(data: bytes) -> bytes:
    if data[:8] == _XERIAL_MAGIC:
        # 8-byte magic, int32 version, int32 compatible version, then [int32 length][raw block]*
        pos, out = 16, []
        end = len(data)
        while pos < end:
            (n,) = struct.unpack_from(">i", data, pos)
            pos += 4
            if n < 0 or pos + n > end:
                raise CompressionError("truncated xerial snappy block")
            out.append(bytes(cramjam.snappy.decompress_raw(data[pos:pos + n])))
            pos += n
        return b"".join(out)
    return bytes(cramjam.snappy.decompress_raw(data))


def decompress(codec: int, data: bytes) -> bytes:
    try:
        if codec == GZIP:
            return zlib.decompress(data, 47)  # 32 + 15: gzip or zlib header, as Java's GZIPInputStream accepts gzip
        if codec == SNAPPY:
            return _snappy_decompress(data)
        if codec == LZ4:
            return bytes(cramjam.lz4.decompress(data))
        if codec == ZSTD:
            return bytes(cramjam.zstd.decompress(data))
    except CompressionError:
        raise
    except Exception as exc:  # every codec library raises its own type
        raise CompressionError(f"{NAMES.get(codec, codec)}: {exc}") from exc
    if codec == NONE:
        return data
    raise CompressionError(f"unknown compression codec {codec}")


def compress(codec: int, data: bytes) -> bytes:
    if codec == NONE:
        return data
    if codec == GZIP:
        return gzip.compress(data, compresslevel=6, mtime=0)
    if codec == SNAPPY:
        # xerial framing, the shape every Kafka client reads
        raw = bytes(cramjam.snappy.compress_raw(data))
        return _XERIAL_MAGIC + struct.pack(">iii", 1, 1, len(raw)) + raw
    if codec == LZ4:
        return bytes(cramjam.lz4.compress(data))
    if codec == ZSTD:
        return bytes(cramjam.zstd.compress(data))
    raise CompressionError(f"unknown compression codec {codec}")
