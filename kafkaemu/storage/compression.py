"""Record-batch compression codecs, by Kafka's attribute code.

Decompression is incremental and bounded: ``pieces`` yields the output a piece at a time, only
as the reader pulls it, so a reader that has what it needs (a batch's declared records) stops
without inflating the rest, and ``decompress`` refuses to produce more than a limit
(``TooLarge``). A compression bomb therefore costs at most the limit, never its full expansion.

gzip uses the standard library (zlib); lz4 frames the ``lz4`` package; zstd ``zstandard``;
snappy ``cramjam``. Snappy comes in two shapes on the wire: raw blocks (librdkafka may send
these) and the xerial framing the Java client and librdkafka's default use; both are read, and
each block's declared length is checked against the limit before it is inflated. Compression
(``compress``) is only ever applied to data the broker built, so it is not bounded.
"""
from __future__ import annotations

import struct
import zlib
from typing import Iterator


NONE, GZIP, SNAPPY, LZ4, ZSTD = 0, 1, 2, 3, 4
NAMES = {NONE: "none", GZIP: "gzip", SNAPPY: "snappy", LZ4: "lz4", ZSTD: "zstd"}

PIECE = 1 << 20                        # bytes inflated per step
DEFAULT_LIMIT = 32 * 1024 * 1024       # BrokerConfig.max_uncompressed_batch_bytes' default

_XERIAL_MAGIC = b"\x82SNAPPY\x00"
_GZIP_MAGIC = b"\x1f\x8b"


class CompressionError(Exception):
    """The codec rejects the data (Kafka: a KafkaException from the decompressing stream)."""


class TooLarge(Exception):
    """Decompressing would produce more than the limit."""

    def __init__(self, limit: int):
        super().__init__(f"decompresses to more than {limit} bytes")
        self.limit = limit


def _gzip_pieces(data, piece: int) -> Iterator[bytes]:
    # Java's GZIPInputStream reads concatenated members and ignores anything else after a member
    d = zlib.decompressobj(47)   # 32 + 15: gzip or zlib header
    buf = data
    while True:
        out = d.decompress(buf, piece)
        buf = d.unconsumed_tail
        if out:
            yield out
        if d.eof:
            rest = d.unused_data
            if rest[:2] != _GZIP_MAGIC:
                return
            d, buf = zlib.decompressobj(47), rest
        elif not out and not buf:
            raise CompressionError("truncated gzip stream")


def _lz4_pieces(data, piece: int) -> Iterator[bytes]:
    import lz4.frame   # each codec's library is imported by its first batch
    d = lz4.frame.LZ4FrameDecompressor()
    out = d.decompress(data, piece)
    while True:
        if out:
            yield out
        if d.eof:
            return
        if not out and d.needs_input:
            raise CompressionError("truncated lz4 frame")
        out = d.decompress(b"", piece)


def _zstd_pieces(data, piece: int) -> Iterator[bytes]:
    import zstandard
    reader = zstandard.ZstdDecompressor().stream_reader(data, read_across_frames=True)
    while True:
        out = reader.read(piece)
        if not out:
            return
        yield out


def _snappy_block(block, limit: int) -> bytes:
    import cramjam
    if cramjam.snappy.decompress_raw_len(block) > limit:
        raise TooLarge(limit)
    return bytes(cramjam.snappy.decompress_raw(block))


def _snappy_pieces(data, limit: int) -> Iterator[bytes]:
    if bytes(data[:8]) != _XERIAL_MAGIC:
        yield _snappy_block(data, limit)
        return
    # 8-byte magic, int32 version, int32 compatible version, then [int32 length][raw block]*
    pos, end = 16, len(data)
    while pos < end:
        if end - pos < 4:
            raise CompressionError("truncated xerial snappy block")
        (n,) = struct.unpack_from(">i", data, pos)
        pos += 4
        if n < 0 or pos + n > end:
            raise CompressionError("truncated xerial snappy block")
        yield _snappy_block(data[pos:pos + n], limit)
        pos += n


def pieces(codec: int, data, limit: int = DEFAULT_LIMIT, piece: int = PIECE) -> Iterator[bytes]:
    """The decompressed bytes of ``data`` as consecutive pieces, inflated only as they are pulled.
    ``limit`` only guards snappy's whole-block allocations; callers count what they pull."""
    if codec == NONE:
        if len(data):
            yield bytes(data)
        return
    if codec == GZIP:
        source = _gzip_pieces(data, piece)
    elif codec == SNAPPY:
        source = _snappy_pieces(data, limit)
    elif codec == LZ4:
        source = _lz4_pieces(data, piece)
    elif codec == ZSTD:
        source = _zstd_pieces(data, piece)
    else:
        raise CompressionError(f"unknown compression codec {codec}")
    try:
        yield from source
    except (CompressionError, TooLarge):
        raise
    except Exception as exc:  # every codec library raises its own type
        raise CompressionError(f"{NAMES[codec]}: {exc}") from exc


def decompress(codec: int, data, limit: int = DEFAULT_LIMIT) -> bytes:
    """All of ``data`` decompressed; TooLarge as soon as that would exceed ``limit`` bytes."""
    out = bytearray()
    for part in pieces(codec, data, limit):
        out += part
        if len(out) > limit:
            raise TooLarge(limit)
    return bytes(out)


def compress(codec: int, data: bytes) -> bytes:
    if codec == NONE:
        return data
    import cramjam
    import lz4.frame
    if codec == GZIP:
        import gzip
        return gzip.compress(data, compresslevel=6, mtime=0)
    if codec == SNAPPY:
        # xerial framing, the shape every Kafka client reads
        raw = bytes(cramjam.snappy.compress_raw(data))
        return _XERIAL_MAGIC + struct.pack(">iii", 1, 1, len(raw)) + raw
    if codec == LZ4:
        # independent blocks, no content checksum or size: what Kafka's Java client writes, the only
        # shape its Lz4BlockInputStream reads ("Dependent block stream is unsupported"), and what
        # librdkafka writes
        return lz4.frame.compress(data, block_linked=False, content_checksum=False, store_size=False)
    if codec == ZSTD:
        return bytes(cramjam.zstd.compress(data))
    raise CompressionError(f"unknown compression codec {codec}")
