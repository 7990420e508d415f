"""What the parts of the coordinator share: the time, the timers, the groups of every kind, the
runtime that writes their records, the transition journal and the settings (Kafka's shard hands its
managers the same time, timer and snapshot registry).

Nothing here reads a clock: the coordinator moves ``now_ms`` forward as requests and ticks arrive.
Records, replies, transitions and timer changes made while a write is under way belong to it
(runtime.py): they become visible once its records are written, or are undone.
"""
from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Callable, Hashable

from .group_api import Group, GroupType, Record
from .placement import partition_for
from .runtime import CoordinatorRuntime, Write
from .coordinator_settings import CoordinatorSettings
from .group_configs import GroupConfigs
from .timers import Timers

# (partition of __consumer_offsets, records, now_ms); a transactional offset commit also passes
# keyword arguments producer_id and producer_epoch: its records form a transactional batch.
Sink = Callable[..., None]


@dataclass(frozen=True)
class Transition:
    """One group state change; a consumer group's generation_id is its group epoch."""
    at_ms: int
    group_id: str
    from_state: Enum
    to_state: Enum
    generation_id: int


def _no_sink(partition: int, records: list[Record], now_ms: int) -> None:
    pass


class CoordinatorContext:
    def __init__(self, settings: CoordinatorSettings, sink: Sink | None = None, now_ms: int = 0,
                 transition_log_size: int = 100000, group_configs: GroupConfigs | None = None) -> None:
        self.settings = settings
        self.group_configs = group_configs or GroupConfigs(settings)   # every kind looks its configs up here
        self.sink: Sink = sink or _no_sink
        self.now_ms = now_ms
        self.timers = Timers()
        # Every group by id, classic and consumer alike: one namespace, as Kafka's GroupMetadataManager.
        self.groups: dict[str, Group] = {}
        self.transitions: deque[Transition] = deque(maxlen=transition_log_size)
        self.transition_listeners: list[Callable[[Transition], None]] = []
        self.write: Write | None = None    # the write under way (runtime.py)
        self.runtime = CoordinatorRuntime(self)

    def group(self, group_id: str, kind: GroupType) -> Group | None:
        """The group with that id if it is of that kind."""
        group = self.groups.get(group_id)
        return group if group is not None and group.type is kind else None

    def groups_of(self, kind: GroupType) -> "GroupsOfKind":
        return GroupsOfKind(self.groups, kind)

    def advance(self, now_ms: int) -> None:
        self.now_ms = max(self.now_ms, now_ms)

    def append(self, group_id: str, records: list[Record], producer_id: int = -1, producer_epoch: int = -1) -> None:
        """Add ``records`` to the batch the write under way appends to the group's __consumer_offsets
        partition (a transactional batch of that producer when ``producer_id`` is given)."""
        if not records:
            return
        write = self.write
        if write is None or write.group_id != group_id:
            raise RuntimeError(f"records for group {group_id[:256]!r} outside its write")
        write.records = write.records + records if write.records else records
        if producer_id >= 0:
            write.producer_id, write.producer_epoch = producer_id, producer_epoch

    def has_records(self) -> bool:
        """Whether the write under way has decided any record yet."""
        write = self.write
        return write is not None and bool(write.records)

    def on_written(self, apply: Callable[..., None], *args) -> None:
        """``apply(*args)`` once the write under way is in the log (at once outside a write)."""
        write = self.write
        if write is None:
            apply(*args)
        elif write.effects is None:
            write.effects = [(apply, args)]
        else:
            write.effects.append((apply, args))

    def sink_write(self, write: Write) -> None:
        """The runtime's append: one batch to the group's partition through the injected sink."""
        partition = partition_for(write.group_id, self.settings.offsets.topic_num_partitions)
        if write.producer_id < 0:
            self.sink(partition, write.records, self.now_ms)
        else:
            self.sink(partition, write.records, self.now_ms, producer_id=write.producer_id,
                      producer_epoch=write.producer_epoch)

    def schedule(self, key: Hashable, delay_ms: int, callback: Callable[[], None]) -> None:
        write = self.write
        if write is not None:
            self.runtime.note_timer(write, key)
        self.timers.schedule(key, self.now_ms + delay_ms, callback)

    def postpone(self, key: Hashable, delay_ms: int) -> bool:
        """``Timers.postpone`` to ``delay_ms`` from now, undone with the write under way if it fails."""
        write = self.write
        if write is not None:
            self.runtime.note_timer(write, key)
        return self.timers.postpone(key, self.now_ms + delay_ms)

    def cancel(self, key: Hashable) -> None:
        write = self.write
        if write is not None:
            self.runtime.note_timer(write, key)
        self.timers.cancel(key)

    def record_transition(self, group_id: str, old: Enum, new: Enum, generation_id: int) -> None:
        t = Transition(self.now_ms, group_id, old, new, generation_id)
        write = self.write
        if write is None:
            self.publish_transition(t)
        else:
            write.effect(self.publish_transition, (t,))

    def publish_transition(self, t: Transition) -> None:
        self.transitions.append(t)
        for listener in list(self.transition_listeners):
            listener(t)


class GroupsOfKind(Mapping):
    """The groups of one kind, read-only: looking one up is O(1) (a group's state transitions look
    up its members, so with thousands of groups a filtered copy per lookup dominated a rebalance);
    iterating, like ``len``, walks a snapshot of every group, as a copied dict did."""
    __slots__ = ("_groups", "_kind")

    def __init__(self, groups: dict[str, Group], kind: GroupType) -> None:
        self._groups = groups
        self._kind = kind

    def __getitem__(self, group_id: str) -> Group:
        group = self._groups[group_id]
        if group.type is not self._kind:
            raise KeyError(group_id)
        return group

    def get(self, group_id: str, default=None):
        group = self._groups.get(group_id)
        return group if group is not None and group.type is self._kind else default

    def __contains__(self, group_id) -> bool:
        group = self._groups.get(group_id)
        return group is not None and group.type is self._kind

    def _snapshot(self) -> dict[str, Group]:
        return {gid: g for gid, g in self._groups.items() if g.type is self._kind}

    def __iter__(self):
        return iter(self._snapshot())

    def __len__(self) -> int:
        return len(self._snapshot())

    def keys(self):
        return self._snapshot().keys()

    def values(self):
        return self._snapshot().values()

    def items(self):
        return self._snapshot().items()

    def __repr__(self) -> str:
        return repr(self._snapshot())
