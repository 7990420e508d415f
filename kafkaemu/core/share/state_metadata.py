"""Which share partitions of a share group have their state in __share_group_state: Kafka's
ShareGroupStatePartitionMetadata (key version 15) and GroupMetadataManager's steps on it.

Partitions of the subscribed topics are first recorded as *initializing* (in the heartbeat's own
write, Kafka's addInitializingTopicsRecords), their share state is then initialized, and a write of
their own moves them to *initialized* (initializeShareGroupState), or out of initializing if that
failed (uninitializeShareGroupState). DeleteShareGroupOffsets moves an initialized topic to
*deleting* until its state is gone (sharePartitionsEligibleForOffsetDeletion,
completeDeleteShareGroupOffsets). A partition initializing for longer than
INITIALIZE_RETRY_INTERVAL_MS is initialized again (after a restart, what was initializing is
timed from the load, as Kafka's replay stamps it with the time of replay).

Immutable: every step makes a new one, so a group's snapshot for a failed write holds it as is.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Iterable, Mapping

INITIALIZE_RETRY_INTERVAL_MS = 30_000   # Kafka's group.share.initialize.retry.interval.ms default


@dataclass(frozen=True)
class TopicInit:
    name: str
    partitions: frozenset[int]
    since_ms: int = -1   # when it became initializing (not in the record)


@dataclass(frozen=True)
class StateMetadata:
    initializing: Mapping[bytes, TopicInit] = field(default_factory=dict)
    initialized: Mapping[bytes, TopicInit] = field(default_factory=dict)
    deleting: Mapping[bytes, str] = field(default_factory=dict)   # topic id -> name

    # ------------------------------------------------------------ what a heartbeat initializes
    def to_initialize(self, subscribed: Iterable[tuple[bytes, str, int]], now_ms: int) -> dict[bytes, TopicInit]:
        """Kafka's subscribedTopicsChangeMap: partitions of the subscribed topics (topic id, name,
        partition count) neither initialized nor initializing since less than the retry interval."""
        out: dict[bytes, TopicInit] = {}
        for tid, name, count in subscribed:
            done = set(self.initialized[tid].partitions) if tid in self.initialized else set()
            pending = self.initializing.get(tid)
            if pending is not None and now_ms - pending.since_ms < INITIALIZE_RETRY_INTERVAL_MS:
                done |= pending.partitions
            missing = frozenset(range(count)) - done
            if missing:
                out[tid] = TopicInit(name, missing, now_ms)
        return out

    def add_initializing(self, topics: Mapping[bytes, TopicInit]) -> "StateMetadata":
        """addInitializingTopicsRecords: merged into initializing (the new timestamp wins), and no
        longer deleting."""
        return replace(self, initializing=_combine(self.initializing, topics),
                       deleting={tid: n for tid, n in self.deleting.items() if tid not in topics})

    def mark_initialized(self, topics: Mapping[bytes, TopicInit]) -> "StateMetadata":
        """initializeShareGroupState: merged into initialized, removed from initializing."""
        return replace(self, initialized=_combine(self.initialized, topics),
                       initializing=_without(self.initializing, topics))

    def uninitialize(self, topics: Mapping[bytes, TopicInit]) -> "StateMetadata":
        """uninitializeShareGroupState: the partitions whose initialization failed leave initializing."""
        return replace(self, initializing=_without(self.initializing, topics))

    # ------------------------------------------------------------ deletion
    def start_deleting(self, topics: Mapping[bytes, str]) -> "StateMetadata":
        """An offsets delete of initialized topics: they go from initialized to deleting."""
        return replace(self, initialized={t: v for t, v in self.initialized.items() if t not in topics},
                       deleting={**self.deleting, **topics})

    def finish_deleting(self, topic_ids: Iterable[bytes]) -> "StateMetadata":
        gone = set(topic_ids)
        return replace(self, deleting={t: n for t, n in self.deleting.items() if t not in gone})

    def delete_all(self) -> "StateMetadata":
        """shareGroupBuildPartitionDeleteRequest (DeleteGroups): everything initialized or
        initializing is deleting, with what was deleting already."""
        deleting = dict(self.deleting)
        for topics in (self.initialized, self.initializing):
            deleting.update((tid, t.name) for tid, t in topics.items())
        return StateMetadata(deleting=deleting)

    def topics_deleted(self, topic_ids: Iterable[bytes]) -> "StateMetadata":
        """maybeCleanupShareGroupState: deleted topics leave every set."""
        gone = set(topic_ids)
        return StateMetadata({t: v for t, v in self.initializing.items() if t not in gone},
                             {t: v for t, v in self.initialized.items() if t not in gone},
                             {t: n for t, n in self.deleting.items() if t not in gone})

    def mentions(self, topic_id: bytes) -> bool:
        return topic_id in self.initializing or topic_id in self.initialized or topic_id in self.deleting

    def initialized_partitions(self) -> set[tuple[bytes, int]]:
        return {(tid, p) for tid, t in self.initialized.items() for p in t.partitions}

    # ------------------------------------------------------------ the record
    def value(self) -> tuple:
        """The record's content (what a write compares): no timestamps, sorted."""
        def topics(m):
            return tuple((tid, t.name, tuple(sorted(t.partitions))) for tid, t in sorted(m.items()))
        return topics(self.initializing), topics(self.initialized), tuple(sorted(self.deleting.items()))

    @classmethod
    def from_record(cls, v, now_ms: int) -> "StateMetadata":
        def topics(entries):
            return {bytes(e.topic_id): TopicInit(e.topic_name, frozenset(e.partitions), now_ms) for e in entries}
        return cls(topics(v.initializing_topics), topics(v.initialized_topics),
                   {bytes(e.topic_id): e.topic_name for e in v.deleting_topics})


def _combine(base: Mapping[bytes, TopicInit], more: Mapping[bytes, TopicInit]) -> dict[bytes, TopicInit]:
    """Kafka's combineInitMaps: partitions united per topic, the name and timestamp of ``more``."""
    out = dict(base)
    for tid, t in more.items():
        before = out.get(tid)
        out[tid] = TopicInit(t.name, t.partitions | (before.partitions if before else frozenset()), t.since_ms)
    return out


def _without(base: Mapping[bytes, TopicInit], less: Mapping[bytes, TopicInit]) -> dict[bytes, TopicInit]:
    out = {}
    for tid, t in base.items():
        left = t.partitions - less[tid].partitions if tid in less else t.partitions
        if left:
            out[tid] = replace(t, partitions=left)
    return out
