"""Walking a v2 batch's records on append, as Kafka's LogValidator iterates them, without
building them.

Per record the walk reads the length prefix and the timestamp delta (and, when asked, the offset
delta and whether the key is null); it checks that exactly ``records_count`` records fill the
payload. That is what clients depend on: the max timestamp Kafka recomputes from the records, a
count consistent with the header, and keys on compacted topics. A record's inner fields (key,
value, headers) are not checked one by one; readers that decode records cope with bad ones.

Compressed payloads are inflated a piece at a time and only as far as the declared records
need: after the last record one more byte means "records still remaining" (INVALID_RECORD, as
Kafka), so a bomb's padding is never inflated, and no batch may inflate beyond ``limit``
(MESSAGE_TOO_LARGE, kafkaemu's bound; Kafka has none and would try). A codec that rejects the
data answers UNKNOWN_SERVER_ERROR, as Kafka's KafkaException("Failed to decompress record
stream") does.

The walkers are the produce hot path: one Python loop iteration per record, varints of one or two
bytes decoded inline.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from . import compression
from .record_batch import HEADER_SIZE, NO_TIMESTAMP, InvalidBatch

_MIN = -(1 << 63)
# a record body holds at least 6 bytes: attributes, timestamp delta, offset delta, key length,
# value length, header count; its length prefix is zigzag-encoded, so at least 12


@dataclass(slots=True)
class RecordsCheck:
    max_timestamp: int = NO_TIMESTAMP       # Kafka's: the largest record timestamp, at least -1
    sequential: bool = True                 # offset deltas 0, 1, 2, ... (only checked when asked)
    null_keys: list = field(default_factory=list)   # indexes of records without a key (when asked)
    uncompressed_bytes: int = 0             # bytes inflated (0 for an uncompressed batch)


def _varint(buf, pos: int) -> tuple[int, int]:
    """Unsigned (still zigzag-encoded) varint at ``pos``: (raw value, new position)."""
    shift = result = 0
    while True:
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, pos
        shift += 7
        if shift > 63:
            raise InvalidBatch("INVALID_RECORD", "Found invalid record structure (varint too long)")


def _bad_length(z: int) -> InvalidBatch:
    if z & 1:
        return InvalidBatch("INVALID_RECORD", f"Invalid record size: {-((z + 1) >> 1)}")
    return InvalidBatch("INVALID_RECORD", f"Found invalid record structure (a record of {z >> 1} bytes)")


def _walk_timestamps(buf, pos: int, end: int, count: int, maxd: int):
    """Walk up to ``count`` whole records of ``buf[pos:end]``; returns (position after the last
    one walked, how many, largest timestamp delta). Stops early before a record not wholly there."""
    walked = 0
    try:
        for walked in range(count):
            b = buf[pos]
            if b < 0x80:
                z = b
                q = pos + 1
            else:
                c = buf[pos + 1]
                if c < 0x80:
                    z = (b & 0x7F) | (c << 7)
                    q = pos + 2
                else:
                    z, q = _varint(buf, pos)
            if z & 1 or z < 12:
                raise _bad_length(z)
            nxt = q + (z >> 1)
            if nxt > end:
                return pos, walked, maxd
            t = buf[q + 1]                       # past the attributes byte
            if t >= 0x80:
                c = buf[q + 2]
                t = (t & 0x7F) | (c << 7) if c < 0x80 else _varint(buf, q + 1)[0]
            d = (t >> 1) ^ -(t & 1)
            if d > maxd:
                maxd = d
            pos = nxt
    except IndexError:       # a length prefix cut by the end of what is there so far
        return pos, walked, maxd
    return pos, count, maxd


def _walk_fields(buf, pos: int, end: int, count: int, index: int, acc: list, keys: bool):
    """As ``_walk_timestamps``, also reading offset deltas and (``keys``) key nullness. ``acc``
    holds [max delta, sequential, null key indexes] and is updated; ``index`` is the first
    record's index in the batch. Returns (position, records walked)."""
    maxd, sequential, null_keys = acc
    walked = 0
    expected = 2 * index                         # zigzag of the next record's offset delta
    try:
        for walked in range(count):
            b = buf[pos]
            if b < 0x80:
                z = b
                q = pos + 1
            else:
                c = buf[pos + 1]
                if c < 0x80:
                    z = (b & 0x7F) | (c << 7)
                    q = pos + 2
                else:
                    z, q = _varint(buf, pos)
            if z & 1 or z < 12:
                raise _bad_length(z)
            nxt = q + (z >> 1)
            if nxt > end:
                break
            t = buf[q + 1]                       # past the attributes byte
            if t < 0x80:
                q += 2
            else:
                c = buf[q + 2]
                if c < 0x80:
                    t = (t & 0x7F) | (c << 7)
                    q += 3
                else:
                    t, q = _varint(buf, q + 1)
            d = (t >> 1) ^ -(t & 1)
            if d > maxd:
                maxd = d
            o = buf[q]
            if o < 0x80:
                q += 1
            else:
                c = buf[q + 1]
                if c < 0x80:
                    o = (o & 0x7F) | (c << 7)
                    q += 2
                else:
                    o, q = _varint(buf, q)
            if o != expected:
                sequential = False
            expected += 2
            if keys:
                if q >= nxt:
                    raise InvalidBatch("INVALID_RECORD", "Found invalid record structure")
                if buf[q] & 1:                   # a negative key length (zigzag odd): null key
                    null_keys.append(index + walked)
            pos = nxt
        else:
            walked = count
    except IndexError:
        pass
    acc[:] = maxd, sequential, null_keys
    return pos, walked


