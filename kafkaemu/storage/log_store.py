"""Topics and their partition logs: the broker's whole data set, pure and in memory."""
from __future__ import annotations

import os
import re
from collections import deque
from dataclasses import dataclass, field
from functools import cached_property

from ..logging import get_logger
from .compaction import Budget, CompactionJob
from .compression import DEFAULT_LIMIT
from .fetch_purgatory import FetchPurgatory
from .partition_log import PartitionLog
from .producer_ids import ProducerIdManager
from .topic_config import validate_topic_configs

_LEGAL_TOPIC = re.compile(r"^[a-zA-Z0-9._-]{1,249}$")
OFFSETS_TOPIC = "__consumer_offsets"
log = get_logger("kafkaemu.storage")


def random_uuid() -> bytes:
    """A random (version 4) UUID's 16 bytes, as ``uuid.uuid4().bytes`` (the ``uuid`` module's import
    costs a start more than this)."""
    b = bytearray(os.urandom(16))
    b[6] = (b[6] & 0x0F) | 0x40
    b[8] = (b[8] & 0x3F) | 0x80
    return bytes(b)


class TopicError(Exception):
    def __init__(self, code, message: str = ""):
        super().__init__(message or code.name)
        self.code = code


@dataclass
class Topic:
    """A topic: its id, its partitions' logs and its configs (those set on it, and the broker's defaults)."""
    name: str
    topic_id: bytes
    partitions: list[PartitionLog]
    configs: dict[str, str] = field(default_factory=dict)
    internal: bool = False
    defaults: dict[str, str] = field(default_factory=dict)   # the broker's topic defaults (log.retention.ms, ...)


def validate_topic_name(name: str) -> bool:
    return bool(_LEGAL_TOPIC.match(name)) and name not in (".", "..")


