"""One log segment on disk, as Kafka's LogSegment: ``<base offset, 20 digits>.log`` holding record
batches byte for byte, its sparse ``.index`` and ``.timeindex`` (``offset_index``) and its
``.txnindex`` of aborted transactions.

Appends are one unbuffered write each (a killed process keeps every acknowledged batch; there is
no fsync). A write that fails (ENOSPC, EIO) is cut back off the file before ``StorageError`` is
raised, so the segment always ends with a whole batch and the next append lands where it should.
Reads use ``os.pread`` of byte ranges found through the offset index and batch headers scanned
forward from there: the page cache does the caching, nothing is mapped.
"""
from __future__ import annotations

import os
import struct
from bisect import bisect_left
from collections import OrderedDict

from .batch_store import StorageError
from .offset_index import OffsetIndex, TimeIndex
from .record_batch import (HEADER_SIZE, LOG_OVERHEAD, MAGIC_OFFSET, NO_TIMESTAMP, crc_ok,
                           parse_header)

_BASE_LEN = struct.Struct(">qi")
_DELTA = struct.Struct(">i")           # last offset delta, at byte 23
_MAX_TS = struct.Struct(">q")          # max timestamp, at byte 35
_TXN_ENTRY = struct.Struct(">hqqqq")   # Kafka's AbortedTxn: version, producer id, first, last, LSO
SCAN_CHUNK = 1 << 16
MAX_OPEN_FILES = 512     # segment files open at once, over all partitions (reads of old segments open theirs)
_OPEN: OrderedDict = OrderedDict()   # id(segment) -> segment with an open file, oldest opened first


def file_name(base: int, suffix: str) -> str:
    return f"{base:020d}{suffix}"