def check_records(batch, h, *, fields: bool = False, limit: int = compression.DEFAULT_LIMIT) -> RecordsCheck:
    """Walk the records of ``batch`` (header ``h``). ``fields``: also null keys and, always for a
    compressed batch, offset deltas. Raises InvalidBatch as Kafka answers; see the module docstring."""
    count = h.records_count
    acc = [_MIN, True, []]
    out = RecordsCheck()
    if h.codec == compression.NONE:
        end = len(batch)
        if fields:
            pos, walked = _walk_fields(batch, HEADER_SIZE, end, count, 0, acc, True)
        else:
            pos, walked, acc[0] = _walk_timestamps(batch, HEADER_SIZE, end, count, _MIN)
        if walked < count:
            raise InvalidBatch("INVALID_RECORD", "Incorrect declared batch size, premature EOF reached")
        if pos != end:
            raise InvalidBatch("INVALID_RECORD", "Incorrect declared batch size, records still remaining in file")
    else:
        out.uncompressed_bytes = _walk_compressed(batch, h, count, acc, limit, fields)
    maxd, out.sequential, out.null_keys = acc
    if h.log_append_time:                        # every record carries the batch's max timestamp
        out.max_timestamp = max(h.max_timestamp, NO_TIMESTAMP)
    else:
        out.max_timestamp = max(h.base_timestamp + maxd, NO_TIMESTAMP)
    return out


def _walk_compressed(batch, h, count: int, acc: list, limit: int, keys: bool) -> int:
    """Inflate piece by piece, walking records as they complete; returns the bytes inflated."""
    source = compression.pieces(h.codec, memoryview(batch)[HEADER_SIZE:], limit)
    buf = bytearray()
    pos = done = total = 0
    try:
        while True:
            if done < count:
                pos, walked = _walk_fields(buf, pos, len(buf), count - done, done, acc, keys)
                done += walked
            if done == count:
                if pos < len(buf) or next(source, b""):
                    raise InvalidBatch("INVALID_RECORD",
                                       "Incorrect declared batch size, records still remaining in file")
                return total
            part = next(source, None)
            if part is None:
                raise InvalidBatch("INVALID_RECORD", "Incorrect declared batch size, premature EOF reached")
            total += len(part)
            if total > limit:
                raise compression.TooLarge(limit)
            del buf[:pos]
            pos = 0
            buf += part
    except compression.TooLarge as exc:
        raise InvalidBatch("MESSAGE_TOO_LARGE", f"The record batch {exc}, the most this broker inflates "
                           "(max_uncompressed_batch_bytes)") from exc
    except compression.CompressionError as exc:
        raise InvalidBatch("UNKNOWN_SERVER_ERROR", f"Failed to decompress record stream: {exc}") from exc