class LogStore:
    def __init__(self, retention_check_interval_ms: int = 300000, cleaner_backoff_ms: int = 15000,
                 max_uncompressed_batch_bytes: int = DEFAULT_LIMIT,
                 topic_defaults: dict[str, str] | None = None, cleaner_budget: Budget | None = None) -> None:
        self.topics: dict[str, Topic] = {}
        self.topic_defaults = dict(topic_defaults or {})   # topic config -> the broker's value, where not Kafka's
        self._by_id: dict[bytes, Topic] = {}
        self.fetches = FetchPurgatory()
        self.producer_ids = ProducerIdManager()
        self.retention_check_interval_ms = retention_check_interval_ms
        self.cleaner_backoff_ms = cleaner_backoff_ms
        self._next_retention_ms: int | None = None
        self._next_clean_ms: int | None = None
        self.cleaner_budget = cleaner_budget or Budget()   # what one tick's cleaning may read
        self._to_clean: deque | None = None   # the partitions the cleaner's pass has still to visit
        self._cleaning: tuple | None = None   # (topic, its partition's CompactionJob) under way
        self.cleaner_batches_read = 0         # by every cleaning so far
        self.persistence = None   # a DataDir when the broker has a data directory
        self._open_changes = 0          # topic_changes() contexts entered and not yet left
        self._changes_unwritten = False  # a topic changed inside them: topics.json is written as they end
        self.max_uncompressed_batch_bytes = max_uncompressed_batch_bytes   # the most one batch may inflate to

    @cached_property
    def fetch_sessions(self):
        """The incremental fetch sessions (KIP-227), made by the first Fetch."""
        from .fetch_sessions import FetchSessionCache
        return FetchSessionCache()

    # -- time-driven work: long-poll deadlines, retention and compaction ---------------------
    def tick(self, now_ms: int) -> None:
        """Each piece of periodic work is rescheduled before it runs, and a failure in one (logged)
        does not stop the others; retention and compaction go on with the next partition."""
        self.fetches.expire(now_ms)
        if self._next_retention_ms is None:
            self._next_retention_ms = now_ms + self.retention_check_interval_ms
            self._next_clean_ms = now_ms + self.cleaner_backoff_ms
            return
        if now_ms >= self._next_retention_ms:
            self._next_retention_ms = now_ms + self.retention_check_interval_ms
            self.apply_retention(now_ms)
        if now_ms >= self._next_clean_ms:
            self._next_clean_ms = now_ms + self.cleaner_backoff_ms
            if self.clean(now_ms):
                self._next_clean_ms = now_ms   # the pass goes on at the next loop turn
        if self.persistence is not None:
            self.persistence.tick(now_ms)   # producer snapshots and recovery points

    def next_deadline_ms(self) -> int | None:
        checkpoint = self.persistence.next_deadline_ms() if self.persistence is not None else None
        deadlines = [d for d in (self.fetches.next_deadline_ms(), self._next_retention_ms, self._next_clean_ms,
                                 checkpoint) if d is not None]
        return min(deadlines) if deadlines else None

    def apply_retention(self, now_ms: int) -> None:
        """retention.ms / retention.bytes on every partition (cleanup.policy=delete)."""
        self._each_partition("retention", lambda p: p.apply_retention(now_ms))

    def clean(self, now_ms: int) -> bool:
        """One loop turn of the cleaner's pass over the partitions: compact those of
        cleanup.policy=compact topics that are dirty enough, reading at most the cleaner budget's
        batches (a partition's job goes on over the next turns). Returns whether the pass has
        work left; a job that fails is logged and the pass goes on with the next partition."""
        budget = Budget(self.cleaner_budget.batches, self.cleaner_budget.bytes)
        try:
            return self._clean_within(budget, now_ms)
        finally:
            self.cleaner_batches_read += self.cleaner_budget.batches - budget.batches

    def _clean_within(self, budget: Budget, now_ms: int) -> bool:
        if self._to_clean is None:
            self._to_clean = deque((t, p) for t in self.topics.values() for p in t.partitions)
        while not budget.spent:
            if self._cleaning is None:
                if not self._to_clean:
                    self._to_clean = None
                    return False
                topic, plog = self._to_clean.popleft()
                if self.topics.get(topic.name) is topic:
                    job = self._partition_work("compaction", topic, plog,
                                               lambda: CompactionJob.start(plog, now_ms, force=False))
                    self._cleaning = (topic, job) if job is not None else None
                continue
            topic, job = self._cleaning
            if self._partition_work("compaction", topic, job.plog, lambda: job.run(budget)) is not False:
                self._cleaning = None   # over: applied, abandoned or failed
        return True

    def _each_partition(self, work: str, run) -> None:
        for topic in list(self.topics.values()):
            for p in topic.partitions:
                self._partition_work(work, topic, p, lambda: run(p))

    @staticmethod
    def _partition_work(work: str, topic: Topic, plog: PartitionLog, run):
        try:
            return run()
        except Exception:
            log.exception("partition_work_failed", work=work, topic=topic.name, partition=plog.index)
            return None

    def topic_changes(self) -> "TopicChanges":
        """A context for the topic changes of one request: with a data directory, topics.json is
        written once as it ends (before the request is answered) rather than at each change, as
        Kafka's controller appends the records of one CreateTopics, DeleteTopics, CreatePartitions
        or AlterConfigs as one batch. Contexts nest; the outermost writes."""
        return TopicChanges(self)

    def _topics_changed(self) -> None:
        if self.persistence is None:
            return
        if self._open_changes:
            self._changes_unwritten = True
        else:
            self.persistence.topics_changed(self)

    def get(self, name: str) -> Topic | None:
        return self.topics.get(name)

    def by_id(self, topic_id: bytes) -> Topic | None:
        return self._by_id.get(topic_id)

    def create_topic(self, name: str, num_partitions: int, configs: dict[str, str] | None = None,
                     internal: bool = False, topic_id: bytes | None = None) -> Topic:
        from ..protocol.errors import ErrorCode
        if not validate_topic_name(name):
            raise TopicError(ErrorCode.INVALID_TOPIC_EXCEPTION, f"illegal topic name {name!r}")
        if name in self.topics:
            raise TopicError(ErrorCode.TOPIC_ALREADY_EXISTS, f"topic {name!r} already exists")
        if num_partitions < 1:
            raise TopicError(ErrorCode.INVALID_PARTITIONS, "number of partitions must be at least 1")
        message = validate_topic_configs(configs or {})
        if message:
            raise TopicError(ErrorCode.INVALID_CONFIG, message)
        topic = Topic(name, topic_id or random_uuid(), [], dict(configs or {}), internal, self.topic_defaults)
        topic.partitions = [self._new_partition(topic, i) for i in range(num_partitions)]
        self.topics[name] = topic
        self._by_id[topic.topic_id] = topic
        self._topics_changed()
        return topic

    def make_internal(self, name: str, configs: dict[str, str]) -> Topic:
        """Turn an existing topic into an internal one with these configs (repairing a
        ``__consumer_offsets`` that was created as an ordinary topic)."""
        topic = self.topics[name]
        topic.internal = True
        topic.configs = dict(configs)
        self._topics_changed()
        return topic

    def alter_topic_configs(self, name: str, configs: dict[str, str]) -> Topic:
        """Replace the topic's configs with ``configs``, which the caller has checked as
        AlterConfigs does (``validate_topic_configs``)."""
        topic = self.topics[name]
        topic.configs = configs
        self._topics_changed()
        return topic

    def _new_partition(self, topic: Topic, index: int) -> PartitionLog:
        plog = PartitionLog(topic, index)
        if self.persistence is not None:
            self.persistence.attach_partition(plog)   # its batches go to segment files
        plog.max_uncompressed_bytes = self.max_uncompressed_batch_bytes
        return plog

    def delete_topic(self, name: str) -> Topic:
        from ..protocol.errors import ErrorCode
        topic = self.topics.pop(name, None)
        if topic is None:
            raise TopicError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
        del self._by_id[topic.topic_id]
        # its batches go now: a partition log and its topic refer to each other, so without this
        # they would wait for a cyclic garbage collection, which may not come for many minutes
        for plog in topic.partitions:
            plog.batch_store.close()
        if self.persistence is not None:
            self.persistence.topic_deleted(topic)
        self._topics_changed()
        return topic

    def add_partitions(self, name: str, total: int) -> Topic:
        from ..protocol.errors import ErrorCode
        topic = self.topics.get(name)
        if topic is None:
            raise TopicError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
        if total <= len(topic.partitions):
            raise TopicError(ErrorCode.INVALID_PARTITIONS,
                             f"topic {name} has {len(topic.partitions)} partitions; cannot reduce or keep to {total}")
        topic.partitions.extend(self._new_partition(topic, i) for i in range(len(topic.partitions), total))
        self._topics_changed()
        return topic


class TopicChanges:
    """``LogStore.topic_changes()``: the changes made inside it reach the data directory as one
    write when the outermost one ends, also when it ends by an exception (what changed is in
    memory, and answered by later requests)."""
    __slots__ = ("store",)

    def __init__(self, store: LogStore) -> None:
        self.store = store

    def __enter__(self) -> LogStore:
        self.store._open_changes += 1
        return self.store

    def __exit__(self, *exc_info) -> None:
        store = self.store
        store._open_changes -= 1
        if not store._open_changes and store._changes_unwritten:
            store._changes_unwritten = False
            store.persistence.topics_changed(store)
