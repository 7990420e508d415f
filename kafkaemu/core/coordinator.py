"""The group coordinator: a thin router over the classic and consumer group managers and the offsets
manager (Apache Kafka's GroupCoordinatorShard over GroupMetadataManager and OffsetMetadataManager).

It owns the time, the timers, the runtime and the transition journal (the shared context), knows
which kind of group holds a group id, and has one short method per request. Every public method
takes ``now_ms`` first; JoinGroup and SyncGroup take a ``respond`` callable that may be called later
(a parked reply released by another request or by a timer). ``tick(now_ms)`` fires due timers;
``next_deadline_ms()`` says when the next one is due.

Each request that may write runs as one write of the runtime (runtime.py, Kafka's
CoordinatorRuntime): the managers decide records (offset commits, group metadata, tombstones) and
the reply; the runtime appends the records through an injected sink
``sink(partition, [(key, value_or_None)], now_ms)`` for __consumer_offsets (transactional offset
commits add ``producer_id=``/``producer_epoch=``: a transactional batch), and only then answers. A
sink that raises (``runtime.AppendError`` with the log's error, or anything else) leaves the group
as it was and the request gets Kafka's error for it. ``load`` replays the records, with the end
markers of transactions. ``complete_transaction`` applies a marker written now.
"""
from __future__ import annotations

from typing import Callable, Iterable

from ..logging import get_logger
from ..protocol.errors import ErrorCode
from ..protocol.operations import GROUP_OPERATIONS, NOT_REQUESTED
from .classic import records as classic_records
from .classic.manager import ClassicGroupManager
from .classic.member import Reply
from .classic.requests import Heartbeat, JoinGroup, LeaveGroup, SyncGroup
from .classic.responses import join_response, sync_response
from .consumer import records as consumer_records
from .consumer.group import TopicMeta
from .consumer.manager import ConsumerGroupManager
from .consumer.requests import ConsumerHeartbeat
from .context import CoordinatorContext, Sink, Transition
from .group_api import Group, GroupError, GroupType
from .kind import KindFactory
from .migration import OnlineMigration
from .modern import error_response
from .offsets import records as offsets_records
from .offsets.manager import OffsetManager, PartitionExists
from .offsets.requests import OffsetCommit, TxnOffsetCommit
from .placement import partition_for
from .ports import GroupPorts
from .record_format import EndTransactionMarker, UnknownRecordType, replay_or_skip, split
from .coordinator_settings import CoordinatorSettings
from .group_configs import GroupConfigs
from .share import records as share_records
from .share.events import ShareGroupEvents
from .share.manager import ShareGroupManager
from .share.requests import ShareHeartbeat
from .streams import describe as streams_describe, records as streams_records
from .streams.manager import INTERNAL_TOPICS, StreamsGroupManager
from .streams.requests import StreamsHeartbeat

log = get_logger("kafkaemu.coordinator")
E = ErrorCode
RETENTION_KEY = ("offsets-retention",)

RECORD_MODULES = (offsets_records, classic_records, consumer_records, share_records, streams_records)   # by the key versions they read
_KEY_DECODERS = {version: records.decode_key for records in RECORD_MODULES for version in records.KEY_VERSIONS}


def record_group_id(key: bytes) -> str | None:
    """The group a __consumer_offsets record key belongs to, or None for anything else."""
    try:
        return _KEY_DECODERS[split(key)[0]](key).group_id
    except Exception:
        return None


