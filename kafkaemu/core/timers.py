"""Keyed timers driven by an injected clock: scheduling a key again replaces its timer.

A key is any hashable value; callers use tuples such as ``("heartbeat", group_id, member_id)``, so
ids containing any character can never make two keys equal.

Nothing here reads a clock; ``poll(now_ms)`` fires whatever is due, so a test can jump ten minutes
ahead in one call (as Kafka's ``MockCoordinatorTimer`` does). A callback that raises is logged and
the poll goes on: timers fire from the server's ticker and from inside other connections' requests,
so one failing timer must neither stop the rest nor fail an unrelated request (Kafka's coordinator
runtime likewise logs a failed timer operation and carries on).

The deadlines are a heap; rescheduling or cancelling a key leaves its old entry behind, dropped
once it reaches the top. A session pushed back by a heartbeat gets there soon, but a cancelled
timer far in the future stays until its deadline: every closed connection's idle check (ten
minutes out), every rebalance's sync deadline (up to the rebalance timeout). Once stale entries
are more than half the heap it is rebuilt from the live timers, which costs O(1) per schedule
over time and keeps the heap within twice the timers.
"""
from __future__ import annotations

import heapq
import itertools
from typing import Callable, Hashable

from ..logging import get_logger

log = get_logger("kafkaemu.timers")
_COMPACT_SLACK = 64   # a small heap is never worth rebuilding


class Timers:
    """Timers due at the same time fire in the order they were (last) scheduled.

    A timer moved later (a heartbeat pushing a session deadline out, many times a second) keeps its
    heap entry; the entry moves to the new deadline when it comes up, so the heap holds one entry
    per key instead of one per reschedule."""

    def __init__(self) -> None:
        # key -> (deadline, order, callback, order of its live heap entry)
        self._by_key: dict[Hashable, tuple[int, int, Callable[[], None], int]] = {}
        self._heap: list[tuple[int, int, Hashable]] = []
        self._seq = itertools.count()
        self._every: dict[Hashable, int] = {}   # key -> period of a repeating check

    def schedule(self, key: Hashable, deadline_ms: int, callback: Callable[[], None],
                 every_ms: int | None = None) -> None:
        """Run ``callback`` at ``deadline_ms``, replacing any timer already under ``key``.

        ``every_ms``: a periodic check (its callback schedules the next one). When a poll reaches
        past more than one of its periods (a clock advanced by a year), it fires once, at the last
        of them, as a real timer after a pause would, rather than once per missed period."""
        if every_ms:
            self._every[key] = every_ms
        seq = next(self._seq)
        old = self._by_key.get(key)
        if old is not None and old[0] <= deadline_ms:
            self._by_key[key] = (deadline_ms, seq, callback, old[3])   # its heap entry moves up later
            return
        self._by_key[key] = (deadline_ms, seq, callback, seq)
        heapq.heappush(self._heap, (deadline_ms, seq, key))
        if len(self._heap) > 2 * len(self._by_key) + _COMPACT_SLACK:
            self._compact()

    def postpone(self, key: Hashable, deadline_ms: int) -> bool:
        """Move the timer under ``key`` to ``deadline_ms``, no earlier than it was, keeping its
        callback: as ``schedule`` with the same callback. False (nothing changed) when there is no
        such timer or the deadline is earlier; then ``schedule`` it."""
        old = self._by_key.get(key)
        if old is None or old[0] > deadline_ms:
            return False
        self._by_key[key] = (deadline_ms, next(self._seq), old[2], old[3])   # its heap entry moves up later
        return True

    def cancel(self, key: Hashable) -> None:
        self._by_key.pop(key, None)
        self._every.pop(key, None)

    def entry(self, key: Hashable):
        """The timer under ``key`` as ``restore`` takes it back (None when there is none)."""
        return self._by_key.get(key)

    def restore(self, key: Hashable, entry) -> None:
        """Put back the timer ``entry`` had (from ``entry(key)``), or none: a failed coordinator
        write undoes the timers it moved."""
        if entry is None:
            self._by_key.pop(key, None)
            return
        deadline, order, callback, _ = entry
        seq = next(self._seq)
        self._by_key[key] = (deadline, order, callback, seq)
        heapq.heappush(self._heap, (deadline, seq, key))

    def is_scheduled(self, key: Hashable) -> bool:
        return key in self._by_key

    def deadline(self, key: Hashable) -> int | None:
        entry = self._by_key.get(key)
        return entry[0] if entry else None

    def next_deadline(self) -> int | None:
        self._drop_stale()
        return self._heap[0][0] if self._heap else None

    def poll(self, now_ms: int, on_time: Callable[[int], None] | None = None) -> int:
        """Fire every timer due at ``now_ms`` in deadline order; returns how many fired.

        ``on_time(deadline)`` runs before each callback, so a clock jumping far ahead replays each
        timer at its own deadline. Callbacks may schedule or cancel timers; one scheduled at or
        before ``now_ms`` fires in the same poll.
        """
        fired = 0
        heap = self._heap
        while True:
            # A heap entry's deadline is never after its timer's: none due, nothing to tidy.
            if not heap or heap[0][0] > now_ms:
                return fired
            self._drop_stale()
            if not heap or heap[0][0] > now_ms:
                return fired
            deadline, _, key = heapq.heappop(heap)
            every = self._every.pop(key, None) if self._every else None
            if every is not None and now_ms - deadline >= every:
                self._skip_missed(key, deadline + (now_ms - deadline) // every * every, every)
                continue
            callback = self._by_key.pop(key)[2]
            if on_time is not None:
                on_time(deadline)
            try:
                callback()
            except Exception:
                log.exception("timer_failed", key=key, deadline_ms=deadline)
            fired += 1

    def _skip_missed(self, key: Hashable, deadline: int, every: int) -> None:
        """Move a periodic timer to the last of its deadlines a poll reaches; it fires from there."""
        seq = next(self._seq)
        self._by_key[key] = (deadline, seq, self._by_key[key][2], seq)
        self._every[key] = every
        heapq.heappush(self._heap, (deadline, seq, key))

    def _compact(self) -> None:
        """Rebuild the heap from the live timers only (same deadlines and order)."""
        by_key = self._by_key
        for key, (deadline, seq, callback, _) in by_key.items():
            by_key[key] = (deadline, seq, callback, seq)
        # in place: a poll under way holds the list (a callback that schedules may compact)
        self._heap[:] = [(deadline, seq, key) for key, (deadline, seq, _, _) in by_key.items()]
        heapq.heapify(self._heap)

    @property
    def heap_entries(self) -> int:
        """Entries in the deadline heap, live and stale (a bound to check, not an API)."""
        return len(self._heap)

    def _drop_stale(self) -> None:
        """Make the heap's top the earliest live timer: drop entries of cancelled or replaced
        timers, move those of timers scheduled later to their deadline."""
        heap = self._heap
        while heap:
            deadline, seq, key = heap[0]
            entry = self._by_key.get(key)
            if entry is None or entry[3] != seq:
                heapq.heappop(heap)
            elif entry[0] != deadline or entry[1] != seq:
                self._by_key[key] = entry[:3] + (entry[1],)
                heapq.heapreplace(heap, (entry[0], entry[1], key))
            else:
                return

    def __len__(self) -> int:
        return len(self._by_key)
