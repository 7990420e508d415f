"""A streams group's topology and its configuration against the topics that exist.

``StreamsTopology`` is what the first member sends (Kafka's StreamsTopology / StreamsGroupTopologyValue):
subtopologies with their source topics, the repartition topics they write and read, their
changelog topics and copartition groups. ``configure`` is Kafka's InternalTopicManager.configureTopics:
with every source topic present it decides the partition counts of the internal topics
(repartition topics from the subtopologies writing them, copartitioned topics alike, a changelog
topic as many as its subtopology has tasks), the number of tasks of each subtopology, and which
internal topics must still be created. A topology that cannot be configured (a source topic
missing, topics not copartitioned) has no subtopologies and a status for the members. An internal
topic given fewer than one partition (a negative count in the topology) fails the heartbeat with
UNKNOWN_SERVER_ERROR, as Kafka's ConfiguredInternalTopic refuses it with an IllegalArgumentException.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field, replace
from typing import Callable

from ...protocol.errors import ErrorCode
from ..group_api import GroupError

# StreamsGroupHeartbeatResponse.Status codes
STALE_TOPOLOGY, MISSING_SOURCE_TOPICS, INCORRECTLY_PARTITIONED_TOPICS = 0, 1, 2
MISSING_INTERNAL_TOPICS, SHUTDOWN_APPLICATION = 3, 4
MISSING_CLIENT_TAGS = 6   # Kafka 4.4: a member lacks a client tag rack-aware standby assignment needs


@dataclass(frozen=True)
class TopicInfo:
    """An internal topic as the topology declares it: partitions 0 means "decide", replication
    factor 0 the broker's default."""
    name: str
    partitions: int = 0
    replication_factor: int = 0
    configs: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Subtopology:
    subtopology_id: str
    source_topics: tuple[str, ...] = ()
    repartition_sink_topics: tuple[str, ...] = ()
    state_changelog_topics: tuple[TopicInfo, ...] = ()
    repartition_source_topics: tuple[TopicInfo, ...] = ()
    # each group: (indexes into source_topics, indexes into repartition_source_topics)
    copartition_groups: tuple[tuple[tuple[int, ...], tuple[int, ...]], ...] = ()

    def copartitioned_topic_sets(self) -> list[set[str]]:
        return [{self.source_topics[i] for i in sources} | {self.repartition_source_topics[i].name for i in reps}
                for sources, reps in self.copartition_groups]


@dataclass(frozen=True)
class StreamsTopology:
    epoch: int
    subtopologies: tuple[Subtopology, ...]   # sorted by id

    def required_topics(self) -> set[str]:
        out: set[str] = set()
        for s in self.subtopologies:
            out.update(s.source_topics)
            out.update(t.name for t in s.repartition_source_topics)
            out.update(t.name for t in s.state_changelog_topics)
        return out

    def source_topics(self) -> set[str]:
        return {t for s in self.subtopologies for t in s.source_topics} | \
            {t.name for s in self.subtopologies for t in s.repartition_source_topics}


def _topic_info(t) -> TopicInfo:
    return TopicInfo(t.name, t.partitions, t.replication_factor,
                     tuple(sorted((kv.key, kv.value) for kv in t.topic_configs or ())))


def from_request(topology) -> StreamsTopology:
    """The heartbeat's Topology as a StreamsTopology; STREAMS_INVALID_TOPOLOGY for what Kafka
    refuses (a changelog topic with a partition count, a copartition index out of range)."""
    subs = []
    for s in topology.subtopologies or ():
        changelogs = tuple(_topic_info(t) for t in s.state_changelog_topics or ())
        for t in changelogs:
            if t.partitions != 0:
                raise GroupError(ErrorCode.STREAMS_INVALID_TOPOLOGY,
                                 f"Changelog topic {t.name} must have an undefined partition count, "
                                 f"but it is set to {t.partitions}.")
        sources = tuple(s.source_topics or ())
        reps = tuple(_topic_info(t) for t in s.repartition_source_topics or ())
        groups = []
        for g in s.copartition_groups or ():
            src, rep = tuple(g.source_topics or ()), tuple(g.repartition_source_topics or ())
            if any(not 0 <= i < len(sources) for i in src) or any(not 0 <= i < len(reps) for i in rep):
                raise GroupError(ErrorCode.STREAMS_INVALID_TOPOLOGY,
                                 f"Copartition group of subtopology {s.subtopology_id} refers to a topic it does "
                                 f"not have.")
            groups.append((src, rep))
        subs.append(Subtopology(s.subtopology_id, sources, tuple(s.repartition_sink_topics or ()), changelogs,
                                reps, tuple(groups)))
    return StreamsTopology(topology.epoch, tuple(sorted(subs, key=lambda x: x.subtopology_id)))


