"""Opening a partition's segments on start, as Kafka's LogLoader: sealed segments below the
recovery point are trusted when their indexes pass a sanity check (Kafka's LogSegment.sanityCheck:
whole entries, the last one inside the segment), else their indexes are rebuilt; segments from the
recovery point on are recovered (every batch whole, sane, CRC-checked and in offset order) and the
log is truncated at the first batch that is not. After a clean shutdown the recovery point is the
log end, and only the active segment's tail after its last index entry is checked.

Truncation keeps the warning and the dropped bytes (``<segment>.corrupt-<byte position>``) of
before; segments after a truncated one are set aside the same way (``.corrupt-0``).
"""
from __future__ import annotations

import os
import re
import struct

from .record_batch import LOG_OVERHEAD, NO_TIMESTAMP
from .segment import Segment
from .segmented_log import SegmentedBatchStore

_LOG_FILE = re.compile(r"^(\d{20})\.log$")
_LEFTOVER = (".cleaned", ".swap", ".tmp")
_BASE = struct.Struct(">q")


def load_segments(store: SegmentedBatchStore, recovery_point: int, repair=None) -> dict | None:
    """Open ``store.dir``'s segments into ``store`` (empty). Segments from the one holding
    ``recovery_point`` on are recovered; ``repair(pos, batch)`` may fix a recovered batch in place.
    Returns the truncation ({offset, position, dropped_bytes, reason, kept_in}) or None."""
    directory = store.dir
    if not os.path.isdir(directory):
        return None
    bases = []
    for entry in os.listdir(directory):
        if entry.endswith(_LEFTOVER):
            os.unlink(os.path.join(directory, entry))
            continue
        m = _LOG_FILE.match(entry)
        if m:
            bases.append(int(m.group(1)))
    bases.sort()
    interval = store._interval()
    segments = [Segment(directory, base, interval) for base in bases]
    truncated = None
    for k, seg in enumerate(segments):
        next_base = segments[k + 1].base if k + 1 < len(segments) else None
        if truncated is not None:   # after a truncation the log ends there: set later segments aside
            kept = seg.path + ".corrupt-0"
            seg.close()
            os.replace(seg.path, kept)
            seg.index.delete()
            seg.time_index.delete()
            continue
        sane = _load_indexes(seg, next_base)
        if next_base is not None and next_base <= recovery_point and sane:
            seg.next_offset = next_base
            seg.max_ts, seg.max_ts_offset = seg.time_index.last() or (NO_TIMESTAMP, seg.base)
            seg.batch_count = None
            store.add_segment(seg)
            continue
        start, next_offset = 0, seg.base
        if sane and len(seg.index):
            start = seg.index.lookup(max(recovery_point, seg.base))
            if start:
                next_offset = _BASE.unpack_from(seg.pread(8, start))[0]
        valid, end_offset, reason = seg.recover_from(start, next_offset, repair)
        if reason:
            dropped = seg.truncate(valid)
            kept = f"{seg.path}.corrupt-{valid}"
            with open(kept, "wb") as f:
                f.write(dropped)
            truncated = {"offset": end_offset, "position": valid, "dropped_bytes": len(dropped), "reason": reason,
                         "kept_in": kept}
        if next_base is not None and not reason:
            seg.next_offset = max(seg.next_offset, next_base)
            seg.seal()
        store.add_segment(seg)
    return truncated


def _load_indexes(seg: Segment, next_base: int | None) -> bool:
    """Kafka's sanity check: the index files exist, hold whole entries, and their last entries
    point inside the segment (its file size, the next segment's base offset); entries must also
    increase (offsets and positions; timestamps and offsets of the time index), so garbage inside
    an index is found too. An index that fails is emptied, to be rebuilt from the segment."""
    if _sane(seg, next_base):
        return True
    seg.index.clear()
    seg.time_index.clear()
    return False


def _increasing(values, strictly: bool = True) -> bool:
    if strictly:
        return all(a < b for a, b in zip(values, values[1:]))
    return all(a <= b for a, b in zip(values, values[1:]))


def _sane(seg: Segment, next_base: int | None) -> bool:
    if not seg.index.load() or not seg.time_index.load():
        return False
    index, time_index = seg.index, seg.time_index
    if not (_increasing(index.keys) and _increasing(index.values) and _increasing(time_index.keys)
            and _increasing(time_index.values, strictly=False)):
        return False
    if len(index) and (index.keys[0] < 0 or index.values[0] < 0) or len(time_index) and time_index.values[0] < 0:
        return False
    last = seg.index.last_offset()
    if last is not None and (seg.index.values[-1] + LOG_OVERHEAD > seg.size
                             or next_base is not None and last >= next_base or last < seg.base):
        return False
    tl = seg.time_index.last()
    if tl is not None and (tl[1] < seg.base or next_base is not None and tl[1] >= next_base):
        return False
    if next_base is not None and seg.size and tl is None:
        return False      # a sealed segment's time index ends with its largest timestamp
    return True
