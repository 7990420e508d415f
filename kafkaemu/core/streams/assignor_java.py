"""The orders of Java's collections that Kafka's StickyTaskAssignor depends on, so that the port picks
the same member as Kafka wherever loads tie.

Kafka's assignor breaks ties by where things sit in a ``java.util.PriorityQueue`` (a binary heap
whose shape depends on insertion order) and by the iteration order of ``java.util.HashMap``s of
member and process ids. Both are deterministic in Java, and reproduced here:

- ``hash_map_order``: the order a ``HashMap<String, ...>`` iterates its keys: by bucket
  (``String.hashCode`` spread, masked by the table size the map grew to), then insertion order
  within a bucket. Not reproduced: the order inside a bucket turned into a tree, which needs nine
  ids colliding in one bucket of a table of 64 or more.
- ``JavaPriorityQueue``: ``offer`` / ``poll`` with Java's sift-up and sift-down, so equal keys come
  out in Java's order (``heapq`` differs). Kafka fills its queues with ``addAll``, which adds one by
  one on the JDKs Kafka 4.3 runs on (17 to 25); later JDKs heapify instead.
- ``utf16_key``: ``String.compareTo``'s order (UTF-16 code units), for sorting subtopology ids.
"""
from __future__ import annotations

from typing import Callable, Generic, Iterable, TypeVar

T = TypeVar("T")

_LOAD_FACTOR = 0.75
_DEFAULT_CAPACITY = 16
_TREEIFY_THRESHOLD = 8
_MIN_TREEIFY_CAPACITY = 64


def string_hash(s: str) -> int:
    """Java's ``String.hashCode`` as an unsigned 32-bit value."""
    h = 0
    if s.isascii():
        for c in s.encode("ascii"):
            h = (31 * h + c) & 0xFFFFFFFF
        return h
    data = s.encode("utf-16-be", "surrogatepass")
    for i in range(0, len(data), 2):
        h = (31 * h + (data[i] << 8 | data[i + 1])) & 0xFFFFFFFF
    return h


def _spread(h: int) -> int:
    return h ^ (h >> 16)


def _table_size_for(capacity: int) -> int:
    n = 1
    while n < capacity:
        n <<= 1
    return n


def hash_map_order(keys: Iterable[str], initial_capacity: int | None = None) -> list[str]:
    """The distinct ``keys``, put in this order into ``new HashMap<>()`` (or
    ``new HashMap<>(initial_capacity)``), in the order the map iterates them."""
    seen: dict[str, int] = {}
    for k in keys:
        if k not in seen:
            seen[k] = _spread(string_hash(k))
    if initial_capacity is None:
        cap, threshold = _DEFAULT_CAPACITY, int(_DEFAULT_CAPACITY * _LOAD_FACTOR)
    else:
        cap = _table_size_for(initial_capacity)
        threshold = int(cap * _LOAD_FACTOR)
    hashes: list[int] = []
    bins: dict[int, int] = {}

    def resize() -> None:
        nonlocal cap, threshold, bins
        old = cap
        cap <<= 1
        threshold = threshold << 1 if old >= _DEFAULT_CAPACITY else int(cap * _LOAD_FACTOR)
        bins = {}
        for hh in hashes:
            bins[hh & (cap - 1)] = bins.get(hh & (cap - 1), 0) + 1

    for h in seen.values():
        hashes.append(h)
        b = h & (cap - 1)
        bins[b] = bins.get(b, 0) + 1
        # A ninth node in one bin of a small table makes Java resize instead of building a tree,
        # then the size check follows as for any put.
        if bins[b] > _TREEIFY_THRESHOLD and cap < _MIN_TREEIFY_CAPACITY:
            resize()
        if len(hashes) > threshold:
            resize()
    mask = cap - 1
    order = {k: i for i, k in enumerate(seen)}
    return sorted(seen, key=lambda k: (seen[k] & mask, order[k]))


def utf16_key(s: str) -> bytes:
    """A sort key ordering strings as Java's ``String.compareTo`` does."""
    return s.encode("utf-16-be", "surrogatepass")


class JavaPriorityQueue(Generic[T]):
    """``java.util.PriorityQueue`` ordered by ``key`` (read when comparing, as Java's comparator
    reads the element: a key may change only while its element is out of the queue)."""

    __slots__ = ("_heap", "_key")

    def __init__(self, key: Callable[[T], object], items: Iterable[T] = ()):
        self._heap: list[T] = []
        self._key = key
        for item in items:
            self.offer(item)

    def __len__(self) -> int:
        return len(self._heap)

    def offer(self, x: T) -> None:
        heap, key = self._heap, self._key
        heap.append(x)
        k = len(heap) - 1
        kx = key(x)
        while k > 0:
            parent = (k - 1) >> 1
            e = heap[parent]
            if not kx < key(e):
                break
            heap[k] = e
            k = parent
        heap[k] = x

    def poll(self) -> T | None:
        heap, key = self._heap, self._key
        if not heap:
            return None
        result = heap[0]
        x = heap.pop()
        n = len(heap)
        if n:
            kx = key(x)
            k = 0
            half = n >> 1
            while k < half:
                child = 2 * k + 1
                c = heap[child]
                right = child + 1
                if right < n and key(c) > key(heap[right]):
                    child = right
                    c = heap[child]
                if not kx > key(c):
                    break
                heap[k] = c
                k = child
            heap[k] = x
        return result