@dataclass(frozen=True)
class InternalTopic:
    """A topic the broker creates for the group (Kafka's CreatableTopic of it)."""
    name: str
    partitions: int
    replication_factor: int   # -1: the broker's default
    configs: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class ConfiguredSubtopology:
    num_tasks: int
    source_topics: tuple[str, ...]
    repartition_sink_topics: tuple[str, ...]
    state_changelog_topics: tuple[InternalTopic, ...]
    repartition_source_topics: tuple[InternalTopic, ...]
    stateful: bool


@dataclass(frozen=True)
class ConfiguredTopology:
    epoch: int
    subtopologies: dict[str, ConfiguredSubtopology] | None   # None: not configurable now
    to_create: dict[str, InternalTopic] = field(default_factory=dict)
    status: tuple[int, str] | None = None   # (Status code, detail) while not ready
    metadata_hash: int = 0                  # of the topics it was configured against

    @property
    def ready(self) -> bool:
        return self.subtopologies is not None and self.status is None

    # the TopologyDescriber the assignor reads
    def subtopology_ids(self) -> list[str]:
        return sorted(self.subtopologies or ())

    def max_num_input_partitions(self, subtopology_id: str) -> int:
        return self.subtopologies[subtopology_id].num_tasks

    def is_stateful(self, subtopology_id: str) -> bool:
        return self.subtopologies[subtopology_id].stateful


class _Describer:
    """ConfiguredTopology as the assignor's TopologyDescriber."""

    def __init__(self, configured: ConfiguredTopology) -> None:
        self._c = configured

    def subtopologies(self) -> list[str]:
        return self._c.subtopology_ids()

    def max_num_input_partitions(self, subtopology_id: str) -> int:
        return self._c.max_num_input_partitions(subtopology_id)

    def is_stateful(self, subtopology_id: str) -> bool:
        return self._c.is_stateful(subtopology_id)


def describer(configured: ConfiguredTopology) -> _Describer:
    return _Describer(configured)


