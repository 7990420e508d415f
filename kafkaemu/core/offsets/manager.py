"""Committed offsets: OffsetCommit, TxnOffsetCommit, OffsetFetch, OffsetDelete, retention, deleted
topics, replay.

Follows Apache Kafka's OffsetMetadataManager, written once for every kind of group: each check that
depends on the group goes through the Group interface (group_api.py), and the coordinator, as a
GroupDirectory, makes the simple group an accepted commit needs and keeps a committing member alive.
Every change is decided as records for __consumer_offsets (OffsetCommit records, tombstones) and
applied to the store only once they are written (``ctx.on_written``): a failed write leaves the
offsets as they were without copying them. Transactional commits are written as a transactional
batch of the producer and kept pending (pending.py) until the marker of its transaction completes
them.
"""
from __future__ import annotations

import itertools
from typing import Callable

from ...logging import get_logger
from ...protocol.constant_response import ConstantResponse
from ...protocol.errors import ErrorCode
from ..context import CoordinatorContext
from ..group_api import Group, GroupDirectory, GroupError, Record, by_commit_timestamp
from .pending import PendingOffsets
from .records import decode_key, decode_offset_value, encode_offset_key, encode_offset_value, tombstone
from .requests import OffsetCommit, TxnOffsetCommit
from .store import CommittedOffset, OffsetStore, is_expired

log = get_logger("kafkaemu.coordinator")
E = ErrorCode
PartitionExists = Callable[[str, int], bool]


def _int64(n: int) -> int:
    """``n`` wrapped to a signed 64-bit value, as Java's long arithmetic overflows."""
    return (n + (1 << 63)) % (1 << 64) - (1 << 63)


def _fetched(partition: int, c: CommittedOffset | None, unstable: bool = False) -> dict:
    if unstable:
        return {"partition_index": partition, "committed_offset": -1, "committed_leader_epoch": -1,
                "metadata": "", "error_code": int(E.UNSTABLE_OFFSET_COMMIT)}
    if c is None:
        return {"partition_index": partition, "committed_offset": -1, "committed_leader_epoch": -1,
                "metadata": "", "error_code": 0}
    return {"partition_index": partition, "committed_offset": c.offset, "committed_leader_epoch": c.leader_epoch,
            "metadata": c.metadata, "error_code": 0}


_ANSWERS_KEPT = 4096   # success answers kept, one per request shape (topics and partitions)
# read on every committed partition: an Enum member is a class attribute lookup, ~20 times a local's
# in CPython 3.11 (EnumType's __getattr__ puts every lookup on the slow path)
_NONE, _UNKNOWN_PARTITION, _METADATA_TOO_LARGE = (
    E.NONE, E.UNKNOWN_TOPIC_OR_PARTITION, E.OFFSET_METADATA_TOO_LARGE)


def _answer(req: OffsetCommit, codes: list[ErrorCode], partition_exists: PartitionExists | None) -> dict:
    """OffsetCommit's answer, each partition of the request with its code, as KafkaApis builds it
    (OffsetCommitResponse.Builder): first the topics with partitions it answers itself (unknown
    ones; an unknown topic named with no partitions too), one entry per topic in request order;
    then the coordinator's answer (an entry per request topic with partitions that exist) merged in
    (Builder.merge: with nothing answered before, as it is, a topic named twice twice; otherwise
    joined to the entry of its topic, or added). An existing topic named with no partitions is left
    out (KafkaApis passes no such topic on)."""
    it = iter(codes)
    ids = req.topic_ids
    answered: dict[str, dict] = {}   # by name: v10's ids name one topic each
    coordinator = []
    for topic, partitions in req.topics:
        if not partitions:   # a topic exists when its partition 0 does
            if partition_exists is not None and not partition_exists(topic, 0) and topic not in answered:
                answered[topic] = _entry(topic, ids)
            continue
        unknown, known = [], []
        for p in partitions:
            code = next(it)
            (unknown if code == _UNKNOWN_PARTITION else known).append(
                {"partition_index": p.partition_index, "error_code": int(code)})
        if unknown:
            entry = answered.get(topic)
            if entry is None:
                entry = answered[topic] = _entry(topic, ids)
            entry["partitions"].extend(unknown)
        if known:
            entry = _entry(topic, ids)
            entry["partitions"] = known
            coordinator.append(entry)
    if not answered:
        return {"topics": coordinator}
    for entry in coordinator:
        existing = answered.get(entry["name"])
        if existing is None:
            answered[entry["name"]] = entry
        else:
            existing["partitions"].extend(entry["partitions"])
    return {"topics": list(answered.values())}


