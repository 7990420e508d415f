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

The walkers are the produce hot path. Producers write batches of records laid out alike (same
length prefix, same varint widths), so the walk goes by runs: one record is read as the run's
template, and the records after it that share its layout are checked a column at a time with
bytes operations that run in C (extended slices of every record's length prefix, timestamp delta,
offset delta and key length; ``translate`` to rank timestamp deltas and flag null keys), taking
the longest prefix that matches. Records that do not fit a run (a changed layout, a varint wider
than three bytes, an odd structure) go through the per-record walkers, which define the result:
both walk the same records and raise the same errors (tests/storage/test_record_walk.py).
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
    """What walking a batch's records found."""
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


# -- walking by runs ----------------------------------------------------------------------------

def _zigzag_ranks():
    """Translate tables ranking a varint's first byte by the zigzag value the varint decodes to
    when its other bytes are fixed: odd raw values (negative) first, the largest raw first, then
    even ones ascending; rank 0 marks a byte whose continuation bit is not the one wanted. Also
    the inverse, rank -> low 7 bits."""
    rank = [0] * 128
    r = 1
    for x in [*range(127, 0, -2), *range(0, 128, 2)]:
        rank[x] = r
        r += 1
    last = bytes(rank[b] if b < 0x80 else 0 for b in range(256))
    more = bytes(rank[b & 0x7F] if b >= 0x80 else 0 for b in range(256))
    unrank = [0] * 129
    for x in range(128):
        unrank[rank[x]] = x
    return last, more, unrank


_RANK_LAST, _RANK_MORE, _UNRANK = _zigzag_ranks()
_ODD = bytes(b & 1 for b in range(256))
# the bytes of record i's offset delta varint (zigzag 2*i), by column; 3-byte ones by i mod 8192
# (built from their 64-byte periods: a start pays for 384 steps, not 24,576)
_OFF_LOW = bytes(((2 * i) & 0x7F) | 0x80 for i in range(64)) * 128    # first byte of a 2- or 3-byte varint
_OFF_HIGH2 = b"".join(bytes((j,)) * 64 for j in range(128))            # second (last) byte of a 2-byte one
_OFF_MID3 = b"".join(bytes((j | 0x80,)) * 64 for j in range(128))     # second byte of a 3-byte one
_OFF_BAND = (0, 64, 8192, 1 << 20)   # record indexes whose offset delta fits in 1, 2, 3 bytes
_MIN_RUN = 8             # after a run shorter than this, the next records go one by one
_ONE_BY_ONE = 64         # ... this many


def _short_varint(buf, p: int):
    """(raw value, width) of the varint at ``p`` if it has at most three bytes, else None."""
    b = buf[p]
    if b < 0x80:
        return b, 1
    c = buf[p + 1]
    if c < 0x80:
        return (b & 0x7F) | (c << 7), 2
    d = buf[p + 2]
    if d < 0x80:
        return (b & 0x7F) | ((c & 0x7F) << 7) | (d << 14), 3
    return None


_UP_TO = [bytes(range(m + 1)) for m in range(256)]


def _max_byte(data) -> int:
    """max(data) of a non-empty bytes-like, without a Python step per byte: keep deleting the bytes up
    to a candidate (the last byte, usually the largest timestamp) until none is left above it."""
    m = data[-1]
    rest = data.translate(None, _UP_TO[m])
    while len(rest) > 32:
        m = rest[-1]
        rest = rest.translate(None, _UP_TO[m])
    return max(rest) if rest else m


def _matching(col, expected) -> int:
    """How many leading bytes of ``col`` equal ``expected``'s (same length)."""
    x = int.from_bytes(col, "big") ^ int.from_bytes(expected, "big")
    return len(col) if not x else len(col) - 1 - (x.bit_length() - 1) // 8


