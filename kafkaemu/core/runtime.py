"""The coordinator runtime: runs one write operation, appends the records it decided, and only then
answers (Apache Kafka's CoordinatorRuntime running a shard's ``CoordinatorResult(records, response)``).

An operation returns its response (a reply, or nothing when the reply is parked and a later event
releases it) and hands the records it decides to the write under way (``CoordinatorContext.append``)
rather than returning them: a classic rebalance decides records deep inside transitions reached
from joins, leaves and timers, and the write collects them wherever they arise. Everything another
party could observe before those records are in the log waits too, in the order it happened:
replies to parked requests, the transition journal, changes of committed offsets (``on_written``).
Once the operation returns, the runtime appends its records as one batch through the injected
appender (the sink; core imports nothing from storage), then releases what waited. If the append
fails, the group goes back to what it was, the timers the write moved go back, nothing that waited
happens, and the requester gets Kafka's error for the failure (``append_error_code``: the mapping
of GroupCoordinatorService.handleOperationException). A timer's failed write is retried.

How state is made revertible, and why this way: the operation changes its group in place and the
runtime takes a snapshot of that one group first (``Group.snapshot``/``restore``), as Kafka's
timeline structures revert to the last written offset. Applying changes only after the append would
have meant rewriting every classic rebalance path into a plan-then-apply form; one snapshot of the
group the write names reverts all of them at one place. Committed offsets, the hot path, take the
other road: a commit decides its records without touching the store or the group and applies them
once written (``snapshot=False``), so it copies nothing.

Offset commits that arrive together may linger (``run_lingering``, inside ``linger``): their records
go to one batch, appended before any other write, and each commit's effects and reply wait for it;
a batch that cannot be written answers each commit its error (Kafka's adaptive
``group.coordinator.append.linger.ms`` and ``failCurrentBatch``).

Where Kafka itself does more than revert, its behaviour is kept: a leader's SyncGroup whose
assignment cannot be written answers every waiting member with the error and rebalances
(``ClassicGroupManager.assignment_not_written``, after the revert).
"""
from __future__ import annotations

from typing import Any, Callable, Hashable

from ..logging import get_logger
from ..protocol.errors import ErrorCode
from .placement import partition_for

log = get_logger("kafkaemu.coordinator")
E = ErrorCode

# GroupCoordinatorService.handleOperationException / appendGroupMetadataErrorToResponseError
_GROUP_APPEND_ERRORS = {
    E.UNKNOWN_TOPIC_OR_PARTITION: E.COORDINATOR_NOT_AVAILABLE,
    E.NOT_ENOUGH_REPLICAS: E.COORDINATOR_NOT_AVAILABLE,
    E.REQUEST_TIMED_OUT: E.COORDINATOR_NOT_AVAILABLE,
    E.NOT_LEADER_OR_FOLLOWER: E.NOT_COORDINATOR,
    E.KAFKA_STORAGE_ERROR: E.NOT_COORDINATOR,
    E.MESSAGE_TOO_LARGE: E.UNKNOWN_SERVER_ERROR,
    E.RECORD_LIST_TOO_LARGE: E.UNKNOWN_SERVER_ERROR,
    E.INVALID_FETCH_SIZE: E.UNKNOWN_SERVER_ERROR,
}
# TransactionStateManager.appendTransactionToLog's callback
_TXN_APPEND_ERRORS = {
    E.UNKNOWN_TOPIC_OR_PARTITION: E.COORDINATOR_NOT_AVAILABLE,
    E.NOT_ENOUGH_REPLICAS: E.COORDINATOR_NOT_AVAILABLE,
    E.NOT_ENOUGH_REPLICAS_AFTER_APPEND: E.COORDINATOR_NOT_AVAILABLE,
    E.REQUEST_TIMED_OUT: E.COORDINATOR_NOT_AVAILABLE,
    E.NOT_LEADER_OR_FOLLOWER: E.NOT_COORDINATOR,
    E.KAFKA_STORAGE_ERROR: E.NOT_COORDINATOR,
    E.MESSAGE_TOO_LARGE: E.UNKNOWN_SERVER_ERROR,
    E.RECORD_LIST_TOO_LARGE: E.UNKNOWN_SERVER_ERROR,
}