class Segment:
    def __init__(self, directory: str, base: int, index_interval: int) -> None:
        self.base = base
        self.path = os.path.join(directory, file_name(base, ".log"))
        self.index = OffsetIndex(os.path.join(directory, file_name(base, ".index")), base)
        self.time_index = TimeIndex(os.path.join(directory, file_name(base, ".timeindex")), base)
        self.txn_path = os.path.join(directory, file_name(base, ".txnindex"))
        self.index_interval = index_interval
        self._fd: int | None = None       # opened on first use: a sealed segment nobody reads holds none
        try:
            self.size = os.stat(self.path).st_size
        except FileNotFoundError:
            self.size = 0
            os.close(os.open(self.path, os.O_WRONLY | os.O_CREAT, 0o644))
        self.next_offset = base          # one past the last offset held (known once loaded)
        self.max_ts = NO_TIMESTAMP
        self.max_ts_offset = base
        self.batch_count: int | None = 0  # None: not counted (a sealed segment loaded from its indexes)
        self._since_index = 0
        self._rolling_ts: int | None = None
        self._txn_fd: int | None = None
        self.txn_backlog: list[bytes] = []   # aborted-transaction entries not written yet (a full disk)
        self.bytes_read = 0              # bytes read back from the file (tests spy on restarts)
        self._torn = False               # a failed write may have left bytes past ``size``

    @property
    def fd(self) -> int:
        fd = self._fd
        if fd is None:
            fd = self._fd = os.open(self.path, os.O_RDWR | os.O_APPEND)
            while len(_OPEN) >= MAX_OPEN_FILES:   # the oldest opened is closed; it reopens when used again
                _OPEN.popitem(last=False)[1].close_file()
            _OPEN[id(self)] = self
        return fd

    # -- appending -------------------------------------------------------------------------
    def append(self, batch, last: int, max_ts: int) -> None:
        pos = self.size
        try:
            if self._torn:
                self._cut_back()
            written = os.write(self.fd, batch)
            if written < len(batch):
                view = memoryview(batch)[written:]
                while view:
                    view = view[os.write(self.fd, view):]
        except OSError as exc:
            self._torn = True
            try:
                self._cut_back()
            except OSError:
                pass     # cut before the next append
            raise StorageError(f"write to {self.path} failed: {exc.strerror or exc}") from exc
        self._indexed(pos, len(batch), last, max_ts)

    def _cut_back(self) -> None:
        """Drop what a failed write left after the last whole batch (Kafka's recovery would)."""
        os.ftruncate(self.fd, self.size)
        self._torn = False

    def rolling_timestamp(self) -> int:
        """The largest timestamp of the segment's first batch (segment.ms counts from it)."""
        if self._rolling_ts is None:
            head = self.pread(HEADER_SIZE, 0) if self.size >= HEADER_SIZE else b""
            self._rolling_ts = _MAX_TS.unpack_from(head, 35)[0] if head else NO_TIMESTAMP
        return self._rolling_ts

    def _indexed(self, pos: int, size: int, last: int, max_ts: int) -> None:
        if pos == 0:
            self._rolling_ts = max_ts
        if max_ts > self.max_ts:
            self.max_ts, self.max_ts_offset = max_ts, last
        if self._since_index > self.index_interval:
            self.index.append(last, pos)
            self.time_index.maybe_append(self.max_ts, self.max_ts_offset)
            self._since_index = 0
        self._since_index += size
        self.size = pos + size
        self.next_offset = last + 1
        if self.batch_count is not None:
            self.batch_count += 1

    def seal(self) -> None:
        """No more appends (a roll): the time index gets the segment's max timestamp, as Kafka's
        onBecomeInactiveSegment."""
        if self.max_ts != NO_TIMESTAMP:
            self.time_index.maybe_append(self.max_ts, self.max_ts_offset)
        self.index.close()
        self.time_index.close()
        self._close_txn()
        self.close_file()

    def close_file(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
            _OPEN.pop(id(self), None)

    def append_aborted(self, producer_id: int, first: int, last: int, lso: int) -> bool:
        """Index an aborted transaction; False when the entry could not be written yet (a full
        disk): it is kept and written before the next one, or by ``flush_aborted``."""
        self.txn_backlog.append(_TXN_ENTRY.pack(0, producer_id, first, last, lso))
        return self.flush_aborted()

    def flush_aborted(self) -> bool:
        if not self.txn_backlog:
            return True
        data = b"".join(self.txn_backlog)
        try:
            if self._txn_fd is None:
                self._txn_fd = os.open(self.txn_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            size = os.fstat(self._txn_fd).st_size
        except OSError:
            return False
        try:
            written = os.write(self._txn_fd, data)
        except OSError:
            written = -1
        if written == len(data):
            self.txn_backlog.clear()
            return True
        try:
            os.ftruncate(self._txn_fd, size)   # no torn entry stays (read_aborted would skip it anyway)
        except OSError:
            pass
        return False

    def read_aborted(self) -> list[tuple[int, int, int, int]]:
        try:
            with open(self.txn_path, "rb") as f:
                data = f.read()
        except FileNotFoundError:
            return []
        whole = len(data) - len(data) % _TXN_ENTRY.size
        return [entry[1:] for entry in _TXN_ENTRY.iter_unpack(data[:whole])]

    def truncate_aborted(self, below: int) -> None:
        """Keep only the aborted entries whose marker lies below ``below`` (recovery replays the rest)."""
        entries = self.read_aborted()
        kept = [e for e in entries if e[2] < below]
        if len(kept) != len(entries) or os.path.exists(self.txn_path) and not entries:
            self._close_txn()
            data = b"".join(_TXN_ENTRY.pack(0, *e) for e in kept)
            with open(self.txn_path + ".tmp", "wb") as f:
                f.write(data)
            os.replace(self.txn_path + ".tmp", self.txn_path)

    # -- reading ---------------------------------------------------------------------------
    def pread(self, size: int, pos: int) -> bytes:
        data = os.pread(self.fd, size, pos)
        self.bytes_read += len(data)
        return data

    def position_of(self, offset: int) -> int | None:
        """File position of the first batch whose last offset is at least ``offset`` (None:
        every batch here ends before it), from the index entry at or below it, scanning the batch
        headers forward in one read of about an index interval."""
        if offset >= self.next_offset:
            return None
        pos = self.index.lookup(offset)
        while pos < self.size:
            chunk = self.pread(min(self.size - pos, self.index_interval + SCAN_CHUNK), pos)
            at = 0
            while at + 27 <= len(chunk):
                base, length = _BASE_LEN.unpack_from(chunk, at)
                if base + _DELTA.unpack_from(chunk, at + 23)[0] >= offset:
                    return pos + at
                at += length + LOG_OVERHEAD
            if at == 0:          # not even one whole header left
                return None
            pos += at            # past the chunk, or a header cut by its end: read on from there
        return None

    def batches_from(self, pos: int = 0, end: int | None = None):
        """(position, batch) of the whole batches from ``pos``, read a chunk at a time."""
        end = self.size if end is None else end
        while pos < end:
            chunk = self.pread(min(max(SCAN_CHUNK, 0), end - pos), pos)
            view = memoryview(chunk)
            at = 0
            while at + LOG_OVERHEAD <= len(chunk):
                size = _BASE_LEN.unpack_from(chunk, at)[1] + LOG_OVERHEAD
                if at + size > len(chunk):
                    break
                yield pos + at, view[at:at + size]
                at += size
            if at == 0:   # one batch larger than the chunk
                head = chunk[:LOG_OVERHEAD]
                if len(head) < LOG_OVERHEAD:
                    return
                size = _BASE_LEN.unpack_from(head)[1] + LOG_OVERHEAD
                if size < HEADER_SIZE:
                    return
                big = self.pread(size, pos)
                if len(big) < size:
                    return
                yield pos, memoryview(big)
                at = size
            pos += at

    def count_batches(self) -> int:
        if self.batch_count is None:
            n, pos = 0, 0
            while pos < self.size:
                head = self.pread(LOG_OVERHEAD, pos)
                if len(head) < LOG_OVERHEAD:
                    break
                pos += _BASE_LEN.unpack_from(head)[1] + LOG_OVERHEAD
                n += 1
            self.batch_count = n
        return self.batch_count

    # -- recovery --------------------------------------------------------------------------
    def recover_from(self, pos: int, next_offset: int, on_batch=None) -> tuple[int, int, str]:
        """Kafka's LogSegment.recover from ``pos``: check every batch (whole, sane length and
        magic, CRC, offsets following ``next_offset``), index it, and stop at the first that is
        not valid. ``on_batch(pos, batch)`` may return a repaired batch of the same size, which is
        written in place. Returns (valid bytes, next offset, why the rest is invalid or "")."""
        self.index.truncate_entries(self.index.entry_before_position(pos))
        self.time_index.truncate_entries(bisect_left(self.time_index.values, next_offset - self.base))
        self.max_ts, self.max_ts_offset = self.time_index.last() or (NO_TIMESTAMP, self.base)
        self.size, self._since_index = pos, self.index_interval + 1 if pos else 0
        self.batch_count = 0 if pos == 0 else None
        end = os.fstat(self.fd).st_size
        reason = ""
        while pos < end:
            head = self.pread(LOG_OVERHEAD, pos)
            if len(head) < LOG_OVERHEAD:
                reason = "partial batch"
                break
            length = _BASE_LEN.unpack_from(head)[1]
            size = length + LOG_OVERHEAD
            if size < HEADER_SIZE:
                reason = f"record batch length {length} below the minimum"
                break
            if end - pos < size:
                reason = "partial batch"
                break
            batch = self.pread(size, pos)
            if batch[MAGIC_OFFSET] != 2:
                reason = f"magic {batch[MAGIC_OFFSET]}"
                break
            if not crc_ok(batch):
                reason = "CRC mismatch"
                break
            h = parse_header(batch)
            if h.base_offset < next_offset or h.last_offset_delta < 0:
                reason = f"offsets [{h.base_offset}, {h.last_offset}] out of order"
                break
            if on_batch is not None:
                fixed = on_batch(pos, batch)
                if fixed is not None and bytes(fixed) != batch:
                    fd = os.open(self.path, os.O_WRONLY)   # pwrite on the O_APPEND handle would append
                    try:
                        os.pwrite(fd, fixed, pos)
                    finally:
                        os.close(fd)
                    h = parse_header(fixed)
            self._indexed(pos, size, h.last_offset, h.max_timestamp)
            next_offset = h.last_offset + 1
            pos += size
        self.next_offset = max(next_offset, self.base)
        return pos, next_offset, reason

    def truncate(self, pos: int) -> bytes:
        """Cut the file at ``pos``; returns the bytes cut."""
        end = os.fstat(self.fd).st_size
        dropped = os.pread(self.fd, end - pos, pos) if end > pos else b""
        os.ftruncate(self.fd, pos)
        self.size = pos
        return dropped

    # -- lifecycle -------------------------------------------------------------------------
    def _close_txn(self) -> None:
        if self._txn_fd is not None:
            os.close(self._txn_fd)
            self._txn_fd = None

    def close(self) -> None:
        self.index.close()
        self.time_index.close()
        self._close_txn()
        self.close_file()

    def delete(self) -> None:
        self.close()
        self.index.delete()
        self.time_index.delete()
        for path in (self.path, self.txn_path):
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass


def read_max_timestamp(batch) -> int:
    return _MAX_TS.unpack_from(batch, 35)[0]