def _run(buf, pos: int, end: int, left: int, i0: int, acc: list, fields: bool, keys: bool):
    """Walk the longest run (at most ``left`` records, index ``i0`` on) laid out as the record at
    ``pos``: (records walked, position after them); (0, pos) when that record is not a plain
    template (the per-record walkers then decide)."""
    if fields and not acc[1]:
        return 0, pos
    try:
        v = _short_varint(buf, pos)
        if v is None:
            return 0, pos
        z, lw = v
        if z & 1 or z < 12:
            return 0, pos
        s = lw + (z >> 1)                        # every record of the run has this size
        n = min(left, (end - pos) // s)
        if n <= 0:
            return 0, pos
        t_at = pos + lw + 1
        v = _short_varint(buf, t_at)
        if v is None:
            return 0, pos
        t, tw = v
        same = [(pos + j, buf[pos + j]) for j in range(lw)] + [(t_at + j, buf[t_at + j]) for j in range(1, tw)]
        if fields:
            o_at = t_at + tw
            v = _short_varint(buf, o_at)
            if v is None or v[0] != 2 * i0:
                return 0, pos
            ow = v[1]
            if (o_at + ow if keys else o_at + ow - 1) >= pos + s:
                return 0, pos
            n = min(n, _OFF_BAND[ow] - i0)
            if ow == 3:
                n = min(n, 8192 - (i0 & 8191))
                same.append((o_at + 2, buf[o_at + 2]))
        elif t_at + tw - 1 >= pos + s:
            return 0, pos
    except IndexError:
        return 0, pos
    stop = pos + n * s                           # every column below has n bytes; n only shrinks
    ok = n
    for at, byte in same:
        col = buf[at:stop:s]
        ok = min(ok, n - len(col.lstrip(bytes((byte,)))))
    if fields:
        if ow == 1:
            ok = min(ok, _matching(buf[o_at:stop:s], bytes(range(2 * i0, 2 * (i0 + n), 2))))
        else:
            j = i0 & 8191 if ow == 3 else i0
            ok = min(ok, _matching(buf[o_at:stop:s], _OFF_LOW[j:j + n]),
                     _matching(buf[o_at + 1:stop:s], (_OFF_MID3 if ow == 3 else _OFF_HIGH2)[j:j + n]))
    n = ok
    stop = pos + n * s
    ranks = buf[t_at:stop:s].translate(_RANK_MORE if tw > 1 else _RANK_LAST)
    bad = ranks.find(0)
    if bad >= 0:
        n = bad
        if not n:
            return 0, pos
        stop = pos + n * s
        ranks = ranks[:n]
    raw = (t >> 7 << 7) | _UNRANK[_max_byte(ranks)]
    d = (raw >> 1) ^ -(raw & 1)
    if d > acc[0]:
        acc[0] = d
    if keys:
        nulls = buf[o_at + ow:stop:s].translate(_ODD)
        k = nulls.find(1)
        while k >= 0:
            acc[2].append(i0 + k)
            k = nulls.find(1, k + 1)
    return n, stop


def _walk_runs(buf, pos: int, end: int, count: int, index: int, acc: list, fields: bool, keys: bool = False):
    """As ``_walk_timestamps`` (``fields`` false) or ``_walk_fields`` (true), by runs of records laid
    out alike; ``acc`` as ``_walk_fields``'. Returns (position, records walked)."""
    if count < 2 * _MIN_RUN:                     # too few records for runs to pay
        if fields:
            return _walk_fields(buf, pos, end, count, index, acc, keys)
        pos, walked, acc[0] = _walk_timestamps(buf, pos, end, count, acc[0])
        return pos, walked
    if type(buf) not in (bytes, bytearray):      # columns are sliced with bytes methods
        buf = bytes(buf)
    walked = 0
    while walked < count:
        n, pos = _run(buf, pos, end, count - walked, index + walked, acc, fields, keys)
        walked += n
        if n >= _MIN_RUN or walked == count:
            continue
        want = min(_ONE_BY_ONE, count - walked)
        if fields:
            pos, w = _walk_fields(buf, pos, end, want, index + walked, acc, keys)
        else:
            pos, w, acc[0] = _walk_timestamps(buf, pos, end, want, acc[0])
        walked += w
        if w < want:
            break
    return pos, walked


def check_records(batch, h, *, fields: bool = False, limit: int = compression.DEFAULT_LIMIT) -> RecordsCheck:
    """Walk the records of ``batch`` (header ``h``). ``fields``: also null keys and, always for a
    compressed batch, offset deltas. Raises InvalidBatch as Kafka answers; see the module docstring."""
    count = h.records_count
    acc = [_MIN, True, []]
    out = RecordsCheck()
    if h.codec == compression.NONE:
        end = len(batch)
        pos, walked = _walk_runs(batch, HEADER_SIZE, end, count, 0, acc, fields, fields)
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
    buf = b""
    pos = done = total = 0
    try:
        while True:
            if done < count:
                pos, walked = _walk_runs(buf, pos, len(buf), count - done, done, acc, True, keys)
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
            buf = part if pos >= len(buf) else buf[pos:] + part   # no copy when nothing is left over
            pos = 0
    except compression.TooLarge as exc:
        raise InvalidBatch("MESSAGE_TOO_LARGE", f"The record batch {exc}, the most this broker inflates "
                           "(max_uncompressed_batch_bytes)") from exc
    except compression.CompressionError as exc:
        raise InvalidBatch("UNKNOWN_SERVER_ERROR", f"Failed to decompress record stream: {exc}") from exc
