"""RecordBatch v2: a header view over the raw bytes, records decoding, and a builder.

Layout (big-endian), offsets into the batch::

    0  base_offset int64          <- rewritten by the broker (outside the CRC)
    8  batch_length int32         (bytes after this field)
   12  partition_leader_epoch int32  <- rewritten by the broker (outside the CRC)
   16  magic int8 (2)
   17  crc uint32 (CRC-32C of everything from offset 21 to the end)
   21  attributes int16  (bits 0-2 codec, 3 timestamp type, 4 transactional, 5 control)
   23  last_offset_delta int32
   27  base_timestamp int64
   35  max_timestamp int64
   43  producer_id int64
   51  producer_epoch int16
   53  base_sequence int32
   57  records_count int32
   61  records (possibly compressed)

Offsets are assigned by rewriting the first and third fields in place (outside the CRC); the max
timestamp, timestamp type and CRC are rewritten when validation recomputes them
(``set_max_timestamp``). Decoding (``iter_records``) inflates at most a given limit.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Iterator

from . import compression



def _crc32c(data) -> int:
    """CRC-32C, from the crc32c package imported on first use: its import reads the package's own
    metadata (importlib.metadata, several ms), which a start that has no batch to check need not
    pay. The first call rebinds the name to the C function."""
    global _crc32c
    from crc32c import crc32c as checksum
    _crc32c = checksum
    return checksum(data)


HEADER_SIZE = 61
LOG_OVERHEAD = 12          # base_offset + batch_length
MIN_BATCH_LENGTH = 14      # Kafka's Records.MIN_RECORD_OVERHEAD, the smallest legal length field
MAGIC_OFFSET = 16
CRC_OFFSET = 17
ATTRIBUTES_OFFSET = 21
MAX_TIMESTAMP_OFFSET = 35

CODEC_MASK = 0x07
TIMESTAMP_TYPE_BIT = 0x08   # 1 = LogAppendTime
TRANSACTIONAL_BIT = 0x10
CONTROL_BIT = 0x20

NO_TIMESTAMP = -1

_HEADER = struct.Struct(">qiibIhiqqqhii")
_BASE_AND_EPOCH = struct.Struct(">q")
_EPOCH = struct.Struct(">i")
_Q = struct.Struct(">q")


class InvalidBatch(Exception):
    """Input that Kafka rejects; ``code_name`` names the ErrorCode member it answers with.
    ``request_wide``: Kafka meets it while reading the request's batches (ByteBufferLogInputStream),
    before any partition's append, and fails the request with the exception's message."""

    def __init__(self, code_name: str, message: str, request_wide: bool = False):
        super().__init__(message)
        self.code_name = code_name
        self.request_wide = request_wide


@dataclass(slots=True)
class BatchHeader:
    """The fixed fields of a v2 record batch's header, as read from its first 61 bytes."""
    base_offset: int
    batch_length: int
    partition_leader_epoch: int
    magic: int
    crc: int
    attributes: int
    last_offset_delta: int
    base_timestamp: int
    max_timestamp: int
    producer_id: int
    producer_epoch: int
    base_sequence: int
    records_count: int

    @property
    def size(self) -> int:
        return self.batch_length + LOG_OVERHEAD

    @property
    def codec(self) -> int:
        return self.attributes & CODEC_MASK

    @property
    def log_append_time(self) -> bool:
        return bool(self.attributes & TIMESTAMP_TYPE_BIT)

    @property
    def is_transactional(self) -> bool:
        return bool(self.attributes & TRANSACTIONAL_BIT)

    @property
    def is_control(self) -> bool:
        return bool(self.attributes & CONTROL_BIT)

    @property
    def last_offset(self) -> int:
        return self.base_offset + self.last_offset_delta

    @property
    def last_sequence(self) -> int:
        if self.base_sequence < 0:
            return -1
        return (self.base_sequence + self.last_offset_delta) & 0x7FFFFFFF


def parse_header(buf, pos: int = 0) -> BatchHeader:
    return BatchHeader(*_HEADER.unpack_from(buf, pos))


def crc_ok(batch) -> bool:
    """CRC-32C over attributes..end equals the stored CRC."""
    (stored,) = struct.unpack_from(">I", batch, CRC_OFFSET)
    return _crc32c(memoryview(batch)[ATTRIBUTES_OFFSET:]) == stored


def rewrite_offsets(batch: bytearray, base_offset: int, leader_epoch: int) -> None:
    """Set base offset and partition leader epoch in place; both lie outside the CRC."""
    _BASE_AND_EPOCH.pack_into(batch, 0, base_offset)
    _EPOCH.pack_into(batch, 12, leader_epoch)


