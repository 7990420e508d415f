"""Where a partition log keeps its record batches: in memory (no data directory, this module) or
in segment files (``segmented_log``). Both answer the same calls; offsets are already assigned.

Without a data directory memory is bounded by retention, which drops whole batches."""
from __future__ import annotations

import struct
from bisect import bisect_left, bisect_right
from itertools import accumulate, compress

from .record_batch import InvalidBatch

_LENGTH_CRC = struct.Struct(">i5xI")   # batchLength at 8, then (leader epoch, magic) skipped, then crc


def batch_identity(batch) -> tuple[int, int]:
    """(length, crc) from a batch's header: with its base offset, what tells a stored batch from
    another one at the same offsets (the crc covers every record), without decoding it."""
    return _LENGTH_CRC.unpack_from(batch, 8)


class StorageError(InvalidBatch):
    """A batch store could not keep a batch (a segment write failed: the disk is full, an IO
    error); nothing of the batch stays in the file. Appends answer KAFKA_STORAGE_ERROR."""

    def __init__(self, message: str) -> None:
        super().__init__("KAFKA_STORAGE_ERROR", message)


def read_batches(bases: list, lasts: list, batches: list, offset: int, max_bytes: int, min_one: bool,
                 max_offset: int | None) -> list:
    """The whole batches from the one holding ``offset`` (or the first after it) while they fit in
    ``max_bytes`` (the first one always, with ``min_one``), ending before ``max_offset``'s batch."""
    i = bisect_right(bases, offset) - 1
    if i < 0:
        i = 0
    elif lasts[i] < offset:
        i += 1
    n = len(batches) if max_offset is None else bisect_left(lasts, max_offset)
    out: list = []
    total = 0
    while i < n:
        b = batches[i]
        total += len(b)
        if total > max_bytes and (out or not min_one):
            break
        out.append(b)
        i += 1
    return out

