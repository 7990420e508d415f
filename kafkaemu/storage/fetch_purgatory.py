"""Fetches parked until enough data arrives or their max_wait deadline passes (Kafka's
DelayedFetch purgatory). Appends wake waiters through the partitions they watch (a
read_committed waiter counts only bytes below the last stable offset, so a transaction's data
wakes it when its marker is written); deadlines fire
from ``expire(now_ms)``, which the broker's tick calls. No polling: a waiter does nothing until
an append or its deadline.
"""
from __future__ import annotations

import heapq
import itertools
from typing import Callable


class FetchWaiter:
    __slots__ = ("partitions", "min_bytes", "deadline_ms", "accumulated", "done", "committed", "_complete",
                 "_purgatory")

    def __init__(self, partitions, min_bytes: int, deadline_ms: int, accumulated: int,
                 complete: Callable[[], None], committed: bool = False) -> None:
        self.partitions = list(partitions)
        self.min_bytes = min_bytes
        self.deadline_ms = deadline_ms
        self.accumulated = accumulated
        self.done = False
        self.committed = committed     # read_committed: only bytes below the last stable offset count
        self._complete = complete
        self._purgatory: FetchPurgatory | None = None

    def on_append(self, partition, nbytes: int, stable: int | None = None) -> None:
        """``nbytes`` were appended to ``partition``; ``stable``: the bytes that became readable
        below its last stable offset (all of them when None)."""
        self.accumulated += stable if self.committed and stable is not None else nbytes
        if self.accumulated >= self.min_bytes and self._purgatory is not None:
            self._purgatory.complete(self)


class FetchPurgatory:
    def __init__(self) -> None:
        self._heap: list[tuple[int, int, FetchWaiter]] = []
        self._seq = itertools.count()
        self.on_park: Callable[[FetchWaiter, int], None] | None = None   # (waiter, max_wait_ms)

    def park(self, waiter: FetchWaiter, max_wait_ms: int | None = None) -> None:
        waiter._purgatory = self
        for p in waiter.partitions:
            p.waiters.add(waiter)
        heapq.heappush(self._heap, (waiter.deadline_ms, next(self._seq), waiter))
        if self.on_park is not None and max_wait_ms is not None:
            self.on_park(waiter, max_wait_ms)

    def complete(self, waiter: FetchWaiter) -> None:
        if waiter.done:
            return
        waiter.done = True
        for p in waiter.partitions:
            p.waiters.discard(waiter)
        waiter._complete()

    def expire(self, now_ms: int) -> int:
        fired = 0
        heap = self._heap
        while heap and heap[0][0] <= now_ms:
            _, _, waiter = heapq.heappop(heap)
            if not waiter.done:
                self.complete(waiter)
                fired += 1
        return fired

    def next_deadline_ms(self) -> int | None:
        heap = self._heap
        while heap and heap[0][2].done:
            heapq.heappop(heap)
        return heap[0][0] if heap else None

    def __len__(self) -> int:
        return sum(1 for _, _, w in self._heap if not w.done)
