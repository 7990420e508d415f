"""The share data plane (Kafka's SharePartitionManager, pure): the share partitions of every share
group (where each starts, acquiring and acknowledging their records, the timers of their acquisition
locks) and the share sessions; the group configs that tune them are the broker's
(core/group_configs.py), shared with the group coordinator. It is an owner of its own beside
the group coordinator, as in Kafka: the broker builds it with its ports (``SharePorts``), handlers
reach it as ``ctx.shares`` and give it the time of each request (``now_ms``: its clock moves forward
and its due timers fire first), and the group coordinator tells it about share groups only through
the events of ``events.ShareGroupEvents``, which this class receives.

A share partition its group is first assigned is recorded uninitialized (start offset -1, as
Kafka's group coordinator initializes its share state: partition.py ``UNINITIALIZED``); it starts
where share.auto.offset.reset says (``latest``: the partition's end; ``earliest``: its log start;
``by_duration:<ISO-8601>``: the first record at most that old, else the end) when a ShareFetch first
loads it, as Kafka's SharePartition.maybeInitialize, and that resolution writes nothing.
The log is seen through ``SharePorts.log_offsets(topic_id, partition, read_committed)`` ->
(log start offset, end offset readable under that isolation) or None for an unknown partition.
One timer per share partition, ``("share-locks", group, topic id, partition)``, fires at its
earliest lock deadline and releases what lapsed; ``SharePorts.wake`` hears of records that became
available again (a parked ShareFetch can then complete).

Durability: with ``SharePorts.state_sink(partition, [(key, value or None)], now_ms)`` every change of
a share partition is written as its snapshot (state_records.py) to that partition of
__share_group_state (``state_partitions`` of them), one share partition's change as one write of
the coordinator runtime (state_runtime.py): a failed append puts the share partition and its lock
timer back and answers the append's error. ``load`` rebuilds the share partitions from those records.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Iterable, Mapping

from ...logging import get_logger
from ...protocol.errors import ErrorCode
from ..group_configs import GroupConfigs
from . import state_records
from .partition import UNINITIALIZED, AckType, Acquired, PartitionLimits, SharePartition
from .sessions import NO_CONNECTION, ShareSession, ShareSessionCache, SessionKey, TopicPartition
from .state_runtime import Key, ShareStateContext, StateSink

log = get_logger("kafkaemu.share_partitions")
E = ErrorCode
LogOffsets = Callable[[bytes, int, bool], "tuple[int, int] | None"]
OffsetForTime = Callable[[bytes, int, int], "int | None"]   # (topic id, partition, timestamp) -> offset
_DURATION = re.compile(r"P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?$")


@dataclass(frozen=True)
class SharePorts:
    """What the data plane needs from outside the core: the log's offsets of a partition, the offset
    of a time (by_duration resets), waking the ShareFetches parked on a partition, and the sink to
    __share_group_state with its partition count (None: not durable)."""
    log_offsets: LogOffsets
    offset_for_time: OffsetForTime
    wake: Callable[[Key], None]
    state_sink: StateSink | None = None
    state_partitions: int = 50


def duration_ms(iso: str) -> int | None:
    """An ISO-8601 duration (PnDTnHnMnS) in ms, or None."""
    m = _DURATION.match(iso)
    if m is None or iso in ("P", "PT"):
        return None
    days, hours, minutes, seconds = (float(g) if g else 0.0 for g in m.groups())
    return int((((days * 24 + hours) * 60 + minutes) * 60 + seconds) * 1000)

def validate_ack_batches(batches: list, renew_allowed: bool) -> ErrorCode:
    """Kafka's checks of a partition's acknowledgement batches: ordered, not overlapping, one type or
    one per offset, known types (RENEW only with is_renew_ack); else INVALID_REQUEST."""
    highest = max(AckType) if renew_allowed else AckType.REJECT
    previous_last = -1
    for b in batches:
        if b.first_offset < 0 or b.first_offset > b.last_offset or b.first_offset <= previous_last:
            return E.INVALID_REQUEST
        types = b.acknowledge_types
        if len(types) not in (1, b.last_offset - b.first_offset + 1) or any(t < 0 or t > highest for t in types):
            return E.INVALID_REQUEST
        previous_last = b.last_offset
    return E.NONE


class SharePartitionManager:
    def __init__(self, group_configs: GroupConfigs, ports: SharePorts, now_ms: int = 0) -> None:
        self.group_configs = group_configs
        self.ports = ports
        self.state = ShareStateContext(ports.state_sink, ports.state_partitions, now_ms)
        self.partitions: dict[Key, SharePartition] = self.state.groups
        self.sessions = ShareSessionCache()
        group_configs.listeners.append(self._configs_changed)

    # ------------------------------------------------------------ time
    @property
    def now_ms(self) -> int:
        return self.state.now_ms

    def tick(self, now_ms: int) -> None:
        """Fire every lock timer due at ``now_ms``, each at its own deadline's time."""
        self.state.timers.poll(now_ms, self.state.advance)
        self.state.advance(now_ms)

    def next_deadline_ms(self) -> int | None:
        return self.state.timers.next_deadline()

    # ------------------------------------------------------------ group configs
    def config(self, group_id: str, name: str):
        return self.group_configs.value(group_id, name)

    def _configs_changed(self, group_id: str) -> None:
        for key, sp in self.partitions.items():
            if key[0] == group_id:
                sp.limits = self.limits(group_id)

    def limits(self, group_id: str) -> PartitionLimits:
        return PartitionLimits(lock_duration_ms=self.config(group_id, "share.record.lock.duration.ms"),
                               delivery_count_limit=self.config(group_id, "share.delivery.count.limit"),
                               max_in_flight=self.config(group_id, "share.partition.max.record.locks"))

    def read_committed(self, group_id: str) -> bool:
        return self.config(group_id, "share.isolation.level") == "read_committed"

    # ------------------------------------------------------------ share sessions
    def fetch_session(self, now_ms: int, key: SessionKey, epoch: int, fetch: list[TopicPartition],
                      forget: list[TopicPartition], has_acks: bool, connection_id: int = NO_CONNECTION
                      ) -> tuple[ShareSession | None, ShareSession | None]:
        """A ShareFetch's session (sessions.py ``for_fetch``), on the client connection
        ``connection_id``. Raises GroupError for a bad epoch."""
        self.tick(now_ms)
        return self.sessions.for_fetch(key, epoch, fetch, forget, has_acks, connection_id)

    def acknowledge_session(self, now_ms: int, key: SessionKey, epoch: int) -> ShareSession:
        """A ShareAcknowledge's session (sessions.py ``for_acknowledge``). Raises GroupError."""
        self.tick(now_ms)
        return self.sessions.for_acknowledge(key, epoch)

    def connection_closed(self, now_ms: int, connection_id: int) -> int:
        """A client connection dropped: the share session it opened goes, and the records its member
        holds in that session's partitions are released at once (Kafka's ShareSessionCache
        disconnect listener, then SharePartitionManager.releaseSession). Returns how many."""
        self.tick(now_ms)
        session = self.sessions.disconnected(connection_id)
        if session is None:
            return 0
        _, group_id, member_id = session.key
        released = self.release_member(now_ms, group_id, member_id, list(session.partitions))
        log.info("share_session_disconnected", group=group_id, member=member_id, released=released)
        return released

    # ------------------------------------------------------------ partitions
    def partition(self, now_ms: int, group_id: str, topic_id: bytes, index: int) -> SharePartition | None:
        """The group's share partition as a ShareFetch loads it: started now if it has none, or
        initialized now if it is uninitialized (None for a partition the log does not know). Raises
        ShareStateNotWritten when its first state cannot be written."""
        self.tick(now_ms)
        key = (group_id, topic_id, index)
        sp = self.partitions.get(key)
        if sp is not None and sp.initialized:
            return sp
        offsets = self.ports.log_offsets(topic_id, index, self.read_committed(group_id))
        if offsets is None:
            return None
        if sp is None:
            self._run(key, self._start, (key, offsets), _not_written)
        else:
            self._run(key, self._initialize, (key, offsets), _not_written)
        return self.partitions[key]

    def _start(self, key: Key, offsets: tuple[int, int]) -> None:
        self.partitions[key] = SharePartition(self._reset_offset(key, offsets), self.limits(key[0]))
        self._changed(key)

    def _initialize(self, key: Key, offsets: tuple[int, int]) -> None:
        self.partitions[key].initialize(self._reset_offset(key, offsets))

    def _uninitialized(self, key: Key) -> None:
        self.partitions[key] = SharePartition(UNINITIALIZED, self.limits(key[0]))
        log.info("share_partition_assigned", group=key[0], partition=key[2])
        self._changed(key)

    def _reset_offset(self, key: Key, offsets: tuple[int, int]) -> int:
        """Where share.auto.offset.reset starts the share partition now."""
        group_id, topic_id, index = key
        log_start, end = offsets
        reset = self.config(group_id, "share.auto.offset.reset")
        start = log_start if reset == "earliest" else end
        if reset.startswith("by_duration:"):
            span = duration_ms(reset[len("by_duration:"):])
            found = self.ports.offset_for_time(topic_id, index, self.now_ms - span) if span is not None else None
            start = min(max(found, log_start), end) if found is not None else end
        log.info("share_partition_initialized", group=group_id, partition=index, start_offset=start, reset=reset)
        return start

    def existing(self, group_id: str, topic_id: bytes, index: int) -> SharePartition | None:
        return self.partitions.get((group_id, topic_id, index))

    def acquire(self, now_ms: int, group_id: str, member_id: str, topic_id: bytes, index: int, max_records: int,
                batches: Iterable[tuple[int, int]], up_to: int | None = None, batch_size: int = 0) -> list[Acquired]:
        """Records acquired for the member (SharePartition.acquire; none when that cannot be written)."""
        self.tick(now_ms)
        key = (group_id, topic_id, index)
        return self._run(key, self._acquire, (key, member_id, max_records, batches, up_to, batch_size),
                         _nothing_acquired)

    def _acquire(self, key: Key, member_id: str, max_records: int, batches: Iterable[tuple[int, int]],
                 up_to: int | None, batch_size: int) -> list[Acquired]:
        sp = self.partitions[key]
        acquired = sp.acquire(member_id, max_records, batches, self.now_ms, up_to, batch_size)
        if acquired:
            self._schedule_locks(key, sp)
            self._changed(key)
        return acquired

    def archive_acquired(self, now_ms: int, group_id: str, member_id: str, topic_id: bytes, index: int,
                         ranges: list[tuple[int, int]], acquired: list[Acquired]) -> list[Acquired]:
        self.tick(now_ms)
        key = (group_id, topic_id, index)
        return self._run(key, self._archive_acquired, (key, member_id, ranges, acquired), _nothing_acquired)

    def _archive_acquired(self, key: Key, member_id: str, ranges: list[tuple[int, int]],
                          acquired: list[Acquired]) -> list[Acquired]:
        sp = self.partitions[key]
        kept = sp.archive_acquired(member_id, ranges, acquired)
        if kept != acquired:
            self._schedule_locks(key, sp)
            self._changed(key)
        return kept

    def acknowledge(self, now_ms: int, group_id: str, member_id: str, topic_id: bytes, index: int, batches: list,
                    renew_allowed: bool = False) -> ErrorCode:
        """One partition's acknowledgements (request batches with first_offset, last_offset and
        acknowledge_types); INVALID_REQUEST for malformed ones, INVALID_RECORD_STATE for records the
        member does not hold, the append's error when they cannot be written (nothing applied)."""
        self.tick(now_ms)
        error = validate_ack_batches(batches, renew_allowed)
        if error != E.NONE:
            return error
        key = (group_id, topic_id, index)
        if key not in self.partitions:
            return E.INVALID_RECORD_STATE
        acks = [(b.first_offset, b.last_offset, list(b.acknowledge_types)) for b in batches]
        return self._run(key, self._acknowledge, (key, member_id, acks), _error)

    def _acknowledge(self, key: Key, member_id: str, acks: list) -> ErrorCode:
        sp = self.partitions[key]
        had_available = sp.has_available()
        error = sp.acknowledge(member_id, acks, self.now_ms)
        self._schedule_locks(key, sp)
        if error == E.NONE:
            self._changed(key)
            if sp.has_available() and not had_available or sp.can_acquire_new():
                self._notify(key)
        return error

    def release_member(self, now_ms: int, group_id: str, member_id: str,
                       partitions: Iterable[tuple[bytes, int]] | None = None) -> int:
        """Release the records ``member_id`` holds (in ``partitions``, else in all the group's), one
        write per share partition."""
        self.tick(now_ms)
        wanted = None if partitions is None else set(partitions)
        return sum(self._run(key, self._release_member, (key, member_id), _nothing_released)
                   for key in list(self.partitions)
                   if key[0] == group_id and (wanted is None or key[1:] in wanted))

    def _release_member(self, key: Key, member_id: str) -> int:
        sp = self.partitions[key]
        n = sp.release_member(member_id)
        if n:
            self._schedule_locks(key, sp)
            self._changed(key)
            self._notify(key)
        return n

    def release_offset(self, now_ms: int, group_id: str, topic_id: bytes, index: int, offset: int) -> bool:
        """A test control: end one record's acquisition lock now."""
        self.tick(now_ms)
        key = (group_id, topic_id, index)
        if key not in self.partitions:
            return False
        return bool(self._run(key, self._release_offset, (key, offset), _nothing_released))

    def _release_offset(self, key: Key, offset: int) -> bool:
        sp = self.partitions[key]
        if not sp.release_offset(offset):
            return False
        self._schedule_locks(key, sp)
        self._changed(key)
        self._notify(key)
        return True

    def _schedule_locks(self, key: Key, sp: SharePartition) -> None:
        deadline = sp.next_lock_deadline()
        timer = ("share-locks",) + key
        if deadline is None:
            self.state.cancel(timer)
        else:
            self.state.schedule_at(timer, deadline,
                                   lambda: self.state.runtime.timer(key, timer, lambda: self._locks_due(key)))

    def _locks_due(self, key: Key) -> None:
        sp = self.partitions.get(key)
        if sp is None:
            return
        expired = sp.expire_locks(self.now_ms)
        if expired:
            log.info("share_locks_expired", group=key[0], partition=key[2], records=expired)
            self._changed(key)
            self._notify(key)
        self._schedule_locks(key, sp)

    def _notify(self, key: Key) -> None:
        """Parked ShareFetches on the partition read again, once the write under way is in the log."""
        self.state.on_written(self.ports.wake, key)

    # ------------------------------------------------------------ the events of share groups (events.py)
    def assigned(self, now_ms: int, group_id: str, partitions: Iterable[tuple[bytes, int]]) -> None:
        """Partitions newly assigned to a group that has no share state of them are recorded
        uninitialized (a partition the log does not know is left alone)."""
        self.tick(now_ms)
        for tid, p in partitions:
            key = (group_id, tid, p)
            if key not in self.partitions and self.ports.log_offsets(tid, p, self.read_committed(group_id)) is not None:
                self._run(key, self._uninitialized, (key,), _not_written)

    def offsets_altered(self, now_ms: int, group_id: str, topic_id: bytes, index: int, offset: int) -> None:
        self.tick(now_ms)
        key = (group_id, topic_id, index)
        self._run(key, self._alter_start_offset, (key, offset), _not_written)

    def _alter_start_offset(self, key: Key, offset: int) -> None:
        sp = self.partitions.get(key)
        if sp is None:
            self.partitions[key] = SharePartition(offset, self.limits(key[0]))
        else:
            sp.reset(offset)
            self.state.cancel(("share-locks",) + key)
        self._changed(key)

    def offsets_deleted(self, now_ms: int, group_id: str, topic_id: bytes) -> None:
        self.tick(now_ms)
        self._drop([k for k in self.partitions if k[0] == group_id and k[1] == topic_id], _not_written)

    def member_left(self, now_ms: int, group_id: str, member_id: str) -> None:
        """A member left its group or was removed: what it holds outside its share sessions is
        released. What it holds in their partitions stays acquired, as Kafka leaves it, until it
        closes them (a closing consumer's last acknowledgements may reach this broker after its
        leave heartbeat reached the coordinator: they apply, then the rest is released) or the
        locks lapse."""
        in_sessions = self.sessions.partitions_of(group_id, member_id)
        self.release_member(now_ms, group_id, member_id,
                            [key[1:] for key in self.partitions if key[0] == group_id and key[1:] not in in_sessions])

    def member_expired(self, now_ms: int, group_id: str, member_id: str) -> None:
        """A member's group session lapsed: its share sessions go, and what it holds is released."""
        self.tick(now_ms)
        self.sessions.drop_member(group_id, member_id)
        self.release_member(now_ms, group_id, member_id)

    def group_deleted(self, now_ms: int, group_id: str) -> None:
        self.tick(now_ms)
        self._drop([k for k in self.partitions if k[0] == group_id], _logged)
        self.group_configs.delete_group(group_id)

    def topic_deleted(self, now_ms: int, topic_id: bytes) -> None:
        """A topic was deleted: every group's share state of it goes (the broker's topic admin tells)."""
        self.tick(now_ms)
        self._drop([k for k in self.partitions if k[1] == topic_id], _logged)

    # ------------------------------------------------------------ offsets admin
    def group_state(self, now_ms: int, group_id: str) -> dict[tuple[bytes, int], SharePartition]:
        """The group's share partitions by (topic id, partition) at ``now_ms`` (its due lock timers
        fired first: a lapsed lock at the delivery limit archives, moving the start offset)."""
        self.tick(now_ms)
        return {(k[1], k[2]): sp for k, sp in self.partitions.items() if k[0] == group_id}

    def start_offsets(self, group_id: str) -> Mapping[tuple[bytes, int], int]:
        return {(k[1], k[2]): sp.start_offset for k, sp in self.partitions.items() if k[0] == group_id}

    def _drop(self, keys: list[Key], on_error: Callable[..., None]) -> None:
        for key in keys:
            self._run(key, self._tombstone, (key,), on_error)

    def _tombstone(self, key: Key) -> None:
        del self.partitions[key]
        self.state.cancel(("share-locks",) + key)
        if self.state.durable:
            self.state.append(key, None)

    # ------------------------------------------------------------ durability
    def _run(self, key: Key, op: Callable, args: tuple, on_error: Callable):
        """``op(*args)`` as one write of the share partition ``key`` (state_runtime.py)."""
        return self.state.runtime.run(key, op, args, on_error, self.state.durable)

    def _changed(self, key: Key) -> None:
        if self.state.durable:
            sp = self.partitions[key]
            sp.state_epoch += 1
            self.state.append(key, state_records.encode_value(sp, sp.state_epoch))

    def load(self, entries: Iterable[tuple[bytes, bytes | None]]) -> int:
        """Rebuild share partitions from __share_group_state records in log order (the last record
        of a key wins; a tombstone removes it); returns how many share partitions there are. A record
        that does not decode is logged and skipped."""
        for key_bytes, value in entries:
            try:
                key = state_records.decode_key(key_bytes)
                if value is None:
                    self.partitions.pop(key, None)
                else:
                    self.partitions[key] = state_records.decode_value(value, self.limits(key[0]))
            except Exception as exc:
                log.warning("share_state_record_skipped", error=str(exc)[:200])
        return len(self.partitions)


class ShareStateNotWritten(Exception):
    """Share state could not be written to __share_group_state (Kafka's persister failing)."""

    def __init__(self, error: ErrorCode) -> None:
        super().__init__(error.name)
        self.error = error


# What an operation whose write failed gives (the append's error code and the operation's arguments).
def _not_written(error: ErrorCode, *_) -> None:
    raise ShareStateNotWritten(error)


def _error(error: ErrorCode, *_) -> ErrorCode:
    return error


def _nothing_acquired(error: ErrorCode, *_) -> list[Acquired]:
    return []


def _nothing_released(error: ErrorCode, *_) -> int:
    return 0


def _logged(error: ErrorCode, key: Key, *_) -> None:
    log.warning("share_state_not_deleted", group=key[0], partition=key[2], error=error.name)