class AppendError(Exception):
    """The log refused a coordinator's batch; ``error`` is the partition's error code."""

    def __init__(self, error: ErrorCode, message: str = "") -> None:
        super().__init__(f"{error.name} {message}".strip())
        self.error = error


def append_error_code(exc: BaseException, transactional: bool = False) -> ErrorCode:
    """The error a client gets when its coordinator write failed with ``exc`` (anything but a
    refusal from the log, say a record that cannot be encoded, is UNKNOWN_SERVER_ERROR)."""
    if not isinstance(exc, AppendError):
        return E.UNKNOWN_SERVER_ERROR
    return (_TXN_APPEND_ERRORS if transactional else _GROUP_APPEND_ERRORS).get(exc.error, exc.error)


class Write:
    """What one operation decided so far and has not made visible: its records (one batch, to the
    partition of the group it names) and, in the order they happened, the effects that wait for
    them (``(callable, args)``: replies, transitions, offsets to apply); the timers it moved."""
    __slots__ = ("group_id", "records", "producer_id", "producer_epoch", "effects", "timers", "snapshot", "before",
                 "memento")

    def __init__(self, group_id: str) -> None:
        self.group_id = group_id
        self.clear()

    def clear(self) -> None:
        self.records: list = _NO_RECORDS
        self.producer_id = -1
        self.producer_epoch = -1
        self.effects: list | None = None    # made on the first effect: most writes have one at most
        self.timers: list | None = None     # (key, the timer's entry before), in the order changed
        self.snapshot = False               # whether the group is reverted to ``memento`` on a failure
        self.before = None                  # the group as the write found it (None: there was none)
        self.memento = None                 # its snapshot

    def effect(self, fn: Callable, args: tuple) -> None:
        if self.effects is None:
            self.effects = [(fn, args)]
        else:
            self.effects.append((fn, args))


_NO_RECORDS: list = []   # never appended to: ``CoordinatorContext.append`` replaces it


class DeferredReply:
    """A reply callable that, while a write is under way, waits for its records to be written."""
    __slots__ = ("_runtime", "_reply")

    def __init__(self, runtime: "CoordinatorRuntime", reply: Callable[[dict], None]) -> None:
        self._runtime = runtime
        self._reply = reply

    def __call__(self, response: dict) -> None:
        write = self._runtime.ctx.write
        if write is None:
            self._reply(response)
        else:
            write.effect(self._reply, (response,))


TIMER_RETRY_BACKOFF_MS = 500   # as the retry backoff of Kafka's coordinator timers
# A lingering batch is appended before it would grow past this (Kafka's coordinator starts its
# batch buffer at 512 KiB and appends when it is full): only one operation's own records can
# reach the log's size limit, as without lingering.
LINGER_BATCH_MAX_BYTES = 512 * 1024


class LingerBatch:
    """Writes that arrived together, appended as one batch (Kafka's CoordinatorBatch with
    ``group.coordinator.append.linger.ms`` at its default, -1: adaptive): the records of each, in
    order, and per write what waits for the append: its effects, the timers it moved, its reply."""
    __slots__ = ("partition", "now_ms", "records", "size", "entries")

    def __init__(self, partition: int, now_ms: int) -> None:
        self.partition = partition
        self.now_ms = now_ms   # the time the write that opened it was run at
        self.records: list = []
        self.size = 0
        self.entries: list = []   # (effects, timers, reply, response, on_error, args)


