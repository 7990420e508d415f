"""The share partitions of every share group (Kafka's SharePartitionManager, pure): where each
starts, acquiring and acknowledging their records, the timers of their acquisition locks, and the
share sessions; the group configs that tune them are the coordinator's (core/group_configs.py).

A share partition starts where share.auto.offset.reset says (``latest``: the partition's end;
``earliest``: its log start; ``by_duration:<ISO-8601>``: the first record at most that old, else the
end) when its group is first assigned it, or when it is first fetched.
The log is seen through ``log_offsets(topic_id, partition, read_committed)`` ->
(log start offset, end offset readable under that isolation) or None for an unknown partition,
injected by the broker. One timer per share partition, ``("share-locks", group, topic id,
partition)``, fires at its earliest lock deadline and releases what lapsed; ``on_available``
listeners hear of records that became available again (a parked ShareFetch can then complete).

Durability: with a ``state_sink(partition, [(key, value or None)], now_ms)`` every change of a share
partition is written as its snapshot (state_records.py) to that partition of __share_group_state
(``state_partitions`` of them), and ``load`` rebuilds the share partitions from those records.
"""
from __future__ import annotations

import re
from typing import Callable, Iterable, Mapping

from ...logging import get_logger
from ...protocol.errors import ErrorCode
from ..context import CoordinatorContext
from . import state_records
from .partition import AckType, Acquired, PartitionLimits, SharePartition
from .sessions import ShareSessionCache