def set_max_timestamp(batch: bytearray, log_append_time: bool, max_timestamp: int) -> bool:
    """Kafka's DefaultRecordBatch.setMaxTimestamp: set the timestamp type and max timestamp and
    recompute the CRC, unless both are already so. Returns whether the batch changed."""
    (attrs,) = struct.unpack_from(">h", batch, ATTRIBUTES_OFFSET)
    (current,) = _Q.unpack_from(batch, MAX_TIMESTAMP_OFFSET)
    if bool(attrs & TIMESTAMP_TYPE_BIT) == log_append_time and current == max_timestamp:
        return False
    attrs = (attrs | TIMESTAMP_TYPE_BIT) if log_append_time else (attrs & ~TIMESTAMP_TYPE_BIT)
    struct.pack_into(">h", batch, ATTRIBUTES_OFFSET, attrs)
    _Q.pack_into(batch, MAX_TIMESTAMP_OFFSET, max_timestamp)
    struct.pack_into(">I", batch, CRC_OFFSET, _crc32c(memoryview(batch)[ATTRIBUTES_OFFSET:]))
    return True


def set_log_append_time(batch: bytearray, now_ms: int) -> None:
    """Mark the batch LogAppendTime with max timestamp ``now_ms`` and recompute the CRC (as Kafka does)."""
    set_max_timestamp(batch, True, now_ms)


def split_batches(data) -> Iterator[tuple[int, int, int]]:
    """Yield (position, size, magic) for every complete batch or legacy message in ``data``.

    Mirrors Kafka's ByteBufferLogInputStream: a trailing partial batch ends the iteration silently;
    an impossible length or magic raises CORRUPT_MESSAGE.
    """
    pos, end = 0, len(data)
    while end - pos >= LOG_OVERHEAD:
        (length,) = struct.unpack_from(">i", data, pos + 8)
        if length < MIN_BATCH_LENGTH:
            raise InvalidBatch("CORRUPT_MESSAGE", f"Record size {length} is less than the minimum record overhead "
                               f"({MIN_BATCH_LENGTH})", request_wide=True)
        if end - pos < MAGIC_OFFSET + 1:
            return
        magic = data[pos + MAGIC_OFFSET]
        if magic > 2:
            raise InvalidBatch("CORRUPT_MESSAGE", f"Invalid magic found in record: {magic - 256 if magic > 127 else magic}",
                               request_wide=True)
        size = length + LOG_OVERHEAD
        if end - pos < size:
            return
        yield pos, size, magic
        pos += size


# -- varints -------------------------------------------------------------------------------------

def read_varint(buf, pos: int) -> tuple[int, int]:
    """Zigzag varint (as Kafka records use) at ``pos``; returns (value, new position)."""
    shift = result = 0
    while True:
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return (result >> 1) ^ -(result & 1), pos
        shift += 7
        if shift > 63:
            raise InvalidBatch("CORRUPT_MESSAGE", "varint too long")


def write_varint(out: bytearray, value: int) -> None:
    v = (value << 1) ^ (value >> 63)
    v &= 0xFFFFFFFFFFFFFFFF
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)


# -- records -------------------------------------------------------------------------------------

@dataclass(slots=True)
class Record:
    """One record of a batch, with its absolute offset and timestamp."""
    offset: int
    timestamp: int
    key: bytes | None
    value: bytes | None
    headers: list[tuple[str, bytes | None]]


def _read_nullable(buf, pos: int) -> tuple[bytes | None, int]:
    n, pos = read_varint(buf, pos)
    if n < 0:
        return None, pos
    return bytes(buf[pos:pos + n]), pos + n


def records_payload(batch, limit: int = compression.DEFAULT_LIMIT) -> bytes:
    """The batch's record bytes, decompressed (at most ``limit`` bytes, else MESSAGE_TOO_LARGE)."""
    h = parse_header(batch)
    body = memoryview(batch)[HEADER_SIZE:h.size]
    if h.codec == compression.NONE:
        return bytes(body)
    try:
        return compression.decompress(h.codec, body, limit)
    except compression.TooLarge as exc:
        raise InvalidBatch("MESSAGE_TOO_LARGE", f"record batch {exc}") from exc
    except compression.CompressionError as exc:
        raise InvalidBatch("CORRUPT_MESSAGE", str(exc)) from exc