class CoordinatorRuntime:
    """``run`` one write operation at a time. The context (time, timers, groups, sink) is shared
    with the managers; its ``write`` is the write under way, if any."""

    def __init__(self, ctx) -> None:
        self.ctx = ctx
        self._write = Write("")
        self.lingering = 0                  # scopes open in which writes may linger (``linger``)
        self.batch: LingerBatch | None = None   # the writes lingering, not yet appended

    def deferred(self, reply: Callable[[dict], None]) -> DeferredReply:
        return DeferredReply(self, reply)

    def run(self, group_id: str, op: Callable[..., Any], args: tuple = (),
            on_error: Callable[..., Any] | None = None, snapshot: bool = True) -> Any:
        """Run ``op(*args)`` (which decides records for ``group_id``'s partition and returns its
        response), append the records, then make its effects visible and return the response. If
        the append fails, the group is restored (``snapshot``; without it the operation must defer
        every change to ``on_written``) and ``on_error(code, *args)`` is returned (None without one)."""
        ctx = self.ctx
        current = ctx.write
        if current is not None:
            if current.group_id != group_id:
                raise RuntimeError(f"a write for {group_id[:256]!r} inside the write for {current.group_id[:256]!r}")
            return op(*args)   # part of the write under way (one group, one batch)
        if self.batch is not None:   # the lingering writes go to the log first, in order
            self.flush()
        # One Write, reused: only this method fills it, and it is done with it before any effect
        # (which may start another write) runs.
        write = ctx.write = self._write
        write.group_id = group_id
        write.snapshot = snapshot
        if snapshot:
            before = write.before = ctx.groups.get(group_id)
            if before is not None:
                write.memento = before.snapshot()
        try:
            response = op(*args)
            if write.records:
                ctx.sink_write(write)
        except Exception as exc:
            ctx.write = None
            log.warning("coordinator_write_failed", group=write.group_id[:256], error=append_error_code(exc).name,
                        cause=str(exc)[:200], records=len(write.records))
            self._undo(write)
            write.clear()
            return None if on_error is None else on_error(append_error_code(exc), *args)
        ctx.write = None
        effects = write.effects
        if effects is not None:
            write.effects = None
        if write.records is not _NO_RECORDS:
            write.records, write.producer_id = _NO_RECORDS, -1
        if write.timers is not None:
            write.timers = None
        if snapshot:
            write.before = write.memento = None
        if effects is not None:
            self._apply(group_id, effects)
        return response

    # ------------------------------------------------------------ lingering writes
    def linger(self) -> None:
        """Until the matching ``end_linger``, ``run_lingering`` writes wait to be appended together
        (the requests a connection's read brought); ``flush`` appends them sooner."""
        self.lingering += 1

    def end_linger(self) -> None:
        self.lingering -= 1
        if self.lingering == 0 and self.batch is not None:
            self.flush()

    def run_lingering(self, group_id: str, op: Callable[..., Any], args: tuple,
                      on_error: Callable[..., Any], reply: Callable[[Any], None], now_ms: int) -> None:
        """``run(group_id, op, args, on_error, snapshot=False)`` with its response given to
        ``reply``; while ``linger`` is open, its records join the batch of the writes before it
        (the same partition) and its effects and reply wait for that batch's append. If the
        batch cannot be written, every write in it gets ``on_error``'s answer and none of their
        effects happen (Kafka's failCurrentBatch). The operation must change nothing but through
        its effects (``snapshot=False``: an offset commit). ``now_ms``: the time its request was
        run at (a batch it opens keeps it: ``GroupCoordinator.commit_offsets_then``)."""
        ctx = self.ctx
        if not self.lingering or ctx.write is not None:
            reply(self.run(group_id, op, args, on_error, False))
            return
        partition = partition_for(group_id, ctx.settings.offsets.topic_num_partitions)
        batch = self.batch
        if batch is not None and batch.partition != partition:
            self.flush()
            batch = None
        write = ctx.write = self._write
        write.group_id = group_id
        write.snapshot = False
        try:
            response = op(*args)
        except Exception as exc:
            ctx.write = None
            log.warning("coordinator_write_failed", group=group_id[:256], error=append_error_code(exc).name,
                        cause=str(exc)[:200], records=len(write.records))
            self._undo(write)
            write.clear()
            reply(on_error(append_error_code(exc), *args))
            return
        ctx.write = None
        records, effects, timers = write.records, write.effects, write.timers
        if records is not _NO_RECORDS:
            write.records = _NO_RECORDS
        write.effects = write.timers = None
        if write.producer_id >= 0:
            raise RuntimeError("a transactional write cannot linger")
        if not records and (batch is None or effects is None and timers is None):
            # Nothing to append and nothing waiting, or an operation that refused the request (its
            # group's answer): done now, as Kafka completes an operation that threw at once. An
            # operation that only has effects waits for the batch (Kafka's waitForPendingWrites).
            self._release(group_id, effects, reply, response)
            return
        if batch is None:
            batch = self.batch = LingerBatch(partition, now_ms)
        if records:
            size = 0
            for key, value in records:
                size += len(key or b"") + len(value or b"") + 16
            if batch.records and batch.size + size > LINGER_BATCH_MAX_BYTES:
                self.flush()
                batch = self.batch = LingerBatch(partition, now_ms)
            batch.records.extend(records)
            batch.size += size
        batch.entries.append((effects, timers, reply, response, on_error, args))

    def flush(self) -> None:
        """Append the lingering writes' batch, then release each write's effects and reply in
        order; if it cannot be appended, undo the timers they moved and answer each its error."""
        batch = self.batch
        if batch is None:
            return
        self.batch = None
        ctx = self.ctx
        try:
            ctx.sink(batch.partition, batch.records, ctx.now_ms)
        except Exception as exc:
            code = append_error_code(exc)
            log.warning("coordinator_write_failed", partition=batch.partition, error=code.name,
                        cause=str(exc)[:200], records=len(batch.records), writes=len(batch.entries))
            for _, timers, *_ in reversed(batch.entries):
                if timers is not None:
                    for key, entry in reversed(timers):
                        ctx.timers.restore(key, entry)
            for _, _, reply, _, on_error, args in batch.entries:
                try:
                    reply(on_error(code, *args))
                except Exception:
                    log.exception("coordinator_effect_failed", partition=batch.partition)
            return
        for effects, _, reply, response, _, args in batch.entries:
            self._release("", effects, reply, response)

    @staticmethod
    def _apply(group_id: str, effects: list) -> None:
        """A written operation's effects, in order: its replies to waiting members and what follows them."""
        for fn, fn_args in effects:
            try:
                fn(*fn_args)
            except Exception:   # one failing effect must not keep the others from their clients
                log.exception("coordinator_effect_failed", group=group_id[:256])

    @classmethod
    def _release(cls, group_id: str, effects: list | None, reply: Callable[[Any], None], response: Any) -> None:
        if effects is not None:
            cls._apply(group_id, effects)
        try:
            reply(response)
        except Exception:
            log.exception("coordinator_effect_failed", group=group_id[:256])

    def revert(self) -> None:
        """The operation under way failed (it raised a GroupError it answers itself): everything it
        changed goes back, as Kafka's runtime leaves a shard at its last written snapshot when an
        operation throws. Its group is restored, its timers go back, its records and effects go."""
        write = self.ctx.write
        if write is None:
            return
        self._undo(write)
        write.records, write.producer_id, write.effects, write.timers = _NO_RECORDS, -1, None, None
        if write.snapshot:   # the group as restored is the snapshot a later failure goes back to
            before = self.ctx.groups.get(write.group_id)
            write.before = before
            write.memento = before.snapshot() if before is not None else None

    def _undo(self, write: Write) -> None:
        ctx = self.ctx
        if write.snapshot:
            before = write.before
            if before is None:
                ctx.groups.pop(write.group_id, None)
            else:
                ctx.groups[write.group_id] = before
                before.restore(write.memento)
        if write.timers is not None:
            for key, entry in reversed(write.timers):
                ctx.timers.restore(key, entry)

    def timer(self, group_id: str, key: Hashable, op: Callable[[], Any]) -> None:
        """A timer's operation as one write; if its records cannot be written it is retried after
        TIMER_RETRY_BACKOFF_MS (Kafka's CoordinatorTimer reschedules a failed timer write)."""
        def retry(code: ErrorCode) -> None:
            if not self.ctx.timers.is_scheduled(key):
                self.ctx.timers.schedule(key, self.ctx.now_ms + TIMER_RETRY_BACKOFF_MS,
                                         lambda: self.timer(group_id, key, op))
        self.run(group_id, op, on_error=retry)

    def note_timer(self, write: Write, key: Hashable) -> None:
        entry = (key, self.ctx.timers.entry(key))
        if write.timers is None:
            write.timers = [entry]
        else:
            write.timers.append(entry)
