"""The share partitions' writes to __share_group_state, run as the group coordinator's writes are
(runtime.py, Kafka's CoordinatorRuntime): an operation on one share partition changes it in place
and appends its state records; the runtime appends them as one batch and only then lets what waited
happen (parked ShareFetches woken), or, when the append fails, puts the share partition and the
lock timers the operation moved back as they were.

``ShareStateContext`` is what the runtime runs with: the data plane's own clock and timers, the
share partitions by (group id, topic id, partition) in the place of a coordinator's groups, and the
sink ``sink(partition of __share_group_state, [(key, value or None)], now_ms)``. Without a sink the
share partitions are not durable: no record is made, nothing is copied, nothing can fail.
"""
from __future__ import annotations

from typing import Callable, Hashable

from ..runtime import CoordinatorRuntime, Write
from ..timers import Timers
from . import state_records

Key = tuple[str, bytes, int]   # group id, topic id, partition
StateSink = Callable[[int, list, int], None]


class ShareStateContext:
    def __init__(self, sink: StateSink | None, state_partitions: int, now_ms: int) -> None:
        self.sink = sink
        self.durable = sink is not None
        self.state_partitions = state_partitions   # Kafka's share.coordinator.state.topic.num.partitions
        self.now_ms = now_ms
        self.timers = Timers()
        self.groups: dict = {}     # the share partitions by Key: what a write names and reverts
        self.write: Write | None = None
        self.runtime = CoordinatorRuntime(self)

    def advance(self, now_ms: int) -> None:
        self.now_ms = max(self.now_ms, now_ms)

    def append(self, key: Key, value: bytes | None) -> None:
        """One state record (a snapshot of the share partition, or its tombstone) for the write under way."""
        write = self.write
        if write is None or write.group_id != key:
            raise RuntimeError(f"a share state record for {key!r} outside its write")
        record = (state_records.encode_key(*key), value)
        write.records = write.records + [record] if write.records else [record]

    def on_written(self, apply: Callable[..., None], *args) -> None:
        """``apply(*args)`` once the write under way is in the log (at once outside a write)."""
        if self.write is None:
            apply(*args)
        else:
            self.write.effect(apply, args)

    def sink_write(self, write: Write) -> None:
        partition = state_records.state_partition(*write.group_id, self.state_partitions)
        self.sink(partition, write.records, self.now_ms)   # type: ignore[misc]  # durable: a sink

    def schedule_at(self, key: Hashable, deadline_ms: int, callback: Callable[[], None]) -> None:
        if self.write is not None:
            self.runtime.note_timer(self.write, key)
        self.timers.schedule(key, deadline_ms, callback)

    def cancel(self, key: Hashable) -> None:
        if self.write is not None:
            self.runtime.note_timer(self.write, key)
        self.timers.cancel(key)