def iter_records(batch, limit: int = compression.DEFAULT_LIMIT) -> Iterator[Record]:
    """Decode every record of one v2 batch (decompressing when needed, at most ``limit`` bytes)."""
    h = parse_header(batch)
    buf = records_payload(batch, limit)
    pos = 0
    try:
        for _ in range(h.records_count):
            length, pos = read_varint(buf, pos)
            end = pos + length
            pos += 1  # record attributes, unused
            ts_delta, pos = read_varint(buf, pos)
            off_delta, pos = read_varint(buf, pos)
            key, pos = _read_nullable(buf, pos)
            value, pos = _read_nullable(buf, pos)
            n_headers, pos = read_varint(buf, pos)
            headers = []
            for _ in range(n_headers):
                hk, pos = _read_nullable(buf, pos)
                hv, pos = _read_nullable(buf, pos)
                headers.append(((hk or b"").decode("utf-8", "replace"), hv))
            if pos != end:
                raise InvalidBatch("CORRUPT_MESSAGE", "record length does not match its contents")
            ts = h.max_timestamp if h.log_append_time else h.base_timestamp + ts_delta
            yield Record(h.base_offset + off_delta, ts, key, value, headers)
    except IndexError as exc:
        raise InvalidBatch("CORRUPT_MESSAGE", "truncated record") from exc


# -- builder -------------------------------------------------------------------------------------

def encode_records(records, base_timestamp: int) -> bytes:
    out = bytearray()
    body = bytearray()
    for i, rec in enumerate(records):
        key, value, headers, ts = rec[0], rec[1], rec[2], rec[3]
        delta = rec[4] if len(rec) > 4 else i
        body.clear()
        body.append(0)
        write_varint(body, ts - base_timestamp)
        write_varint(body, delta)
        for field in (key, value):
            if field is None:
                write_varint(body, -1)
            else:
                write_varint(body, len(field))
                body += field
        headers = headers or ()
        write_varint(body, len(headers))
        for hk, hv in headers:
            hkb = hk.encode() if isinstance(hk, str) else hk
            write_varint(body, len(hkb))
            body += hkb
            if hv is None:
                write_varint(body, -1)
            else:
                write_varint(body, len(hv))
                body += hv
        write_varint(out, len(body))
        out += body
    return bytes(out)


def build_batch(records, *, base_offset: int = 0, codec: int = compression.NONE,
                producer_id: int = -1, producer_epoch: int = -1, base_sequence: int = -1,
                partition_leader_epoch: int = -1, log_append_time: bool = False,
                transactional: bool = False, control: bool = False,
                last_offset_delta: int | None = None) -> bytes:
    """Encode one RecordBatch v2.

    ``records``: (key, value, headers, timestamp_ms) tuples, optionally with a fifth item, the
    offset delta (compaction keeps original deltas). Headers are (str|bytes key, bytes|None value).
    """
    if not records:
        raise ValueError("a batch holds at least one record")
    timestamps = [r[3] for r in records]
    base_ts = timestamps[0]
    max_ts = max(timestamps)
    payload = compression.compress(codec, encode_records(records, base_ts))
    if last_offset_delta is None:
        last_offset_delta = records[-1][4] if len(records[-1]) > 4 else len(records) - 1
    attrs = codec | (TIMESTAMP_TYPE_BIT if log_append_time else 0) \
        | (TRANSACTIONAL_BIT if transactional else 0) | (CONTROL_BIT if control else 0)
    buf = bytearray(_HEADER.pack(base_offset, HEADER_SIZE - LOG_OVERHEAD + len(payload), partition_leader_epoch,
                                 2, 0, attrs, last_offset_delta, base_ts, max_ts, producer_id, producer_epoch,
                                 base_sequence, len(records)))
    buf += payload
    struct.pack_into(">I", buf, CRC_OFFSET, _crc32c(memoryview(buf)[ATTRIBUTES_OFFSET:]))
    return bytes(buf)


# zigzag varints of 0..63: one byte each (the offset deltas of small batches, short keys)
_SMALL_VARINTS = [bytes(((n << 1),)) for n in range(64)]
_NULL_VARINT = b"\x01"
# a batch header in two: what precedes the CRC, and what the CRC covers
_HEADER_TO_CRC = struct.Struct(">qiibI")
_HEADER_AFTER_CRC = struct.Struct(">hiqqqhii")


def _varint(n: int) -> bytes:
    """The zigzag varint of ``n`` >= 0 (a length or an offset delta)."""
    if n < 64:
        return _SMALL_VARINTS[n]
    v = n << 1
    if v < 0x4000:
        return bytes(((v & 0x7F) | 0x80, v >> 7))
    out = bytearray()
    write_varint(out, n)
    return bytes(out)