def _entry(topic: str, ids: dict[str, bytes] | None) -> dict:
    entry = {"name": topic, "partitions": []}
    if ids is not None:
        entry["topic_id"] = ids[topic]
    return entry


class OffsetManager:
    def __init__(self, ctx: CoordinatorContext, groups: GroupDirectory) -> None:
        self.ctx = ctx
        self.groups = groups
        self.store = OffsetStore()
        self.pending = PendingOffsets()
        self._record_seq = itertools.count()   # orders records as their offsets in the log would
        self._answers: dict[tuple, ConstantResponse] = {}   # success answers, by request shape (commit)

    def has_offsets(self, group_id: str) -> bool:
        """Whether the group holds committed offsets or has transactions with offsets open."""
        return self.store.has_group(group_id) or self.pending.has_open_transactions(group_id)

    def _sequenced(self, committed: CommittedOffset) -> CommittedOffset:
        """A record read back, numbered in log order (a commit numbers its offsets as it decides them)."""
        c = committed  # not dataclasses.replace: a load replays every record
        return CommittedOffset(c.offset, c.leader_epoch, c.metadata, c.commit_timestamp_ms, c.expire_timestamp_ms,
                               next(self._record_seq))

    # ============================================================ OffsetCommit
    def commit(self, req: OffsetCommit, partition_exists: PartitionExists | None = None) -> dict:
        """The response topics in request order (newest shape). When every partition is committed
        the answer is the one kept for requests of that shape (their topics and partitions): a
        ConstantResponse, which the connection encodes once per version."""
        group = self.ctx.groups.get(req.group_id)
        group_error, check = None, None
        try:
            if group is not None:
                check = group.validate_offset_commit(req.member_id, req.group_instance_id, req.generation_id,
                                                     req.api_version)
            elif req.generation_id >= 0:
                raise GroupError(E.GROUP_ID_NOT_FOUND if req.api_version >= 9 else E.ILLEGAL_GENERATION)
            # else: a "simple" group, for offsets only, made once the commit is accepted
        except GroupError as exc:
            group_error = exc.code
        # Java long arithmetic, as Kafka's expireTimestampMs: a huge retention wraps to the past.
        now = self.ctx.now_ms
        expire = None if req.retention_time_ms == -1 else _int64(now + req.retention_time_ms)
        commits = []
        codes = []   # each partition's, in request order
        shape = []   # topic names and partition indexes, in request order: what a success answer is made of
        # KafkaApis answers unknown partitions itself: a request naming no other never reaches the
        # coordinator (no simple group is made for it, no session kept alive).
        reached = False
        limit = self.ctx.settings.offsets.metadata_max_bytes
        seq = self._record_seq   # numbered as decided: the write appends them next, in this order
        ids = req.topic_ids
        for topic, partitions in req.topics:
            shape.append(topic if ids is None else (topic, ids[topic]))   # a topic made again has a new id
            for p in partitions:
                index = p.partition_index
                shape.append(index)
                if partition_exists is not None and not partition_exists(topic, index):
                    codes.append(_UNKNOWN_PARTITION)
                    continue
                reached = True
                metadata = p.committed_metadata
                if group_error is not None:
                    codes.append(group_error)
                elif metadata is not None and len(metadata) > limit:
                    codes.append(_METADATA_TOO_LARGE)
                elif check is not None and (refused := check(topic, index)) != _NONE:
                    # the group's CommitPartitionValidator throws: the whole request fails with it
                    return self.commit_failed(refused, req, partition_exists)
                else:
                    codes.append(_NONE)
                    commits.append((topic, index, CommittedOffset(p.committed_offset, p.committed_leader_epoch,
                                                                  metadata or "", now, expire, next(seq))))
        # All or nothing: every record is built before anything changes; if one cannot be (a field its
        # record format cannot hold), the whole request fails as Kafka fails a write it cannot append.
        try:
            records = [(encode_offset_key(req.group_id, topic, partition), encode_offset_value(committed))
                       for topic, partition, committed in commits]
        except Exception:
            log.exception("offset_commit_record_failed", group=req.group_id[:256])
            # unknown partitions are answered before the coordinator in Kafka
            return _answer(req, [c if c == E.UNKNOWN_TOPIC_OR_PARTITION else E.UNKNOWN_SERVER_ERROR for c in codes],
                           partition_exists)
        if group_error is None and reached:
            self.ctx.append(req.group_id, records)
            self.ctx.on_written(self._apply_commits, req, commits, group)
        if len(commits) != len(codes):
            return _answer(req, codes, partition_exists)
        key = tuple(shape)
        answer = self._answers.get(key)
        if answer is None:
            if any(not partitions for _, partitions in req.topics):
                # its answer depends on whether that topic exists: never kept (so never found kept)
                return _answer(req, codes, partition_exists)
            if len(self._answers) >= _ANSWERS_KEPT:
                self._answers.clear()
            answer = self._answers[key] = ConstantResponse(_answer(req, codes, partition_exists))
        return answer

    def _apply_commits(self, req: OffsetCommit, commits: list, group: Group | None) -> None:
        """Once written: a member's commit keeps its session alive; a new simple group; the offsets."""
        if group is not None:
            self.groups.offset_committed(group, req.member_id)
        elif req.group_id not in self.ctx.groups:
            self.groups.create_simple_group(req.group_id)
        put, group_id = self.store.put, req.group_id
        for topic, partition, committed in commits:
            put(group_id, topic, partition, committed)

    @staticmethod
    def commit_failed(error: ErrorCode, req: OffsetCommit, partition_exists: PartitionExists | None = None) -> dict:
        """OffsetCommit's answer when its records could not be written: every partition the
        coordinator saw gets the error (unknown ones are answered before it, as in KafkaApis)."""
        return _answer(req, [E.UNKNOWN_TOPIC_OR_PARTITION if partition_exists is not None
                             and not partition_exists(topic, p.partition_index) else error
                             for topic, partitions in req.topics for p in partitions], partition_exists)

    # ============================================================ TxnOffsetCommit
    def commit_transactional(self, req: TxnOffsetCommit, partition_exists: PartitionExists | None = None) -> dict:
        """Kafka's commitTransactionalOffset: the response topics in request order. Unknown partitions
        answer UNKNOWN_TOPIC_OR_PARTITION (KafkaApis filters them out first, and when none is known
        the group is not looked at); a group-level error answers every other partition."""
        known = [[partition_exists is None or partition_exists(t, p.partition_index) for p in parts]
                 for t, parts in req.topics]

        def answer(codes: list[list[ErrorCode]]) -> dict:
            return {"topics": [{"name": t, "partitions": [{"partition_index": p.partition_index, "error_code": int(c)}
                                                          for p, c in zip(parts, row)]}
                               for (t, parts), row in zip(req.topics, codes)]}

        def every(code: ErrorCode) -> list[list[ErrorCode]]:
            return [[code if ok else E.UNKNOWN_TOPIC_OR_PARTITION for ok in row] for row in known]

        if not any(any(row) for row in known):
            return answer(every(E.UNKNOWN_TOPIC_OR_PARTITION))
        group = self.ctx.groups.get(req.group_id)
        check = None
        # v6 (Kafka 4.4's TxnOffsetCommitRequest.supportsGroupIdNotFoundError / supportsStaleMemberEpochError)
        # answers these two as they are; older versions ILLEGAL_GENERATION (validateTransactionalOffsetCommit)
        v6 = req.api_version >= 6
        try:
            if group is not None:
                check = group.validate_offset_commit(req.member_id, req.group_instance_id, req.generation_id,
                                                     req.api_version, is_transactional=True)
            elif req.generation_id >= 0:
                raise GroupError(E.GROUP_ID_NOT_FOUND if v6 else E.ILLEGAL_GENERATION)
        except GroupError as exc:
            return answer(every(E.ILLEGAL_GENERATION if exc.code == E.STALE_MEMBER_EPOCH and not v6 else exc.code))
        limit = self.ctx.settings.offsets.metadata_max_bytes
        now = self.ctx.now_ms
        codes, commits = [], []
        for (topic, parts), exists in zip(req.topics, known):
            row = []
            for p, ok in zip(parts, exists):
                if not ok:
                    row.append(E.UNKNOWN_TOPIC_OR_PARTITION)
                elif p.committed_metadata is not None and len(p.committed_metadata) > limit:
                    row.append(E.OFFSET_METADATA_TOO_LARGE)
                elif check is not None and (refused := check(topic, p.partition_index)) != E.NONE:
                    # the group's CommitPartitionValidator throws: the whole request fails
                    return answer(every(E.ILLEGAL_GENERATION if refused == E.STALE_MEMBER_EPOCH and not v6
                                        else refused))
                else:
                    row.append(E.NONE)
                    commits.append((topic, p.partition_index, CommittedOffset(p.committed_offset, p.committed_leader_epoch, p.committed_metadata or "", now,
                                                                        None, next(self._record_seq))))
            codes.append(row)
        try:
            records = [(encode_offset_key(req.group_id, topic, partition), encode_offset_value(committed))
                       for topic, partition, committed in commits]
        except Exception:
            log.exception("txn_offset_commit_record_failed", group=req.group_id[:256])
            return answer([[c if c == E.UNKNOWN_TOPIC_OR_PARTITION else E.UNKNOWN_SERVER_ERROR for c in row]
                           for row in codes])
        self.ctx.append(req.group_id, records, producer_id=req.producer_id, producer_epoch=req.producer_epoch)
        self.ctx.on_written(self._apply_txn_commits, req, commits)
        return answer(codes)

    def _apply_txn_commits(self, req: TxnOffsetCommit, commits: list) -> None:
        if req.group_id not in self.ctx.groups:
            self.groups.create_simple_group(req.group_id)
        for topic, partition, committed in commits:
            self.pending.put(req.producer_id, req.group_id, topic, partition, committed)

    txn_commit_failed = commit_failed   # TxnOffsetCommit's request has the same topics

    def complete_transaction(self, producer_id: int, commit: bool) -> int:
        """Kafka's replayEndTransactionMarker: the producer's pending offsets become the committed ones
        (each only if written after the one committed now) or vanish; returns how many applied."""
        applied = 0
        for group_id, topics in self.pending.take(producer_id).items():
            if not commit:
                continue
            for topic, parts in topics.items():
                for partition, committed in parts.items():
                    existing = self.store.get(group_id, topic, partition)
                    if existing is None or committed.record_seq > existing.record_seq:
                        self.store.put(group_id, topic, partition, committed)
                        applied += 1
        return applied

    # ============================================================ OffsetFetch
    def fetch(self, group_id: str, topics: list[tuple[str, list[int]]] | None, member_id: str | None = None,
              member_epoch: int = -1, require_stable: bool = False) -> dict:
        """One group's answer in the OffsetFetch v8 group shape; ``topics=None`` means every committed one.
        ``require_stable``: a partition with a pending transactional commit answers UNSTABLE_OFFSET_COMMIT."""
        group = self.ctx.groups.get(group_id)
        stored = self.store.group(group_id)
        if group is not None:
            try:
                group.validate_offset_fetch(member_id, member_epoch)
            except GroupError as exc:
                if exc.code != E.GROUP_ID_NOT_FOUND:
                    return {"group_id": group_id, "error_code": int(exc.code), "topics": []}
                stored = {}   # as Kafka: a group gone (Dead) answers every partition without an offset
        pending = self.pending.partitions(group_id) if require_stable else set()
        if topics is None:
            out = [{"name": topic, "partitions": [_fetched(p, c, (topic, p) in pending)
                                                  for p, c in sorted(parts.items())]}
                   for topic, parts in stored.items()]
        else:
            out = [{"name": topic, "partitions": [_fetched(p, stored.get(topic, {}).get(p), (topic, p) in pending)
                                                  for p in partitions]}
                   for topic, partitions in topics]
        return {"group_id": group_id, "topics": out, "error_code": 0}

    # ============================================================ OffsetDelete
    def delete(self, group_id: str, topics: list[tuple[str, list[int]]],
               partition_exists: PartitionExists | None = None) -> dict:
        if not group_id:
            return {"error_code": int(E.INVALID_GROUP_ID), "topics": []}
        group = self.ctx.groups.get(group_id)
        if group is None:
            return {"error_code": int(E.GROUP_ID_NOT_FOUND), "topics": []}
        try:
            group.validate_offset_delete()
        except GroupError as exc:
            return {"error_code": int(exc.code), "topics": []}
        out, records, removed = [], [], {}
        for topic, partitions in topics:
            subscribed = group.is_subscribed_to_topic(topic)
            parts_out = []
            for p in partitions:
                if partition_exists is not None and not partition_exists(topic, p):
                    code = E.UNKNOWN_TOPIC_OR_PARTITION
                elif subscribed:
                    code = E.GROUP_SUBSCRIBED_TO_TOPIC
                else:
                    code = E.NONE
                    if (topic, p) not in removed and (self.store.get(group_id, topic, p) is not None
                                                      or self.pending.is_pending(group_id, topic, p)):
                        records.append(tombstone(group_id, topic, p))
                        removed[(topic, p)] = None
                parts_out.append({"partition_index": p, "error_code": int(code)})
            out.append({"name": topic, "partitions": parts_out})
        self.ctx.append(group_id, records)
        self.ctx.on_written(self._remove, group_id, removed)
        return {"error_code": 0, "topics": out}

    def _remove(self, group_id: str, partitions) -> None:
        for topic, p in partitions:
            self.store.remove(group_id, topic, p)
            self.pending.remove(group_id, topic, p)

    # ============================================================ removal
    def delete_all(self, group_id: str) -> list[Record]:
        """A deleted group's offsets, pending ones too: returns their tombstones for the caller to
        write; they are dropped once written."""
        committed = [(t, p) for t, parts in self.store.group(group_id).items() for p in parts]
        pending_only = sorted(self.pending.partitions(group_id) - set(committed))
        self.ctx.on_written(self._remove, group_id, committed + pending_only)
        return [tombstone(group_id, t, p) for t, p in committed + pending_only]


    def expire(self, group_id: str, group: Group | None) -> int:
        """Kafka's cleanupExpiredOffsets: tombstone the group's offsets past retention that it does
        not consume; returns how many expired."""
        base_of = by_commit_timestamp if group is None else group.offset_expiration_base()
        if base_of is None:
            return 0
        now, retention = self.ctx.now_ms, self.ctx.settings.offsets.retention_ms
        records, expired = [], []
        for topic, parts in self.store.group(group_id).items():
            if group is not None and group.is_subscribed_to_topic(topic):
                continue
            for p, c in parts.items():
                if is_expired(c, base_of(c), now, retention) and not self.pending.is_pending(group_id, topic, p):
                    expired.append((topic, p))
                    records.append(tombstone(group_id, topic, p))
        self.ctx.append(group_id, records)
        self.ctx.on_written(self._remove_committed, group_id, expired)
        return len(records)

    def _remove_committed(self, group_id: str, partitions) -> None:
        for topic, p in partitions:
            self.store.remove(group_id, topic, p)

    def topic_deleted(self, group_id: str, topic: str) -> int:
        """Kafka's onPartitionsDeleted for one group: tombstones for its committed offsets of a
        deleted topic, dropped once written; returns how many."""
        partitions = [(topic, p) for p in self.store.group(group_id).get(topic, {})]
        self.ctx.append(group_id, [tombstone(group_id, t, p) for t, p in partitions])
        self.ctx.on_written(self._remove_committed, group_id, partitions)
        return len(partitions)

    # ============================================================ replay of __consumer_offsets
    def replay(self, key: bytes, value: bytes | None, producer_id: int = -1) -> None:
        """Apply one OffsetCommit record (of a transactional batch of ``producer_id``: pending until
        its marker); offsets of a group not (yet) known make a simple group hold them."""
        k = decode_key(key)
        if value is None:
            self.store.remove(k.group_id, k.topic, k.partition)
            self.pending.remove(k.group_id, k.topic, k.partition)
            return
        committed = self._sequenced(decode_offset_value(value))
        if producer_id < 0:
            self.store.put(k.group_id, k.topic, k.partition, committed)
        else:
            self.pending.put(producer_id, k.group_id, k.topic, k.partition, committed)
        if k.group_id not in self.ctx.groups:
            self.groups.create_simple_group(k.group_id)