class _Unconfigurable(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status, self.message = status, message


def summarize(topics) -> str:
    return ", ".join(sorted(topics))


def metadata_hash(topology: StreamsTopology, partitions_of: Callable[[str], int | None]) -> int:
    """A stable hash of the required topics that exist and their partition counts (Kafka hashes
    topic ids, names, partitions and racks): when it changes the topology is configured again."""
    seen = [(t, n) for t in sorted(topology.required_topics()) if (n := partitions_of(t)) is not None]
    if not seen:
        return 0
    return int.from_bytes(hashlib.blake2b(repr(seen).encode(), digest_size=8).digest(), "big", signed=True)


def configure(topology: StreamsTopology, partitions_of: Callable[[str], int | None]) -> ConfiguredTopology:
    """Kafka's InternalTopicManager.configureTopics against the topics ``partitions_of`` knows."""
    configured = _configure(topology, partitions_of)
    return replace(configured, metadata_hash=metadata_hash(topology, partitions_of))


def _configure(topology: StreamsTopology, partitions_of: Callable[[str], int | None]) -> ConfiguredTopology:
    try:
        missing = {t for s in topology.subtopologies for t in s.source_topics if partitions_of(t) is None}
        if missing:
            raise _Unconfigurable(MISSING_SOURCE_TOPICS, f"Source topics {summarize(missing)} are missing.")
        decided = _decide_partition_counts(topology, partitions_of)

        def count(topic: str) -> int:
            n = partitions_of(topic)
            return n if n is not None else decided[topic]

        subs = {}
        for s in topology.subtopologies:
            inputs = list(s.source_topics) + [t.name for t in s.repartition_source_topics]
            tasks = max((count(t) for t in inputs), default=0)
            reps = tuple(InternalTopic(t.name, decided[t.name], t.replication_factor or -1, t.configs)
                         for t in s.repartition_source_topics)
            logs = tuple(InternalTopic(t.name, tasks, t.replication_factor or -1, t.configs)
                         for t in s.state_changelog_topics)
            subs[s.subtopology_id] = ConfiguredSubtopology(tasks, s.source_topics, s.repartition_sink_topics, logs,
                                                           reps, bool(s.state_changelog_topics))
        to_create = {t.name: t for c in subs.values()
                     for t in c.repartition_source_topics + c.state_changelog_topics}
        for t in to_create.values():   # Kafka's ConfiguredInternalTopic: an IllegalArgumentException
            if t.partitions < 1:
                raise GroupError(ErrorCode.UNKNOWN_SERVER_ERROR, "Number of partitions must be at least 1.")
        for name in sorted(topology.required_topics()):
            existing = partitions_of(name)
            expected = to_create.pop(name, None) if existing is not None else None
            if expected is not None and existing != expected.partitions:
                raise _Unconfigurable(INCORRECTLY_PARTITIONED_TOPICS,
                                      f"Existing topic {name} has different number of partitions: expected "
                                      f"{expected.partitions}, found {existing}")
    except _Unconfigurable as exc:
        return ConfiguredTopology(topology.epoch, None, {}, (exc.status, exc.message))
    status = (MISSING_INTERNAL_TOPICS, f"Internal topics are missing: {summarize(to_create)}") if to_create else None
    return ConfiguredTopology(topology.epoch, dict(sorted(subs.items())), to_create, status)


def _decide_partition_counts(topology: StreamsTopology, partitions_of) -> dict[str, int]:
    """Repartition topics' counts (RepartitionTopics.setup), then copartitioning enforced
    (CopartitionedTopicsEnforcer); changelog counts follow from the tasks."""
    decided = {t.name: t.partitions for s in topology.subtopologies for t in s.repartition_source_topics
               if t.partitions}
    pending = [t.name for s in topology.subtopologies for t in s.repartition_source_topics if not t.partitions]
    while pending:
        left = []
        for name in pending:
            candidates = []
            for s in topology.subtopologies:
                if name in s.repartition_sink_topics:
                    candidates += [partitions_of(t) for t in s.source_topics]
                    candidates += [decided.get(t.name) for t in s.repartition_source_topics]
            known = [c for c in candidates if c is not None]
            if known:
                decided[name] = max(known)
            else:
                left.append(name)
        if len(left) == len(pending):
            raise _Unconfigurable(MISSING_SOURCE_TOPICS,
                                  "Failed to compute number of partitions for all repartition topics, make sure all "
                                  "user input topics are created and all pattern subscriptions match at least one "
                                  "topic in the cluster")
        pending = left
    repartition = {t.name: t for s in topology.subtopologies for t in s.repartition_source_topics}
    for s in topology.subtopologies:
        for group in s.copartitioned_topic_sets():
            _enforce_copartitioning(group, repartition, decided, partitions_of)
    return decided


def _java_map(counts: dict[str, int]) -> str:
    return "{" + ", ".join(f"{k}={v}" for k, v in sorted(counts.items())) + "}"


def _enforce_copartitioning(group: set[str], repartition: dict[str, TopicInfo], decided: dict[str, int],
                            partitions_of) -> None:
    internal = {t for t in group if t in repartition}
    external = {t: partitions_of(t) for t in group - internal}
    if not internal and not external:
        return
    if not external:
        fixed = {t: repartition[t].partitions for t in internal if repartition[t].partitions}
        if fixed and len(set(fixed.values())) > 1:
            raise _Unconfigurable(INCORRECTLY_PARTITIONED_TOPICS,
                                  f"Following topics do not have the same number of partitions: [{_java_map(fixed)}]")
        n = next(iter(fixed.values())) if fixed else max(decided[t] for t in internal)
    else:
        if len(set(external.values())) > 1:
            raise _Unconfigurable(INCORRECTLY_PARTITIONED_TOPICS, f"Topics not co-partitioned: [{_java_map(external)}]")
        n = next(iter(external.values()))
    for t in sorted(internal):
        if not repartition[t].partitions:
            decided[t] = n
        elif decided[t] != n:
            raise _Unconfigurable(INCORRECTLY_PARTITIONED_TOPICS,
                                  f"Number of partitions [{decided[t]}] of repartition topic [{t}] doesn't match "
                                  f"number of partitions [{n}] of the source topic.")