log = get_logger("kafkaemu.share_partitions")
E = ErrorCode
Key = tuple[str, bytes, int]   # group id, topic id, partition
LogOffsets = Callable[[bytes, int, bool], "tuple[int, int] | None"]
OffsetForTime = Callable[[bytes, int, int], "int | None"]   # (topic id, partition, timestamp) -> offset
_DURATION = re.compile(r"P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?$")


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
    def __init__(self, ctx: CoordinatorContext, log_offsets: LogOffsets | None = None) -> None:
        self.ctx = ctx
        self.log_offsets: LogOffsets = log_offsets or (lambda tid, p, committed: None)
        self.offset_for_time: OffsetForTime = lambda tid, p, ts: None
        self.partitions: dict[Key, SharePartition] = {}
        self.sessions = ShareSessionCache()
        self.on_available: list[Callable[[Key], None]] = []
        self.state_sink: Callable[[int, list, int], None] | None = None
        self.state_partitions = 50     # Kafka's share.coordinator.state.topic.num.partitions
        self._snapshot_epochs: dict[Key, int] = {}
        ctx.group_configs.listeners.append(self._configs_changed)

    # ------------------------------------------------------------ group configs
    def config(self, group_id: str, name: str):
        return self.ctx.group_configs.value(group_id, name)

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

    # ------------------------------------------------------------ partitions
    def initialize(self, group_id: str, partitions: Iterable[tuple[bytes, int]]) -> None:
        """Partitions newly assigned to a group start where share.auto.offset.reset says, now."""
        for tid, p in partitions:
            self.partition(group_id, tid, p)

    def partition(self, group_id: str, topic_id: bytes, index: int) -> SharePartition | None:
        key = (group_id, topic_id, index)
        sp = self.partitions.get(key)
        if sp is None:
            offsets = self.log_offsets(topic_id, index, self.read_committed(group_id))
            if offsets is None:
                return None
            log_start, end = offsets
            reset = self.config(group_id, "share.auto.offset.reset")
            start = log_start if reset == "earliest" else end
            if reset.startswith("by_duration:"):
                span = duration_ms(reset[len("by_duration:"):])
                found = self.offset_for_time(topic_id, index, self.ctx.now_ms - span) if span is not None else None
                start = min(max(found, log_start), end) if found is not None else end
            sp = self.partitions[key] = SharePartition(start, self.limits(group_id))
            log.info("share_partition_initialized", group=group_id, partition=index, start_offset=start, reset=reset)
            self._changed(key)
        return sp

    def existing(self, group_id: str, topic_id: bytes, index: int) -> SharePartition | None:
        return self.partitions.get((group_id, topic_id, index))

    def acquire(self, group_id: str, member_id: str, topic_id: bytes, index: int, max_records: int,
                batches: Iterable[tuple[int, int]]) -> list[Acquired]:
        sp = self.partitions[(group_id, topic_id, index)]
        acquired = sp.acquire(member_id, max_records, batches, self.ctx.now_ms)
        if acquired:
            self._schedule_locks((group_id, topic_id, index), sp)
            self._changed((group_id, topic_id, index))
        return acquired

    def archive_acquired(self, group_id: str, member_id: str, topic_id: bytes, index: int,
                         ranges: list[tuple[int, int]], acquired: list[Acquired]) -> list[Acquired]:
        key = (group_id, topic_id, index)
        sp = self.partitions[key]
        kept = sp.archive_acquired(member_id, ranges, acquired)
        if kept != acquired:
            self._schedule_locks(key, sp)
            self._changed(key)
        return kept

    def acknowledge(self, group_id: str, member_id: str, topic_id: bytes, index: int, batches: list,
                    renew_allowed: bool = False) -> ErrorCode:
        """One partition's acknowledgements (request batches with first_offset, last_offset and
        acknowledge_types); INVALID_REQUEST for malformed ones, INVALID_RECORD_STATE for records the
        member does not hold."""
        error = validate_ack_batches(batches, renew_allowed)
        if error != E.NONE:
            return error
        sp = self.partitions.get((group_id, topic_id, index))
        if sp is None:
            return E.INVALID_RECORD_STATE
        had_available = sp.has_available()
        error = sp.acknowledge(member_id, [(b.first_offset, b.last_offset, list(b.acknowledge_types)) for b in batches],
                               self.ctx.now_ms)
        key = (group_id, topic_id, index)
        self._schedule_locks(key, sp)
        if error == E.NONE:
            self._changed(key)
            if sp.has_available() and not had_available or sp.can_acquire_new():
                self._notify(key)
        return error

    def release_member(self, group_id: str, member_id: str, partitions: Iterable[tuple[bytes, int]] | None = None) -> int:
        """Release the records ``member_id`` holds (in ``partitions``, else in all the group's)."""
        released = 0
        for key, sp in list(self.partitions.items()):
            if key[0] != group_id or (partitions is not None and key[1:] not in set(partitions)):
                continue
            n = sp.release_member(member_id)
            if n:
                released += n
                self._schedule_locks(key, sp)
                self._changed(key)
                self._notify(key)
        return released

    def member_left(self, group_id: str, member_id: str) -> None:
        """A member left its group or was removed: what it holds is released. Its share sessions
        stay until it closes them (a closing consumer may acknowledge after its leave heartbeat)."""
        self.release_member(group_id, member_id)

    def release_offset(self, group_id: str, topic_id: bytes, index: int, offset: int) -> bool:
        """A test control: end one record's acquisition lock now."""
        key = (group_id, topic_id, index)
        sp = self.partitions.get(key)
        if sp is None or not sp.release_offset(offset):
            return False
        self._schedule_locks(key, sp)
        self._changed(key)
        self._notify(key)
        return True

    def _schedule_locks(self, key: Key, sp: SharePartition) -> None:
        deadline = sp.next_lock_deadline()
        timer = ("share-locks",) + key
        if deadline is None:
            self.ctx.cancel(timer)
        else:
            self.ctx.timers.schedule(timer, deadline, lambda: self._locks_due(key))

    def _locks_due(self, key: Key) -> None:
        sp = self.partitions.get(key)
        if sp is None:
            return
        expired = sp.expire_locks(self.ctx.now_ms)
        if expired:
            log.info("share_locks_expired", group=key[0], partition=key[2], records=expired)
            self._changed(key)
            self._notify(key)
        self._schedule_locks(key, sp)

    def _notify(self, key: Key) -> None:
        for listener in list(self.on_available):
            listener(key)

    # ------------------------------------------------------------ offsets admin
    def start_offsets(self, group_id: str) -> Mapping[tuple[bytes, int], int]:
        return {(k[1], k[2]): sp.start_offset for k, sp in self.partitions.items() if k[0] == group_id}

    def alter_start_offset(self, group_id: str, topic_id: bytes, index: int, offset: int) -> None:
        key = (group_id, topic_id, index)
        sp = self.partitions.get(key)
        if sp is None:
            self.partitions[key] = SharePartition(offset, self.limits(group_id))
        else:
            sp.reset(offset)
            self.ctx.cancel(("share-locks",) + key)
        self._changed(key)

    def delete_topic_state(self, group_id: str, topic_id: bytes) -> None:
        self._drop([k for k in self.partitions if k[0] == group_id and k[1] == topic_id])

    def delete_group(self, group_id: str) -> None:
        self._drop([k for k in self.partitions if k[0] == group_id])
        self.ctx.group_configs.delete_group(group_id)

    def on_topic_deleted(self, topic_id: bytes) -> None:
        self._drop([k for k in self.partitions if k[1] == topic_id])

    def _drop(self, keys: list[Key]) -> None:
        for key in keys:
            del self.partitions[key]
            self.ctx.cancel(("share-locks",) + key)
            self._write(key, None)
            self._snapshot_epochs.pop(key, None)

    # ------------------------------------------------------------ durability
    def _changed(self, key: Key) -> None:
        if self.state_sink is not None:
            epoch = self._snapshot_epochs[key] = self._snapshot_epochs.get(key, -1) + 1
            self._write(key, state_records.encode_value(self.partitions[key], epoch))

    def _write(self, key: Key, value: bytes | None) -> None:
        if self.state_sink is not None:
            partition = state_records.state_partition(*key, self.state_partitions)
            self.state_sink(partition, [(state_records.encode_key(*key), value)], self.ctx.now_ms)

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
