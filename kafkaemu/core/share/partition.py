"""One share partition: which records of a topic partition a share group has delivered, to whom,
how often, and which are done (Kafka's SharePartition, pure: time comes in as ``now_ms``).

Offsets below ``start_offset`` (Kafka's SPSO) are done; those from ``start_offset`` up to
``end_offset`` (exclusive; the next offset never acquired yet) are in flight, each in one state:

- AVAILABLE: may be acquired (again) by any member;
- ACQUIRED: delivered to ``owner`` and locked until ``lock_deadline_ms``
  (share.record.lock.duration.ms after the acquisition);
- ACKNOWLEDGED: accepted, never delivered again;
- ARCHIVED: rejected, a gap, or out of deliveries (share.delivery.count.limit).

Acquiring raises a record's delivery count. A record released (RELEASE, its lock lapsing, its
member leaving) becomes AVAILABLE again, or ARCHIVED once its delivery count reached the limit.
ACCEPT, REJECT and GAP end it; RENEW (ShareFetch/ShareAcknowledge v2) extends its lock. Whenever
the records at the start are done, the start offset moves past them. No new records are acquired
while ``end_offset - start_offset`` is at the cap on in-flight records.

``written`` is what the partition's last state write told the share coordinator, the start offset
and how many records above it are complete: DescribeShareGroupOffsets answers from it. As Kafka's
SharePartition writes the state (writeShareGroupState) before the write's completion moves the start
offset past what it completed (maybeUpdateCachedStateAndOffsets), the start offset written is the one
from before the change, and the next write carries the moved one. Acquiring writes nothing.

Acknowledgements of a partition apply all or nothing: a record not ACQUIRED by that member, or an
offset outside the in-flight window, makes the whole set fail with INVALID_RECORD_STATE, as Kafka
rolls back a failed acknowledgement.

A share partition its group was assigned but no ShareFetch has loaded yet is uninitialized: its start
offset is ``UNINITIALIZED`` (-1, Kafka's PartitionFactory.UNINITIALIZED_START_OFFSET, what the group
coordinator's InitializeShareGroupState writes) and it holds no records; the first ShareFetch
``initialize``s it where share.auto.offset.reset says then. Until a later state write, ``written``
keeps the -1 (Kafka's SharePartition writes nothing when it resolves the start offset).
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from enum import Enum
from typing import Iterable

from ...protocol.errors import ErrorCode

E = ErrorCode
UNINITIALIZED = -1


class RecordState(Enum):
    AVAILABLE = "Available"
    ACQUIRED = "Acquired"
    ACKNOWLEDGED = "Acknowledged"
    ARCHIVED = "Archived"


class AckType(int, Enum):
    GAP = 0
    ACCEPT = 1
    RELEASE = 2
    REJECT = 3
    RENEW = 4


@dataclass
class InFlight:
    state: RecordState = RecordState.AVAILABLE
    delivery_count: int = 0
    owner: str | None = None
    lock_deadline_ms: int = -1


@dataclass(frozen=True)
class Acquired:
    """A run of acquired offsets with one delivery count (ShareFetch's AcquiredRecords)."""
    first_offset: int
    last_offset: int
    delivery_count: int


@dataclass(frozen=True)
class PartitionLimits:
    lock_duration_ms: int
    delivery_count_limit: int
    max_in_flight: int


class SharePartition:
    def __init__(self, start_offset: int, limits: PartitionLimits) -> None:
        self.start_offset = start_offset
        self.end_offset = start_offset
        self.limits = limits
        self.records: dict[int, InFlight] = {}
        self.delivered = 0   # records handed out, redeliveries included
        self.state_epoch = -1   # the snapshot epoch of its last __share_group_state record
        self.written = (start_offset, 0)   # (start offset, records complete above it) last written

    @property
    def initialized(self) -> bool:
        return self.start_offset != UNINITIALIZED

    def initialize(self, start_offset: int) -> None:
        """The first ShareFetch of an uninitialized share partition: it starts at ``start_offset``."""
        self.start_offset = self.end_offset = start_offset

    def snapshot(self) -> tuple:
        """What ``restore`` puts back: a write to __share_group_state that fails reverts to it."""
        return (self.start_offset, self.end_offset, self.limits, self.delivered, self.state_epoch, self.written,
                {o: replace(r) for o, r in self.records.items()})

    def restore(self, snapshot: tuple) -> None:
        (self.start_offset, self.end_offset, self.limits, self.delivered, self.state_epoch, self.written,
         records) = snapshot
        self.records = records

    # ------------------------------------------------------------ acquisition
    def acquire(self, member_id: str, max_records: int, batches: Iterable[tuple[int, int]], now_ms: int,
                up_to: int | None = None, batch_size: int = 0) -> list[Acquired]:
        """Acquire up to ``max_records`` records for ``member_id``: available in-flight ones first
        (redeliveries, lowest offsets first; none above ``up_to``, the last offset the fetch read
        from the log), then new ones from ``batches`` (the log's batches as (base offset, last
        offset) from ``end_offset`` on, up to what may be read). New records are taken whole batch
        by whole batch, so the count may go past ``max_records`` to a batch's end (Kafka's
        batch-optimized acquire mode); with ``batch_size``, more new records than that are answered
        in runs that break at a batch's start once a run holds ``batch_size`` (SharePartition's
        createBatches)."""
        taken: list[tuple[int, int]] = []   # (offset, delivery count)
        deadline = now_ms + self.limits.lock_duration_ms
        last_redelivered = self.end_offset if up_to is None else min(self.end_offset, up_to + 1)
        for offset in range(self.start_offset, last_redelivered):
            if len(taken) >= max_records:
                break
            rec = self.records.get(offset)
            if rec is not None and rec.state is RecordState.AVAILABLE:
                self._take(rec, member_id, deadline)
                taken.append((offset, rec.delivery_count))
        breaks: set[int] = set()
        new_from = run_from = self.end_offset
        for base, last in batches:
            if len(taken) >= max_records or self.end_offset - self.start_offset >= self.limits.max_in_flight:
                break
            if last < self.end_offset:
                continue
            if batch_size > 0 and base > new_from and base - run_from >= batch_size:
                breaks.add(base)
                run_from = base
            for offset in range(max(base, self.end_offset), last + 1):
                rec = self.records[offset] = InFlight()
                self._take(rec, member_id, deadline)
                taken.append((offset, rec.delivery_count))
            self.end_offset = last + 1
        if batch_size <= 0 or self.end_offset - new_from <= batch_size:
            breaks = set()
        self.delivered += len(taken)
        return _runs(taken, breaks)

    def first_available(self) -> int | None:
        """The lowest in-flight offset that may be acquired again, or None (Kafka's nextFetchOffset
        reads the log from there)."""
        return min((o for o, r in self.records.items() if r.state is RecordState.AVAILABLE), default=None)

    @staticmethod
    def _take(rec: InFlight, member_id: str, deadline: int) -> None:
        rec.state = RecordState.ACQUIRED
        rec.delivery_count += 1
        rec.owner = member_id
        rec.lock_deadline_ms = deadline

    def archive_acquired(self, member_id: str, ranges: list[tuple[int, int]], acquired: list[Acquired]) -> list[Acquired]:
        """Archive the offsets in ``ranges`` that ``member_id`` just acquired (read_committed: records
        of aborted transactions and transaction markers are never delivered); returns ``acquired``
        without them."""
        if not ranges:
            return acquired
        dropped = set()
        for first, last in ranges:
            for offset in range(first, last + 1):
                rec = self.records.get(offset)
                if rec is not None and rec.state is RecordState.ACQUIRED and rec.owner == member_id:
                    self._finish(rec, RecordState.ARCHIVED)
                    dropped.add(offset)
        self.advance_start()
        return _runs([(o, a.delivery_count) for a in acquired for o in range(a.first_offset, a.last_offset + 1)
                      if o not in dropped])

    def has_available(self) -> bool:
        return any(r.state is RecordState.AVAILABLE for r in self.records.values())

    def can_acquire_new(self) -> bool:
        return self.end_offset - self.start_offset < self.limits.max_in_flight

    # ------------------------------------------------------------ acknowledgement
    def acknowledge(self, member_id: str, batches: list[tuple[int, int, list[int]]], now_ms: int) -> ErrorCode:
        """Apply one partition's acknowledgement batches (first offset, last offset, one type or one
        per offset) for ``member_id``; all of them, or none with INVALID_RECORD_STATE."""
        changes: list[tuple[int, InFlight, int]] = []
        for first, last, types in batches:
            for offset in range(first, last + 1):
                ack = types[0] if len(types) == 1 else types[offset - first]
                rec = self.records.get(offset)
                if rec is None or rec.state is not RecordState.ACQUIRED or rec.owner != member_id \
                        or offset < self.start_offset or offset >= self.end_offset:
                    return E.INVALID_RECORD_STATE
                changes.append((offset, rec, ack))
        for _, rec, ack in changes:
            if ack == AckType.RENEW:
                rec.lock_deadline_ms = now_ms + self.limits.lock_duration_ms
            elif ack == AckType.ACCEPT:
                self._finish(rec, RecordState.ACKNOWLEDGED)
            elif ack == AckType.RELEASE:
                self._release(rec)
            else:   # REJECT, GAP
                self._finish(rec, RecordState.ARCHIVED)
        if any(ack != AckType.RENEW for _, _, ack in changes):
            self._write_state()
        self.advance_start()
        return E.NONE

    def _finish(self, rec: InFlight, state: RecordState) -> None:
        rec.state = state
        rec.owner = None
        rec.lock_deadline_ms = -1

    def _release(self, rec: InFlight) -> None:
        limit_reached = rec.delivery_count >= self.limits.delivery_count_limit
        self._finish(rec, RecordState.ARCHIVED if limit_reached else RecordState.AVAILABLE)

    def _write_state(self) -> None:
        """A state change written, before it moves the start offset (see ``written``)."""
        self.written = (self.start_offset, self.done_count())

    def advance_start(self) -> None:
        while self.start_offset < self.end_offset:
            rec = self.records.get(self.start_offset)
            if rec is not None and rec.state not in (RecordState.ACKNOWLEDGED, RecordState.ARCHIVED):
                break
            self.records.pop(self.start_offset, None)
            self.start_offset += 1

    # ------------------------------------------------------------ locks and members
    def expire_locks(self, now_ms: int) -> int:
        """Release every record whose lock lapsed by ``now_ms``; returns how many."""
        expired = 0
        for rec in self.records.values():
            if rec.state is RecordState.ACQUIRED and rec.lock_deadline_ms <= now_ms:
                self._release(rec)
                expired += 1
        if expired:
            self._write_state()
            self.advance_start()
        return expired

    def release_member(self, member_id: str) -> int:
        """Release what ``member_id`` holds (its share session closed or it left the group)."""
        released = 0
        for rec in self.records.values():
            if rec.state is RecordState.ACQUIRED and rec.owner == member_id:
                self._release(rec)
                released += 1
        if released:
            self._write_state()
            self.advance_start()
        return released

    def release_offset(self, offset: int) -> bool:
        """A test control: end one acquired record's lock now."""
        rec = self.records.get(offset)
        if rec is None or rec.state is not RecordState.ACQUIRED:
            return False
        self._release(rec)
        self._write_state()
        self.advance_start()
        return True

    def done_count(self) -> int:
        """In-flight records already acknowledged or archived (above the start offset)."""
        return sum(1 for r in self.records.values() if r.state in (RecordState.ACKNOWLEDGED, RecordState.ARCHIVED))

    def next_lock_deadline(self) -> int | None:
        deadlines = [r.lock_deadline_ms for r in self.records.values() if r.state is RecordState.ACQUIRED]
        return min(deadlines) if deadlines else None

    # ------------------------------------------------------------ offsets
    def reset(self, start_offset: int) -> None:
        """AlterShareGroupOffsets: start over at ``start_offset`` (the group must be empty)."""
        self.records.clear()
        self.start_offset = self.end_offset = start_offset
        self.written = (start_offset, 0)

    def skip_to(self, log_start_offset: int) -> None:
        """Records deleted from the log (retention, DeleteRecords) are no longer in flight."""
        if self.initialized and log_start_offset > self.start_offset:
            for offset in [o for o in self.records if o < log_start_offset]:
                del self.records[offset]
            self.start_offset = log_start_offset
            self.end_offset = max(self.end_offset, log_start_offset)
            self.advance_start()
            self.written = (self.start_offset, self.done_count())

    def in_flight(self) -> list[dict]:
        """Every in-flight record: offset, state, delivery count, owner, lock deadline."""
        return [{"offset": o, "state": r.state.value, "delivery_count": r.delivery_count, "owner": r.owner,
                 "lock_deadline_ms": r.lock_deadline_ms if r.state is RecordState.ACQUIRED else None}
                for o, r in sorted(self.records.items())]


def _runs(taken: list[tuple[int, int]], breaks: set[int] = frozenset()) -> list[Acquired]:  # type: ignore[assignment]
    """Contiguous offsets with the same delivery count, as AcquiredRecords entries; a run also
    starts at each offset of ``breaks``."""
    out: list[Acquired] = []
    for offset, count in taken:
        if out and out[-1].last_offset == offset - 1 and out[-1].delivery_count == count and offset not in breaks:
            out[-1] = Acquired(out[-1].first_offset, offset, count)
        else:
            out.append(Acquired(offset, offset, count))
    return out
