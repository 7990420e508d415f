"""Batches the broker compresses itself (re-encoded on append, compaction) are read by every
client: lz4 frames must be what Kafka's Java client reads."""
import os
import struct

import lz4.block

from kafkaemu.storage import compression


def test_lz4_frames_have_independent_blocks_and_no_content_checksum():
    # Kafka's Lz4BlockInputStream refuses linked blocks ("Dependent block stream is unsupported")
    # and inflates each block on its own
    data = b"".join(os.urandom(16).hex().encode() * 50 for _ in range(300))   # ~480 KB, repetitive
    frame = compression.compress(compression.LZ4, data)
    flg = frame[4]
    assert flg & 0x20, "block independence flag"
    assert not flg & 0x04, "content checksum flag"
    pos, out = 7 + (8 if flg & 0x08 else 0), []  # magic, FLG, BD, [content size], header checksum
    while True:
        (size,) = struct.unpack_from("<I", frame, pos)
        pos += 4
        if size == 0:
            break
        block = frame[pos:pos + (size & 0x7FFFFFFF)]
        pos += size & 0x7FFFFFFF
        out.append(block if size & 0x80000000 else lz4.block.decompress(block, uncompressed_size=4 << 20))
    assert len(out) > 1 and b"".join(out) == data
    assert compression.decompress(compression.LZ4, frame) == data