class GroupCoordinator:
    """``ports``: what the core needs from outside (ports.py); ``kinds``: factories of further group
    kinds (kind.py), each called with the shared context, beside the four built in."""

    def __init__(self, settings: CoordinatorSettings | None = None, sink: Sink | None = None, now_ms: int = 0,
                 transition_log_size: int = 100000, share_events: ShareGroupEvents | None = None,
                 ports: GroupPorts = GroupPorts(), kinds: Iterable[KindFactory] = ()) -> None:
        """``share_events``: the share data plane (an owner of its own, Kafka's SharePartitionManager)
        hearing of share groups (share/events.py); None: a coordinator without one. The groups' configs
        (``ports.group_configs``, the broker's, shared with the data plane; None: this coordinator's
        own) are where every kind looks its own up."""
        settings = settings or CoordinatorSettings()
        ctx = self.ctx = CoordinatorContext(settings, sink, now_ms, transition_log_size,
                                            ports.group_configs or GroupConfigs(settings))
        self._scope = _RequestScope(ctx)
        self._run = ctx.runtime.run
        group_configs = ctx.group_configs
        self.classic = ClassicGroupManager(ctx)
        # the online downgrade is the migration's, which needs the consumer manager: looked up when called
        self.consumer = ConsumerGroupManager(ctx, group_configs, lambda group, member_id: self.migration.downgrade(
            group, member_id), ports.may_describe)
        self.migration = OnlineMigration(ctx, self.classic, self.consumer)
        self.offsets = OffsetManager(ctx, self)
        self.share = ShareGroupManager(ctx, group_configs, share_events)
        self.streams = StreamsGroupManager(ctx, group_configs, ports.partitions_of)
        self.kinds: dict = {kind.type: kind for kind in (self.classic, self.consumer, self.share, self.streams,
                                                         *(make(ctx) for make in kinds))}
        self._replayers = {version: self.offsets.replay for version in offsets_records.KEY_VERSIONS}
        self._replayers.update((version, kind.replay) for kind in self.kinds.values()
                               for version in kind.records.KEY_VERSIONS)
        self._offset_key_versions = frozenset(offsets_records.KEY_VERSIONS)
        self._schedule_retention_check()

    @property
    def settings(self) -> CoordinatorSettings:
        return self.ctx.settings

    @property
    def group_configs(self) -> GroupConfigs:
        return self.ctx.group_configs

    @property
    def timers(self):
        return self.ctx.timers

    @property
    def transitions(self) -> Iterable[Transition]:
        return self.ctx.transitions

    @property
    def transition_listeners(self) -> list[Callable[[Transition], None]]:
        return self.ctx.transition_listeners

    # ============================================================ time
    def tick(self, now_ms: int) -> None:
        """Fire every timer due at ``now_ms``, each at its own deadline's time."""
        self.ctx.timers.poll(now_ms, self.ctx.advance)
        self.ctx.advance(now_ms)

    def next_deadline_ms(self) -> int | None:
        return self.ctx.timers.next_deadline()

    def _request(self, now_ms: int) -> "_RequestScope":
        """``with self._request(now_ms):`` around each request: timers due by ``now_ms`` fire first,
        and timers due now (a zero initial rebalance delay) complete within the request that set them."""
        if self.ctx.runtime.batch is not None:   # lingering commits are written before anything else
            self.ctx.runtime.flush()
        self.tick(now_ms)
        return self._scope

    # ============================================================ which group, which manager
    def partition_for(self, group_id: str) -> int:
        return partition_for(group_id, self.settings.offsets.topic_num_partitions)

    def group(self, group_id: str) -> Group | None:
        return self.ctx.groups.get(group_id)

    def _manager(self, group: Group):
        return self.kinds[group.type]

    # GroupDirectory, for the offsets manager
    def create_simple_group(self, group_id: str) -> Group:
        return self.classic.create_group(group_id)

    def offset_committed(self, group: Group, member_id: str) -> None:
        self.kinds[group.type].offset_committed(group, member_id)   # _manager, inline: every commit

    # ============================================================ classic group protocol
    def join_group(self, now_ms: int, req: JoinGroup, respond: Reply, topics: dict[str, TopicMeta] | None = None
                   ) -> None:
        """``topics``: what a consumer group assigns from (a classic member may join one)."""
        with self._request(now_ms):
            deferred = self.ctx.runtime.deferred(respond)
            self._run(req.group_id, self._join_group, (req, deferred, topics),
                      lambda error, *_: respond(join_response(error, req.member_id)))

    def _join_group(self, req: JoinGroup, respond: Reply, topics: dict[str, TopicMeta] | None) -> None:
        """As Kafka's classicGroupJoin: a non-empty consumer group serves the member itself; an
        empty one is replaced by a classic group (its offsets stay)."""
        group = self.group(req.group_id)
        s = self.settings.classic
        if group is not None and group.type is GroupType.CONSUMER \
                and s.min_session_timeout_ms <= req.session_timeout_ms <= s.max_session_timeout_ms:
            if not group.is_empty():
                return self.consumer.classic.join(group, req, respond, topics or self.consumer.topics)
            self.ctx.append(req.group_id, group.tombstone_records())
            self.consumer.forget(group)
            del self.ctx.groups[req.group_id]
            log.info("consumer_group_replaced_by_classic_group", group=req.group_id)
        return self.classic.join_group(req, respond)

    def sync_group(self, now_ms: int, req: SyncGroup, respond: Reply) -> None:
        with self._request(now_ms):
            deferred = self.ctx.runtime.deferred(respond)
            group = self.group(req.group_id)
            if group is not None and group.type is GroupType.CONSUMER:
                return self.consumer.classic.sync(group, req, deferred)   # writes nothing
            self._run(req.group_id, self.classic.sync_group, (req, deferred),
                      lambda error, *_: self._sync_failed(req, respond, error))

    def _sync_failed(self, req: SyncGroup, respond: Reply, error: ErrorCode) -> None:
        """Only the leader's SyncGroup writes: it gets the error, then the other members do."""
        respond(sync_response(error))
        self._run(req.group_id, self.classic.assignment_not_written, (req.group_id, req.generation_id, error))

    def heartbeat(self, now_ms: int, req: Heartbeat) -> dict:
        with self._request(now_ms):
            group = self.group(req.group_id)
            if group is not None and group.type is GroupType.CONSUMER:
                return {"error_code": int(self.consumer.classic.heartbeat(group, req))}
            return {"error_code": int(self.classic.heartbeat(req))}

    def leave_group(self, now_ms: int, req: LeaveGroup) -> dict:
        """Newest shape: top-level error plus one result per leaving member (of either kind of group)."""
        with self._request(now_ms):
            group = self.group(req.group_id)
            manager = self.classic if group is None else self._manager(group)
            return self._run(req.group_id, manager.leave_group, (req,), _leave_failed)

    # ============================================================ a kind's heartbeat
    def kind_heartbeat(self, now_ms: int, kind_type, req, *context) -> dict:
        """A heartbeat of the kind ``kind_type`` (its table entry), as one write of its group."""
        kind = self.kinds[kind_type]
        with self._request(now_ms):
            return self._run(req.group_id, kind.heartbeat, (req, *context),
                             lambda error, *_: kind.error_answer(error))

    # ============================================================ consumer groups (KIP-848)
    def consumer_group_heartbeat(self, now_ms: int, req: ConsumerHeartbeat, topics: dict[str, TopicMeta]) -> dict:
        with self._request(now_ms):
            return self._run(req.group_id, self._consumer_heartbeat, (req, topics), _heartbeat_failed)

    def _consumer_heartbeat(self, req: ConsumerHeartbeat, topics: dict[str, TopicMeta]) -> dict:
        self.migration.maybe_upgrade(req, topics)
        return self.consumer.heartbeat(req, topics)

    def consumer_group_describe(self, now_ms: int, group_ids: list[str], topics_by_id: dict[bytes, str],
                                include_authorized_operations: bool = False) -> list[dict]:
        ops = GROUP_OPERATIONS if include_authorized_operations else NOT_REQUESTED
        with self._request(now_ms):
            return [self.consumer.describe(gid, topics_by_id, ops) for gid in group_ids]

    # ============================================================ share groups (KIP-932)
    def share_group_heartbeat(self, now_ms: int, req: ShareHeartbeat, topics: dict[str, TopicMeta]) -> dict:
        return self.kind_heartbeat(now_ms, GroupType.SHARE, req, topics)

    def share_group_describe(self, now_ms: int, group_ids: list[str], topics_by_id: dict[bytes, str],
                             include_authorized_operations: bool = False) -> list[dict]:
        ops = GROUP_OPERATIONS if include_authorized_operations else NOT_REQUESTED
        with self._request(now_ms):
            return [self.share.describe(gid, topics_by_id, ops) for gid in group_ids]

    def remove_share_members(self, now_ms: int, group_id: str) -> None:
        """Every member of a share group leaves, as one write."""
        with self._request(now_ms):
            self._run(group_id, self.share.remove_all_members, (group_id,))

    def share_offsets_group_error(self, now_ms: int, group_id: str, must_be_empty: bool,
                                  may_be_new: bool = False) -> tuple[ErrorCode, str | None]:
        """The share offsets APIs' check of their group at ``now_ms`` (share manager's
        ``offsets_group_error``): (error, message)."""
        with self._request(now_ms):
            return self.share.offsets_group_error(group_id, must_be_empty, may_be_new)

    def delete_share_group_offsets(self, now_ms: int, group_id: str,
                                   topics: list[tuple[str, bytes | None]]) -> list[dict] | ErrorCode:
        """DeleteShareGroupOffsets' response topics, or the error of a failed write."""
        with self._request(now_ms):
            return self._run(group_id, self.share.delete_offsets, (group_id, topics), _error)

    def alter_share_group_offsets(self, now_ms: int, group_id: str, offsets: dict[tuple[bytes, int], int],
                                  names: dict[bytes, str]) -> ErrorCode:
        """AlterShareGroupOffsets' valid partitions; the error of a failed write, else NONE."""
        with self._request(now_ms):
            error = self._run(group_id, self.share.alter_offsets, (group_id, offsets, names), _error)
        return E.NONE if error is None else error

    # ============================================================ streams groups (KIP-1071)
    def streams_group_heartbeat(self, now_ms: int, req: StreamsHeartbeat, partitions_of) -> tuple[dict, dict]:
        """The reply and the internal topics (name -> topology.InternalTopic) the broker should create;
        ``partitions_of(topic)``: the partition count of a topic that exists, else None."""
        reply = self.kind_heartbeat(now_ms, GroupType.STREAMS, req, partitions_of)
        return reply, reply.pop(INTERNAL_TOPICS, {})

    def streams_group_describe(self, now_ms: int, group_ids: list[str],
                               include_authorized_operations: bool = False) -> list[dict]:
        ops = GROUP_OPERATIONS if include_authorized_operations else NOT_REQUESTED
        with self._request(now_ms):
            return [streams_describe.describe(self.ctx.groups, gid, ops) for gid in group_ids]

    def remove_streams_members(self, now_ms: int, group_id: str, member_ids: list[str] | None = None) -> None:
        """Members of a streams group (every one without ``member_ids``) leave, as one write."""
        with self._request(now_ms):
            self._run(group_id, self.streams.remove_members, (group_id, member_ids))

    # ============================================================ offsets
    def commit_offsets(self, now_ms: int, req: OffsetCommit, partition_exists: PartitionExists | None = None) -> dict:
        """Returns the response topics in request order (newest shape)."""
        with self._request(now_ms):
            return self._run(req.group_id, self.offsets.commit, (req, partition_exists), OffsetManager.commit_failed,
                             False)

    def commit_offsets_then(self, now_ms: int, req: OffsetCommit, partition_exists: PartitionExists | None,
                            reply: Callable[[dict], None]) -> None:
        """``commit_offsets``, its answer given to ``reply``: inside the runtime's ``linger`` once its
        records are appended with those of the commits that arrived with it (Kafka's adaptive
        ``group.coordinator.append.linger.ms``; ``CoordinatorRuntime.run_lingering``)."""
        runtime = self.ctx.runtime
        if not runtime.lingering:
            reply(self.commit_offsets(now_ms, req, partition_exists))
            return
        batch = runtime.batch
        if batch is None or now_ms > batch.now_ms:
            # as ``_request``, leaving the lingering writes open; the commit that opened the batch
            # ticked to its time (and until its append nothing else runs that sets a timer)
            self.tick(now_ms)
        if batch is not None and req.generation_id >= 0 and req.group_id not in self.ctx.groups:
            # A commit before it may make the simple group; one with a generation is checked against
            # it (without one, an absent group and a new simple one accept it alike).
            runtime.flush()
        runtime.run_lingering(req.group_id, self.offsets.commit, (req, partition_exists),
                              OffsetManager.commit_failed, reply, now_ms)
        self.ctx.timers.poll(self.ctx.now_ms)

    @property
    def runtime(self):
        """The runtime running this coordinator's writes (a connection opens its ``linger`` for a read)."""
        return self.ctx.runtime

    def commit_transactional_offsets(self, now_ms: int, req: TxnOffsetCommit,
                                     partition_exists: PartitionExists | None = None) -> dict:
        """TxnOffsetCommit: the response topics in request order; the offsets stay pending until
        ``complete_transaction`` for the producer."""
        with self._request(now_ms):
            return self._run(req.group_id, self.offsets.commit_transactional, (req, partition_exists),
                             OffsetManager.txn_commit_failed, False)

    def complete_transaction(self, now_ms: int, producer_id: int, commit: bool) -> int:
        """A commit or abort marker of ``producer_id`` was written to __consumer_offsets: its pending
        offsets apply or vanish (Kafka's replayEndTransactionMarker); returns how many applied."""
        with self._request(now_ms):
            return self.offsets.complete_transaction(producer_id, commit)

    def fetch_offsets(self, now_ms: int, group_id: str, topics: list[tuple[str, list[int]]] | None,
                      member_id: str | None = None, member_epoch: int = -1, require_stable: bool = False) -> dict:
        """One group's answer in the OffsetFetch v8 group shape; ``topics=None`` means every committed one.
        ``member_id``/``member_epoch`` (v9) are checked against a consumer group's member;
        ``require_stable`` (v7+) answers UNSTABLE_OFFSET_COMMIT where a transactional commit is pending."""
        with self._request(now_ms):
            return self.offsets.fetch(group_id, topics, member_id, member_epoch, require_stable)

    def delete_offsets(self, now_ms: int, group_id: str, topics: list[tuple[str, list[int]]],
                       partition_exists: PartitionExists | None = None) -> dict:
        with self._request(now_ms):
            return self._run(group_id, self.offsets.delete, (group_id, topics, partition_exists),
                             _offset_delete_failed, False)

    # ============================================================ admin
    def describe_groups(self, now_ms: int, group_ids: list[str],
                        include_authorized_operations: bool = False) -> list[dict]:
        ops = GROUP_OPERATIONS if include_authorized_operations else NOT_REQUESTED
        with self._request(now_ms):
            return [self.classic.describe(gid, ops) for gid in group_ids]

    def list_groups(self, now_ms: int, states_filter: Iterable[str] = (),
                    types_filter: Iterable[str] = ()) -> list[dict]:
        states = {s.strip().lower() for s in states_filter}
        types = {t.strip().lower() for t in types_filter}
        with self._request(now_ms):
            return [{"group_id": g.group_id, "protocol_type": g.protocol_type or "", "group_state": g.state.value,
                     "group_type": g.type.value}
                    for g in self.ctx.groups.values() if g.state.value != "Dead"   # being deleted
                    and (not states or g.state.lower_name in states) and (not types or g.type.value in types)]

    def delete_groups(self, now_ms: int, group_ids: list[str]) -> list[dict]:
        with self._request(now_ms):
            return [{"group_id": gid, "error_code": int(self._run(gid, self._delete_if_allowed, (gid,), _error))}
                    for gid in group_ids]

    def _delete_if_allowed(self, group_id: str) -> ErrorCode:
        group = self.group(group_id)
        if group is None:
            return E.GROUP_ID_NOT_FOUND
        try:
            group.validate_delete_group()
        except GroupError as exc:
            return exc.code
        self._delete(group)
        return E.NONE

    def _delete(self, group: Group) -> None:
        """A group's offsets and then the group itself, in one batch of tombstones."""
        self.ctx.append(group.group_id, self.offsets.delete_all(group.group_id) + group.tombstone_records())
        self._manager(group).delete_group(group)

    # ============================================================ retention and deleted topics
    def _schedule_retention_check(self) -> None:
        interval = self.settings.offsets.retention_check_interval_ms
        self.ctx.timers.schedule(RETENTION_KEY, self.ctx.now_ms + interval, self._run_retention, every_ms=interval)

    def _run_retention(self) -> None:
        self.expire_offsets(self.ctx.now_ms)
        self._schedule_retention_check()

    def expire_offsets(self, now_ms: int) -> int:
        """Kafka's cleanupGroupMetadata: expire old offsets; delete Empty groups left without any.
        Each group is one write; a group whose write fails keeps everything until the next check."""
        self.ctx.advance(now_ms)
        group_ids = list(self.ctx.groups) + [g for g in self.offsets.store.groups() if g not in self.ctx.groups]
        expired = 0
        for gid in group_ids:
            expired += self._run(gid, self._expire_group_offsets, (gid,), _nothing)
            self._run(gid, self._delete_if_emptied, (gid,))   # a batch of its own, as before
        return expired

    def _expire_group_offsets(self, group_id: str) -> int:
        return self.offsets.expire(group_id, self.group(group_id))

    def _delete_if_emptied(self, group_id: str) -> None:
        group = self.group(group_id)
        if group is not None and group.is_empty() and group.should_expire() \
                and not self.offsets.has_offsets(group_id):
            self._delete(group)

    def on_topic_deleted(self, now_ms: int, topic: str, topic_id: bytes | None = None) -> int:
        """Kafka's onPartitionsDeleted: every group's committed offsets of the topic are dropped
        (one write per group; pending transactional ones of the topic go at once); with its id, the
        share groups forget it (maybeCleanupShareGroupState, a write per group that had it); the
        share data plane hears of it from the broker."""
        self.ctx.advance(now_ms)
        if topic_id is not None:
            for gid in self.share.groups_with_topic(topic_id):
                self._run(gid, self.share.topic_deleted, (gid, topic_id))
        removed = sum(self._run(gid, self.offsets.topic_deleted, (gid, topic), _nothing, False)
                      for gid in self.offsets.store.groups())
        self.offsets.pending.remove_topic(topic)
        if removed:
            log.info("offsets_of_deleted_topic_removed", topic=topic, offsets=removed)
        return removed

    # ============================================================ replay of __consumer_offsets
    def replay(self, key: bytes, value: bytes | None, producer_id: int = -1) -> None:
        """Apply one __consumer_offsets record, as on loading the partition (``producer_id``: the
        record is in that producer's transactional batch)."""
        version = split(key)[0]
        replay = self._replayers.get(version)
        if replay is None:
            raise UnknownRecordType(version)
        if producer_id >= 0 and version in self._offset_key_versions:
            self.offsets.replay(key, value, producer_id)
        else:
            replay(key, value)

    def load(self, records: Iterable, now_ms: int) -> None:
        """Rebuild state from __consumer_offsets records in log order; members' sessions restart now.
        Each entry is ``(key, value)``, ``(key, value, producer_id)`` for a record of a transactional
        batch, or an ``EndTransactionMarker`` (a control batch) completing that producer's offsets.

        A record of an unknown type is logged and skipped, as Kafka's CoordinatorLoaderImpl does (a
        client with client.id ``__admin_client`` may write anything there). A record that does not
        decode is logged and skipped too; Kafka would fail loading that partition instead, leaving its
        groups without a coordinator, which kafkaemu does not emulate.
        """
        self.ctx.advance(now_ms)
        skipped = 0
        for entry in records:
            if isinstance(entry, EndTransactionMarker):
                self.offsets.complete_transaction(entry.producer_id, entry.commit)
                continue
            if not replay_or_skip(self.replay, entry[0], entry[1], entry[2] if len(entry) > 2 else -1,
                                  event="offsets_record_skipped"):
                skipped += 1
        if skipped:
            log.warning("offsets_records_skipped", count=skipped)
        for kind in self.kinds.values():
            kind.after_load()


# What a request whose write failed answers (``error`` and the operation's arguments).
def _error(error: ErrorCode, *_) -> ErrorCode:
    return error


def _nothing(error: ErrorCode, *_) -> int:
    return 0


def _leave_failed(error: ErrorCode, *_) -> dict:
    return {"error_code": int(error), "members": []}


def _heartbeat_failed(error: ErrorCode, *_) -> dict:
    return error_response(error)


def _offset_delete_failed(error: ErrorCode, *_) -> dict:
    return {"error_code": int(error), "topics": []}


class _RequestScope:
    """The context manager ``GroupCoordinator._request`` returns (a class: a generator-based one
    cost more than a heartbeat's own work)."""
    __slots__ = ("_ctx",)

    def __init__(self, ctx) -> None:
        self._ctx = ctx

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc) -> None:
        self._ctx.timers.poll(self._ctx.now_ms)