class MemoryBatchStore:
    def __init__(self) -> None:
        self._bases: list[int] = []
        self._lasts: list[int] = []
        self._batches: list = []          # bytes-like, as received with offsets rewritten
        self._max_ts: list[int] = []
        self._ts_prefix: list[int] = []   # running max of _max_ts (or above it), for bisecting timestamp lookups
        self.size_bytes = 0
        self.generation = 0               # bumped when the batches change other than at either end

    @property
    def batch_count(self) -> int:
        return len(self._batches)

    @property
    def pieces(self) -> int:
        """The units retention drops: batches."""
        return len(self._batches)

    def end_offset(self) -> int:
        """The offset after the last batch (0: none)."""
        return self._lasts[-1] + 1 if self._lasts else 0

    def append(self, batch, base: int, last: int, max_ts: int, now_ms: int | None = None) -> None:
        self._bases.append(base)
        self._lasts.append(last)
        self._batches.append(batch)
        self._max_ts.append(max_ts)
        self._ts_prefix.append(max(max_ts, self._ts_prefix[-1]) if self._ts_prefix else max_ts)
        self.size_bytes += len(batch)

    def close(self) -> None:
        """Its partition was deleted: let go of the batches now (reads in flight keep the ones they
        took; later reads find none)."""
        self._bases, self._lasts, self._batches, self._max_ts, self._ts_prefix = [], [], [], [], []
        self.size_bytes = 0
        self.generation += 1

    def read(self, offset: int, max_bytes: int, min_one: bool = True, max_offset: int | None = None) -> list:
        return read_batches(self._bases, self._lasts, self._batches, offset, max_bytes, min_one, max_offset)

    def batches(self, start: int | None = None, limit: int | None = None):
        """The batches from the one holding ``start`` (all: None), at most ``limit`` of them."""
        i = 0 if start is None else bisect_left(self._lasts, start)
        return iter(self._batches[i:] if limit is None else self._batches[i:i + limit])

    def bytes_between(self, start: int, end: int) -> int:
        lo = bisect_left(self._lasts, start)
        hi = bisect_left(self._lasts, end)
        return sum(len(b) for b in self._batches[lo:hi])

    def timestamp_candidates(self, target_ms: int):
        """Batches (in offset order) from the first that may hold a record at or after ``target_ms``."""
        for j in range(bisect_left(self._ts_prefix, target_ms), len(self._batches)):
            if self._max_ts[j] >= target_ms:
                yield self._batches[j]

    def max_timestamp_batch(self):
        """(largest max timestamp, the first batch with it), or None."""
        if not self._batches:
            return None
        best = max(self._max_ts)
        return best, self._batches[self._max_ts.index(best)]

    def drop_before(self, offset: int) -> int:
        """Forget the batches wholly below ``offset`` (the one holding it stays: fetches return
        it and clients skip below); returns the bytes dropped."""
        keep = bisect_right(self._lasts, offset - 1)
        if not keep:
            return 0
        dropped = sum(len(b) for b in self._batches[:keep])
        self.size_bytes -= dropped
        del self._bases[:keep], self._lasts[:keep], self._batches[:keep], self._max_ts[:keep]
        self._rebuild_prefix()
        return dropped

    def retention_start(self, now_ms: int, retention_ms: int, retention_bytes: int, high_watermark: int):
        """The log start retention.ms / retention.bytes allow, dropping whole batches (None: no change)."""
        drop = 0
        n = len(self._batches)
        if retention_ms >= 0:
            while drop < n and now_ms - self._max_ts[drop] > retention_ms:
                drop += 1
        if retention_bytes >= 0:
            excess = self.size_bytes - retention_bytes
            for j in range(drop):
                excess -= len(self._batches[j])
            while drop < n and excess - len(self._batches[drop]) >= 0:
                excess -= len(self._batches[drop])
                drop += 1
        if not drop:
            return None
        return self._bases[drop] if drop < n else high_watermark

    def apply_cleaning(self, changes: list, start: int, budget) -> int:
        """A compaction's changes from ``changes[start]`` on, as many as ``budget`` has batches
        for (one at least): each (base offset, (the batch's identity when it was read, its
        replacement with the same offsets or None: dropped)), in offset order. A batch no longer
        here as it was read (gone with the log start, say) is left alone. Returns where the next
        call starts. List work only."""
        end = min(len(changes), start + max(budget.batches, 1))
        budget.batches -= end - start
        drop = []
        bases, batches = self._bases, self._batches
        for base, (identity, new) in changes[start:end]:
            j = bisect_left(bases, base)
            if j == len(bases) or bases[j] != base:
                continue
            old = batches[j]
            if batch_identity(old) != identity:
                continue
            if new is None:
                drop.append(j)
                self.size_bytes -= len(old)
            else:
                batches[j] = new
                self.size_bytes += len(new) - len(old)
        if drop:
            keep = bytearray(b"\x01") * len(batches)
            for j in drop:
                keep[j] = 0
            self._bases = list(compress(self._bases, keep))
            self._lasts = list(compress(self._lasts, keep))
            self._batches = list(compress(self._batches, keep))
            self._max_ts = list(compress(self._max_ts, keep))
            # what is left of the running max still bounds every earlier batch's timestamp from
            # above (a timestamp lookup may look at a few batches more), without a pass over the
            # log each call: the next drop_before recomputes it
            self._ts_prefix = list(compress(self._ts_prefix, keep))
        return end

    def _rebuild_prefix(self) -> None:
        self._ts_prefix = list(accumulate(self._max_ts, max))

    def copy(self) -> "MemoryBatchStore":
        """The same batches (shared: a store never changes a batch it holds) in new lists."""
        other = MemoryBatchStore()
        other._bases, other._lasts, other._batches = list(self._bases), list(self._lasts), list(self._batches)
        other._max_ts, other._ts_prefix, other.size_bytes = list(self._max_ts), list(self._ts_prefix), self.size_bytes
        return other

    def capture(self) -> "MemoryBatchStore":
        return self.copy()

    def replace(self, other: "MemoryBatchStore", base: int = 0) -> None:
        """Hold exactly ``other``'s batches (a control snapshot restore)."""
        generation = self.generation + 1
        copied = other.copy()
        self.__dict__.update(copied.__dict__)
        self.generation = generation
