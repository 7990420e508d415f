"""A partition's batches in segment files (with a data directory), as Kafka's LocalLog: a sequence
of ``segment.Segment`` by base offset, the last one active. Appends roll a new segment when the
active one would pass ``segment.bytes``; reads find the segment by base offset, then the batch by
its sparse index; retention deletes whole segments; compaction rewrites a segment through a
``.cleaned`` file and a rename. Only the indexes and the segments' sizes stay in memory.
"""
from __future__ import annotations

import os
import struct
from bisect import bisect_right
from itertools import islice

from . import topic_config
from .batch_store import MemoryBatchStore, batch_identity
from .record_batch import LOG_OVERHEAD
from .segment import Segment, StorageError, read_max_timestamp
from .tail_cache import Tail, TailBudget

_BASE_LEN = struct.Struct(">qi")
_DELTA = struct.Struct(">i")
READ_CHUNK = 8 << 20     # the most one pread asks for


class SegmentedBatchStore:
    def __init__(self, directory: str, configs=lambda: {}, tail_budget: TailBudget | None = None) -> None:
        self.dir = directory
        self.tail = Tail(tail_budget)    # the newest batches, also in memory (within the budget)
        self.segments: list[Segment] = []
        self._bases: list[int] = []
        self._configs = configs          # the topic's configs, read at each roll decision
        self.size_bytes = 0
        self.on_roll = None              # called with the new segment's base offset (producer snapshots)
        self._roll_raw: tuple | None = None
        self._roll_limits = (0, 0)
        self.generation = 0              # bumped when the batches change other than at either end

    # -- building ----------------------------------------------------------------------------
    def _interval(self) -> int:
        return topic_config.int_config(self._configs(), "index.interval.bytes")

    def add_segment(self, segment: Segment) -> None:
        self.segments.append(segment)
        self._bases.append(segment.base)
        self.size_bytes += segment.size

    def new_segment(self, base: int) -> Segment:
        os.makedirs(self.dir, exist_ok=True)
        seg = Segment(self.dir, base, self._interval())
        self.add_segment(seg)
        return seg

    @property
    def active(self) -> Segment | None:
        return self.segments[-1] if self.segments else None

    @property
    def pieces(self) -> int:
        """The units retention drops: segments (the active one, rolled when due, counts; a new
        empty one started by that roll does not)."""
        return sum(1 for seg in self.segments if seg.size)

    @property
    def batch_count(self) -> int:
        return sum(seg.count_batches() for seg in self.segments)

    def end_offset(self) -> int:
        return self.segments[-1].next_offset if self.segments else 0

    # -- appending -------------------------------------------------------------------------
    def append(self, batch, base: int, last: int, max_ts: int, now_ms: int | None = None) -> None:
        seg = self.active
        try:
            if seg is None:
                seg = self.new_segment(base)
            elif seg.size and self._should_roll(seg, len(batch), now_ms):
                seg = self.roll(base)
        except OSError as exc:
            raise StorageError(f"new segment at {base} in {self.dir}: {exc.strerror or exc}") from exc
        seg.append(batch, last, max_ts)
        self.size_bytes += len(batch)
        self.tail.append(batch, base, last)

    def _should_roll(self, seg: Segment, size: int, now_ms: int | None) -> bool:
        """Kafka's LogSegment.shouldRoll: the batch would pass segment.bytes, or segment.ms has
        passed since the largest timestamp of the segment's first batch (segment.jitter.ms is not
        applied)."""
        configs = self._configs()
        raw = (configs.get("segment.bytes"), configs.get("segment.ms"))
        if raw != self._roll_raw:   # parsed again only when the topic's settings change
            self._roll_raw = raw
            self._roll_limits = (topic_config.int_config(configs, "segment.bytes"),
                                 topic_config.int_config(configs, "segment.ms"))
        max_bytes, max_ms = self._roll_limits
        if seg.size > max_bytes - size:
            return True
        if now_ms is None:
            return False
        first = seg.rolling_timestamp()
        return first >= 0 and now_ms - first > max_ms

    def roll(self, base: int) -> Segment:
        """Seal the active segment and start a new one at ``base`` (the log end)."""
        if self.active is not None:
            self.active.seal()
        seg = self.new_segment(base)
        if self.on_roll is not None:
            self.on_roll(base)
        return seg

    # -- reading ---------------------------------------------------------------------------
    def _segment_index(self, offset: int) -> int:
        return max(bisect_right(self._bases, offset) - 1, 0)

    def read(self, offset: int, max_bytes: int, min_one: bool = True, max_offset: int | None = None) -> list:
        """Whole batches from the one holding ``offset``: memoryviews over a few large preads (up
        to ``max_bytes``; the first batch even when larger if ``min_one``; only batches wholly
        below ``max_offset``)."""
        if self.tail.holds(offset):
            return self.tail.read(offset, max_bytes, min_one, max_offset)
        out: list = []
        total = 0
        segments = self.segments
        k = self._segment_index(offset)
        while k < len(segments):
            seg = segments[k]
            k += 1
            pos = seg.position_of(offset)
            if pos is None:
                continue
            while pos < seg.size:
                chunk = seg.pread(min(seg.size - pos, max(max_bytes - total, LOG_OVERHEAD), READ_CHUNK), pos)
                view = memoryview(chunk)
                at = 0
                while at + LOG_OVERHEAD <= len(chunk):
                    size = _BASE_LEN.unpack_from(chunk, at)[1] + LOG_OVERHEAD
                    if at + size > len(chunk):
                        break
                    batch = view[at:at + size]
                    if max_offset is not None and _last_offset(batch) >= max_offset:
                        return out
                    if total + size > max_bytes and (out or not min_one):
                        return out
                    out.append(batch)
                    total += size
                    at += size
                if at == 0:   # a batch larger than what was read
                    head = chunk if len(chunk) >= LOG_OVERHEAD else seg.pread(LOG_OVERHEAD, pos)
                    if len(head) < LOG_OVERHEAD:
                        return out
                    size = _BASE_LEN.unpack_from(head)[1] + LOG_OVERHEAD
                    if total + size > max_bytes and (out or not min_one):
                        return out
                    batch = memoryview(seg.pread(size, pos))
                    if len(batch) < size or max_offset is not None and _last_offset(batch) >= max_offset:
                        return out
                    out.append(batch)
                    total += size
                    at = size
                pos += at
                if total >= max_bytes:
                    return out
            if out:
                offset = _last_offset(out[-1]) + 1
        return out

    def batches(self, start: int | None = None, limit: int | None = None):
        """The batches from the one holding ``start`` (all: None), at most ``limit`` of them, read
        from the files lazily."""
        return self._batches_from(start) if limit is None else islice(self._batches_from(start), limit)

    def _batches_from(self, start: int | None):
        k = 0 if start is None else self._segment_index(start)
        for seg in list(self.segments[k:]):
            pos = 0 if start is None else seg.position_of(start)
            if pos is None:
                continue
            for _, batch in seg.batches_from(pos):
                yield batch

    def bytes_between(self, start: int, end: int) -> int:
        total = 0
        for batch in self.batches(start):
            if _last_offset(batch) >= end:
                break
            total += len(batch)
        return total

    def timestamp_candidates(self, target_ms: int):
        """Batches from where the time index says a record at or after ``target_ms`` may be, in
        the first segment whose largest timestamp reaches it (Kafka's findOffsetByTimestamp)."""
        for seg in list(self.segments):
            if seg.max_ts < target_ms:
                continue
            pos = seg.index.lookup(seg.time_index.lookup(target_ms))
            for _, batch in seg.batches_from(pos):
                if read_max_timestamp(batch) >= target_ms:
                    yield batch

    def max_timestamp_batch(self):
        best = None
        for seg in self.segments:
            if seg.size and (best is None or seg.max_ts > best.max_ts):
                best = seg
        if best is None:
            return None
        pos = best.position_of(best.max_ts_offset)
        for _, batch in best.batches_from(pos or 0):
            if read_max_timestamp(batch) == best.max_ts:
                return best.max_ts, batch
        return None

    # -- removal from the front --------------------------------------------------------------
    def drop_before(self, offset: int) -> int:
        """Delete the segments wholly below ``offset`` (the next one starts at or below it); the
        active segment stays. Returns the bytes deleted."""
        n = 0
        while n + 1 < len(self.segments) and self._bases[n + 1] <= offset:
            n += 1
        return self._delete_first(n)

    def _delete_first(self, n: int) -> int:
        dropped = 0
        for seg in self.segments[:n]:
            dropped += seg.size
            seg.delete()
        del self.segments[:n], self._bases[:n]
        self.size_bytes -= dropped
        if n:
            self.tail.drop_below(self._bases[0] if self._bases else 1 << 63)
        return dropped

    def retention_start(self, now_ms: int, retention_ms: int, retention_bytes: int, high_watermark: int):
        """Kafka's retention: delete the oldest segments while their largest timestamp is older
        than retention.ms, then while the log exceeds retention.bytes by at least the segment's
        size; an active segment that is due is rolled first. Returns the new first offset (None:
        nothing deleted)."""
        segs = self.segments
        n = 0
        if retention_ms >= 0:
            while n < len(segs) and segs[n].size and now_ms - segs[n].max_ts > retention_ms:
                n += 1
        if retention_bytes >= 0:
            excess = self.size_bytes - retention_bytes - sum(seg.size for seg in segs[:n])
            while n < len(segs) and segs[n].size and excess - segs[n].size >= 0:
                excess -= segs[n].size
                n += 1
        if not n:
            return None
        if n == len(segs):
            self.roll(high_watermark)
        self._delete_first(n)
        return self._bases[0]

    # -- rewriting ---------------------------------------------------------------------------
    def apply_cleaning(self, changes: list, start: int, budget) -> int:
        """A compaction's changes from ``changes[start]`` on (see ``MemoryBatchStore``), a whole
        segment at a time while ``budget`` lasts (one at least, each batch read counted): a segment
        that changes is written to ``<segment>.cleaned`` and renamed over the old file. Returns
        where the next call starts."""
        i = start
        while i < len(changes) and (i == start or not budget.spent):
            k = bisect_right(self._bases, changes[i][0]) - 1
            upper = self._bases[k + 1] if k + 1 < len(self._bases) else None
            j = i + 1
            while j < len(changes) and (upper is None or changes[j][0] < upper):
                j += 1
            if k >= 0:   # else below the first segment: gone with the log start
                self._clean_segment(k, dict(changes[i:j]), budget)
            i = j
        return i

    def _clean_segment(self, k: int, changes: dict, budget) -> None:
        out, changed = [], False
        for _, batch in self.segments[k].batches_from(0):
            budget.batches -= 1
            change = changes.get(_BASE_LEN.unpack_from(batch)[0])
            if change is None or batch_identity(batch) != change[0]:
                out.append(batch)
                continue
            changed = True
            if change[1] is not None:
                out.append(change[1])
        if changed:
            self.tail.clear()
            self._swap(k, out)

    def _swap(self, k: int, batches: list) -> None:
        old = self.segments[k]
        cleaned = old.path + ".cleaned"
        with open(cleaned, "wb") as f:
            for b in batches:
                f.write(b)
        aborted = old.read_aborted()
        next_offset = old.next_offset
        old.close()
        old.index.delete()
        old.time_index.delete()
        os.replace(cleaned, old.path)
        seg = Segment(self.dir, old.base, self._interval())
        seg.recover_from(0, old.base)
        seg.next_offset = max(seg.next_offset, next_offset)
        if k + 1 < len(self.segments):
            seg.seal()
        self.size_bytes += seg.size - old.size
        self.segments[k] = seg
        del aborted   # the .txnindex file is kept as it was: markers are never cleaned away

    def replace(self, other: MemoryBatchStore, base: int) -> None:
        """Hold exactly ``other``'s batches (a control snapshot restore), in new segments from
        its first batch (``base`` when it has none)."""
        self._delete_first(len(self.segments))
        self.tail.clear()
        self.generation += 1
        first = next(iter(other.read(-1, 1 << 62)), None)
        self.new_segment(_BASE_LEN.unpack_from(first)[0] if first is not None else base)
        for b in other.batches():
            offset = _BASE_LEN.unpack_from(b)[0]
            self.append(b, offset, _last_offset(b), read_max_timestamp(b))

    def capture(self) -> MemoryBatchStore:
        """Every batch, read into memory (a control snapshot)."""
        out = MemoryBatchStore()
        for batch in self.batches():
            b = bytes(batch)
            out.append(b, _BASE_LEN.unpack_from(b)[0], _last_offset(b), read_max_timestamp(b))
        return out

    def close(self) -> None:
        self.tail.clear()
        self.generation += 1
        for seg in self.segments:
            seg.close()

    def bytes_read(self) -> int:
        return sum(seg.bytes_read for seg in self.segments)


def _last_offset(batch) -> int:
    return _BASE_LEN.unpack_from(batch)[0] + _DELTA.unpack_from(batch, 23)[0]