def build_keyed_batch(records, timestamp: int, *, base_offset: int = 0, partition_leader_epoch: int = -1,
                      producer_id: int = -1, producer_epoch: int = -1, transactional: bool = False) -> bytes:
    """The batch ``build_batch`` encodes for ``(key, value)`` records (a key, a value or None, no
    headers) all at ``timestamp``, uncompressed, with no sequence: what a coordinator writes to its
    internal topic. Built straight at its offsets (``base_offset``, ``partition_leader_epoch``), so
    the log keeps it as it is."""
    if len(records) == 1:   # most coordinator writes (a commit of one partition): no list, no loop
        key, value = records[0]
        # attributes 0, timestamp delta 0, offset delta 0, key, value, no headers
        record = b"".join((b"\x00\x00\x00", _NULL_VARINT if key is None else _varint(len(key)), key or b"",
                           _NULL_VARINT if value is None else _varint(len(value)), value or b"", b"\x00"))
        body = _varint(len(record)) + record
    else:
        parts = []
        for delta, (key, value) in enumerate(records):
            # attributes 0, timestamp delta 0, the offset delta, key, value, no headers
            record = b"".join((b"\x00\x00", _varint(delta), _NULL_VARINT if key is None else _varint(len(key)),
                               key or b"", _NULL_VARINT if value is None else _varint(len(value)), value or b"",
                               b"\x00"))
            parts.append(_varint(len(record)))
            parts.append(record)
        body = b"".join(parts)
    covered = _HEADER_AFTER_CRC.pack(TRANSACTIONAL_BIT if transactional else 0, len(records) - 1, timestamp,
                                     timestamp, producer_id, producer_epoch, -1, len(records)) + body
    return _HEADER_TO_CRC.pack(base_offset, len(covered) + 9, partition_leader_epoch, 2, _crc32c(covered)) + covered


# -- transaction markers (control batches) --------------------------------------------------------

CONTROL_ABORT, CONTROL_COMMIT = 0, 1
_CONTROL_KEY = struct.Struct(">hh")        # version 0, type (ControlRecordType)
_END_TXN_VALUE = struct.Struct(">hi")      # version 0, coordinator epoch (EndTransactionMarker)


def end_txn_marker(producer_id: int, producer_epoch: int, commit: bool, coordinator_epoch: int,
                   timestamp: int) -> bytes:
    """Kafka's MemoryRecords.withEndTransactionMarker: one uncompressed control batch (control
    and transactional bits, no sequence) holding one record, key (version 0, type 1 commit / 0
    abort), value EndTransactionMarker v0 (version 0, coordinator epoch)."""
    # the record: length 16, attributes 0, timestamp delta 0, offset delta 0, key of 4 bytes,
    # value of 6 bytes, no headers (varints zigzag-encoded), as build_batch would encode it
    record = b"\x20\x00\x00\x00\x08" + _CONTROL_KEY.pack(0, CONTROL_COMMIT if commit else CONTROL_ABORT) \
        + b"\x0c" + _END_TXN_VALUE.pack(0, coordinator_epoch) + b"\x00"
    buf = bytearray(_HEADER.pack(0, HEADER_SIZE - LOG_OVERHEAD + len(record), -1, 2, 0,
                                 TRANSACTIONAL_BIT | CONTROL_BIT, 0, timestamp, timestamp, producer_id,
                                 producer_epoch, -1, 1))
    buf += record
    struct.pack_into(">I", buf, CRC_OFFSET, _crc32c(memoryview(buf)[ATTRIBUTES_OFFSET:]))
    return bytes(buf)


def control_record(batch) -> tuple[int, int] | None:
    """(control type, coordinator epoch) of a control batch's first record; the coordinator
    epoch is -1 when the type is not a transaction marker; None for an empty batch."""
    for rec in iter_records(batch):
        if rec.key is None or len(rec.key) < 4:
            raise InvalidBatch("CORRUPT_MESSAGE", "control record key shorter than 4 bytes")
        _, kind = _CONTROL_KEY.unpack_from(rec.key)
        if kind in (CONTROL_ABORT, CONTROL_COMMIT):
            if rec.value is None or len(rec.value) < 6:
                raise InvalidBatch("CORRUPT_MESSAGE", "end transaction marker value shorter than 6 bytes")
            return kind, _END_TXN_VALUE.unpack_from(rec.value)[1]
        return kind, -1
    return None


def transactional_producer(records) -> tuple[int, int] | None:
    """(producer id, epoch) when the first batch of a produce request's records is a v2
    transactional batch (Kafka's RequestUtils.hasTransactionalRecords looks at the first batch;
    the producer id may be -1), else None. Reads the header only."""
    if records is None or len(records) < HEADER_SIZE or records[MAGIC_OFFSET] != 2:
        return None
    if not records[ATTRIBUTES_OFFSET + 1] & TRANSACTIONAL_BIT:
        return None
    return _PID_EPOCH.unpack_from(records, 43)


_PID_EPOCH = struct.Struct(">qh")
