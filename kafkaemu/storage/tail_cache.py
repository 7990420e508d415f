"""The most recent batches of segment-stored partitions, kept in memory within a budget, so the
fetches of consumers keeping up are answered without a read of the files. Each partition keeps at
most ``per_partition`` bytes (its newest batches, a suffix of its log); all together at most
``total``: past it, the partition that appended least recently gives up its oldest batches.
"""
from __future__ import annotations

from bisect import bisect_left
from collections import OrderedDict

from .batch_store import read_batches

PER_PARTITION = 4 << 20


class TailBudget:
    def __init__(self, total: int, per_partition: int = PER_PARTITION) -> None:
        self.total = total
        self.per_partition = min(per_partition, total)
        self.used = 0
        self._tails: OrderedDict = OrderedDict()   # id(tail) -> tail, least recently appended first

    def grew(self, tail: "Tail") -> None:
        self._tails[id(tail)] = tail
        self._tails.move_to_end(id(tail))
        if tail.size > self.per_partition:
            tail.evict(tail.size - self.per_partition * 3 // 4)
        while self.used > self.total and self._tails:
            oldest = next(iter(self._tails.values()))
            oldest.evict(self.used - self.total * 3 // 4)
            if not oldest.size:
                self._tails.pop(id(oldest), None)

    def forget(self, tail: "Tail") -> None:
        self._tails.pop(id(tail), None)


class Tail:
    """A partition's newest batches: bases, lasts and the batches, in offset order."""

    def __init__(self, budget: TailBudget | None) -> None:
        self.budget = budget
        self.bases: list[int] = []
        self.lasts: list[int] = []
        self.batches: list = []
        self.size = 0

    def append(self, batch, base: int, last: int) -> None:
        if self.budget is None or self.budget.total <= 0:
            return
        self.bases.append(base)
        self.lasts.append(last)
        self.batches.append(batch)
        self.size += len(batch)
        self.budget.used += len(batch)
        self.budget.grew(self)

    def holds(self, offset: int) -> bool:
        """Whether the batch holding ``offset`` (or the first after it) is here."""
        return bool(self.bases) and offset >= self.bases[0]

    def read(self, offset: int, max_bytes: int, min_one: bool, max_offset: int | None) -> list:
        return read_batches(self.bases, self.lasts, self.batches, offset, max_bytes, min_one, max_offset)

    def evict(self, nbytes: int) -> None:
        """Forget the oldest batches, at least ``nbytes`` of them (or all)."""
        k, freed = 0, 0
        while k < len(self.batches) and freed < nbytes:
            freed += len(self.batches[k])
            k += 1
        self._drop(k, freed)

    def drop_below(self, offset: int) -> None:
        """Forget the batches wholly below ``offset`` (their segments were deleted)."""
        k = bisect_left(self.lasts, offset)
        self._drop(k, sum(len(b) for b in self.batches[:k]))

    def clear(self) -> None:
        self._drop(len(self.batches), self.size)
        if self.budget is not None:
            self.budget.forget(self)

    def _drop(self, k: int, freed: int) -> None:
        if k:
            del self.bases[:k], self.lasts[:k], self.batches[:k]
            self.size -= freed
            if self.budget is not None:
                self.budget.used -= freed
