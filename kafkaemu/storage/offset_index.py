"""A segment's sparse indexes, in Kafka's file formats (``.index``, ``.timeindex``).

``.index``: big-endian (offset relative to the segment's base int32, file position int32) pairs;
an entry is added every ``index.interval.bytes`` of appended batches, keyed by the last offset
of the batch starting at that position (Kafka's LogSegment.append). ``.timeindex``: (timestamp
int64, relative offset int32) entries, added with the offset entries when the segment's max
timestamp grew (Kafka's TimeIndex.maybeAppend). Entries live in ``array`` columns (a few bytes
each, a 5 GB log holds about a million) and are appended to the file with one unbuffered write,
so a killed process keeps what it wrote; a torn or stale index fails ``sane`` and is rebuilt
from the log.
"""
from __future__ import annotations

import os
import sys

from ..logging import get_logger

log = get_logger("kafkaemu.storage")
from array import array
from bisect import bisect_right


class _Index:
    KEY = "i"          # the lookup column's array type
    ENTRY = 8

    def __init__(self, path: str, base: int) -> None:
        self.path = path
        self.base = base
        self.keys = array(self.KEY)
        self.values = array("i")
        self._fd: int | None = None

    def __len__(self) -> int:
        return len(self.keys)

    def load(self) -> bool:
        """Read the file; False (and empty) when it is missing or not whole entries."""
        self.keys, self.values = array(self.KEY), array("i")
        try:
            with open(self.path, "rb") as f:
                data = f.read()
        except FileNotFoundError:
            return False
        if len(data) % self.ENTRY:
            return False
        self._decode(data)
        return True

    def _write(self, data: bytes) -> None:
        """Append the entry just added in memory. An entry that cannot be written (a full disk) is
        dropped from memory and the file: the index is sparse, lookups scan from the entry before."""
        try:
            if self._fd is None:
                self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            if os.write(self._fd, data) == len(data):
                return
            error = "short write"
        except OSError as exc:
            error = exc.strerror or str(exc)
        self.keys.pop()
        self.values.pop()
        try:
            os.truncate(self.path, len(self.keys) * self.ENTRY)
        except OSError:
            pass     # a torn file fails the sanity check on load and is rebuilt
        log.warning("index_entry_not_written", path=self.path, error=error)

    def rewrite(self) -> None:
        """Store the in-memory entries as the whole file (after a rebuild or truncation)."""
        self.close()
        tmp = self.path + ".tmp"
        with open(tmp, "wb") as f:
            f.write(self._encode())
        os.replace(tmp, self.path)

    def truncate_entries(self, keep: int) -> None:
        """Keep the first ``keep`` entries, in memory and in the file."""
        del self.keys[keep:], self.values[keep:]
        try:
            if os.path.getsize(self.path) > keep * self.ENTRY:
                os.truncate(self.path, keep * self.ENTRY)
        except FileNotFoundError:
            pass

    def clear(self) -> None:
        self.truncate_entries(0)

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def delete(self) -> None:
        self.close()
        for path in (self.path, self.path + ".tmp"):
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass


class OffsetIndex(_Index):
    def append(self, offset: int, position: int) -> None:
        rel = offset - self.base
        if self.keys and rel <= self.keys[-1]:
            return
        self.keys.append(rel)
        self.values.append(position)
        self._write(rel.to_bytes(4, "big") + position.to_bytes(4, "big"))

    def lookup(self, offset: int) -> int:
        """The position of the last entry whose offset is at most ``offset`` (0: none)."""
        i = bisect_right(self.keys, offset - self.base) - 1
        return self.values[i] if i >= 0 else 0

    def entry_before_position(self, position: int) -> int:
        """How many entries point below ``position`` (the ones a truncation there keeps)."""
        return bisect_right(self.values, position - 1)

    def last_offset(self) -> int | None:
        return self.base + self.keys[-1] if self.keys else None

    def _decode(self, data: bytes) -> None:
        both = array("i")
        both.frombytes(data)
        if sys.byteorder == "little":
            both.byteswap()
        self.keys, self.values = both[0::2], both[1::2]

    def _encode(self) -> bytes:
        both = array("i", bytes(8 * len(self.keys)))
        both[0::2], both[1::2] = self.keys, self.values
        if sys.byteorder == "little":
            both.byteswap()
        return both.tobytes()


class TimeIndex(_Index):
    KEY = "q"
    ENTRY = 12

    def maybe_append(self, timestamp: int, offset: int) -> None:
        if self.keys and timestamp <= self.keys[-1]:
            return
        rel = offset - self.base
        if self.values and rel < self.values[-1]:
            return
        self.keys.append(timestamp)
        self.values.append(rel)
        self._write(timestamp.to_bytes(8, "big", signed=True) + rel.to_bytes(4, "big"))

    def lookup(self, timestamp: int) -> int:
        """Kafka's TimeIndex.lookup: the offset of the last entry whose timestamp is at most
        ``timestamp`` (the segment's base offset: none)."""
        i = bisect_right(self.keys, timestamp) - 1
        return self.base + self.values[i] if i >= 0 else self.base

    def last(self) -> tuple[int, int] | None:
        return (self.keys[-1], self.base + self.values[-1]) if self.keys else None

    def _decode(self, data: bytes) -> None:
        n = len(data) // 12
        ts_bytes, rel_bytes = bytearray(8 * n), bytearray(4 * n)
        for k in range(8):
            ts_bytes[k::8] = data[k::12]
        for k in range(4):
            rel_bytes[k::4] = data[8 + k::12]
        ts, rel = array("q", bytes(ts_bytes)), array("i", bytes(rel_bytes))
        if sys.byteorder == "little":
            ts.byteswap()
            rel.byteswap()
        self.keys, self.values = ts, rel

    def _encode(self) -> bytes:
        ts, rel = array("q", self.keys), array("i", self.values)
        if sys.byteorder == "little":
            ts.byteswap()
            rel.byteswap()
        n = len(ts)
        out, tb, rb = bytearray(12 * n), ts.tobytes(), rel.tobytes()
        for k in range(8):
            out[k::12] = tb[k::8]
        for k in range(4):
            out[8 + k::12] = rb[k::4]
        return bytes(out)
