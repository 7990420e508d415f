"""The transaction coordinator: a thin router over the transaction state manager (Apache Kafka's
TransactionCoordinator), the twin of core/coordinator.py for groups.

Every public method takes ``now_ms`` first and answers at once (writes are synchronous). Each
change is prepared, its record appended to __transaction_state through an injected sink, and only
then applied and answered (manager.write); a failed append leaves the transactional id as it was
and answers Kafka's error for it, except a failed fencing abort, which keeps the bumped epoch as
Kafka does (``has_failed_epoch_fence``). The markers of a completing transaction go to an injected
marker writer (a ``WriteMarkers`` effect the broker carries out on the partitions), after which the
coordinator writes CompleteCommit/CompleteAbort; if either fails it is retried at the next abort
check. ``tick(now_ms)`` fires the periodic abort of timed-out transactions and expiration of idle
transactional ids, through the same write path.

Transactions V1 and V2 (KIP-890 part 2): a client's EndTxn v5 and the partitions a V2 producer's
first transactional write adds use V2, which bumps the epoch at every EndTxn (end_txn.py); the
coordinator's own aborts (timeouts, fencing) and the version of its records use the finalized
``transaction.version`` in force at that moment (``transaction_version``, a function: the broker's
finalized features, which UpdateFeatures changes while running; ``settings.transaction_version``
without one).

Test hooks (no broker offers them): ``hold``/``release`` keep a transaction's markers unwritten
so it stays in PrepareCommit/PrepareAbort and pins the last stable offset (a held transaction is
also never timed out), ``abort`` aborts an open transaction as the coordinator does on its own
(fencing the producer's epoch), ``time_out`` makes it time out now (the same abort, logged as a
timeout), ``fence`` bumps the epoch as a new producer
instance would, ``state`` reads it.
"""
from __future__ import annotations

from contextlib import contextmanager
from typing import Callable, Iterable, Iterator

from ...logging import get_logger
from ...protocol.errors import ErrorCode
from ..record_format import fits_record_key
from .settings import TransactionSettings
from .context import MarkerWriter, Sink, TransactionContext, TxnTransition, WriteMarkers
from .end_txn import prepare_end
from .manager import TransactionStateManager
from .metadata import (NO_PRODUCER_EPOCH, NO_PRODUCER_ID, TransactionError, TransactionMetadata, TxnTransit,
                       is_epoch_exhausted)
from .requests import AddPartitions, EndTxn, InitProducerId, ListTransactions, TopicPartition
from .state import IllegalStateTransition, TransactionState

log = get_logger("kafkaemu.transactions")
S = TransactionState
E = ErrorCode
ABORT_KEY = ("transaction-abort",)
EXPIRE_KEY = ("transactional-id-expiration",)


def _producer_result(error: ErrorCode, producer_id: int = NO_PRODUCER_ID, epoch: int = NO_PRODUCER_EPOCH) -> dict:
    return {"error_code": int(error), "producer_id": producer_id, "producer_epoch": epoch}


class TransactionCoordinator:
    def __init__(self, settings: TransactionSettings | None = None, sink: Sink | None = None,
                 markers: MarkerWriter | None = None, next_producer_id: Callable[[], int] | None = None,
                 now_ms: int = 0, transition_log_size: int = 100000,
                 transaction_version: Callable[[], int] | None = None) -> None:
        self.ctx = TransactionContext(settings or TransactionSettings(), sink, markers, next_producer_id, now_ms,
                                      transition_log_size, transaction_version)
        self.txns = TransactionStateManager(self.ctx)
        # transactional id -> the completion waiting for its markers (Kafka's transactionsWithPendingMarkers)
        self.pending_markers: dict[str, tuple[bool, TxnTransit]] = {}
        self.held: set[str] = set()
        self._schedule_abort_check()
        self._schedule_expiration()

    @property
    def settings(self) -> TransactionSettings:
        return self.ctx.settings

    @property
    def transitions(self) -> Iterable[TxnTransition]:
        return self.ctx.transitions

    def partition_for(self, transactional_id: str) -> int:
        return self.txns.partition_for(transactional_id)

    # ============================================================ time
    def tick(self, now_ms: int) -> None:
        self.ctx.timers.poll(now_ms, self.ctx.advance)
        self.ctx.advance(now_ms)

    def next_deadline_ms(self) -> int | None:
        return self.ctx.timers.next_deadline()

    @contextmanager
    def _request(self, now_ms: int) -> Iterator[None]:
        self.tick(now_ms)
        yield

    def _schedule_abort_check(self) -> None:
        interval = self.settings.abort_timed_out_transactions_interval_ms
        self.ctx.timers.schedule(ABORT_KEY, self.ctx.now_ms + interval, self._run_abort_check, every_ms=interval)

    def _run_abort_check(self) -> None:
        self.abort_timed_out_transactions(self.ctx.now_ms)
        self._schedule_abort_check()

    def _schedule_expiration(self) -> None:
        interval = self.settings.remove_expired_transactional_ids_interval_ms
        self.ctx.timers.schedule(EXPIRE_KEY, self.ctx.now_ms + interval, self._run_expiration, every_ms=interval)

    def _run_expiration(self) -> None:
        self.txns.remove_expired_transactional_ids(self.ctx.now_ms)
        self._schedule_expiration()

    # ============================================================ InitProducerId
    def init_producer_id(self, now_ms: int, req: InitProducerId) -> dict:
        """``error_code``, ``producer_id``, ``producer_epoch`` (PRODUCER_FENCED as such: handlers
        translate it for older versions)."""
        with self._request(now_ms):
            tid = req.transactional_id
            if (req.producer_id == NO_PRODUCER_ID) != (req.producer_epoch == NO_PRODUCER_EPOCH):
                return _producer_result(E.INVALID_REQUEST)   # one of id and epoch without the other
            if tid is None:   # idempotent producers: always a fresh id
                return _producer_result(E.NONE, self.ctx.next_producer_id(), 0)
            if tid == "":
                return _producer_result(E.INVALID_REQUEST)
            if not self.txns.validate_timeout(req.transaction_timeout_ms):
                return _producer_result(E.INVALID_TRANSACTION_TIMEOUT)
            if not fits_record_key(tid):
                # Kafka fails to write such a record and answers UNKNOWN_SERVER_ERROR; nothing changes
                return _producer_result(E.UNKNOWN_SERVER_ERROR)
            expected = None if req.producer_id == NO_PRODUCER_ID else (req.producer_id, req.producer_epoch)
            md = self.txns.get(tid)
            created = md is None
            if created:
                md = self.txns.put_if_absent(TransactionMetadata(
                    tid, self.ctx.next_producer_id(), NO_PRODUCER_EPOCH, req.transaction_timeout_ms, S.EMPTY,
                    self.ctx.now_ms))
            try:
                transit = self._prepare_init(md, req.transaction_timeout_ms, expected)
            except TransactionError as exc:
                return _producer_result(exc.code)
            if transit.state is S.PREPARE_EPOCH_FENCE:
                # abort the open transaction first; the client retries and gets a second bump
                error = self._end_transaction(tid, transit.producer_id, transit.producer_epoch, False,
                                              from_client=False)["error_code"]
                return _producer_result(E(error) if error else E.CONCURRENT_TRANSACTIONS)
            error = self.txns.write(md, transit)
            if error:
                if created:
                    del self.txns.txns[tid]   # nothing of it was written: as if never asked
                return _producer_result(error)
            log.info("producer_id_initialized", transactional_id=tid, producer_id=md.producer_id,
                     producer_epoch=md.producer_epoch, partition=self.partition_for(tid))
            return _producer_result(E.NONE, md.producer_id, md.producer_epoch)

    def _prepare_init(self, md: TransactionMetadata, timeout_ms: int, expected: tuple[int, int] | None) -> TxnTransit:
        def valid_producer_id(pid: int, epoch: int) -> bool:
            # a brand new id (a producer recovering from UNKNOWN_PRODUCER_ID), the current id, or the
            # previous one with an exhausted epoch (a retry of a rotation whose answer was lost)
            return md.producer_epoch == NO_PRODUCER_EPOCH or pid == md.producer_id or \
                (pid == md.previous_producer_id and is_epoch_exhausted(epoch))

        if md.pending_transition_in_progress:
            raise TransactionError(E.CONCURRENT_TRANSACTIONS)
        if expected is not None and not valid_producer_id(*expected):
            raise TransactionError(E.PRODUCER_FENCED)
        if md.state in (S.PREPARE_ABORT, S.PREPARE_COMMIT):
            raise TransactionError(E.CONCURRENT_TRANSACTIONS)
        if md.state in (S.COMPLETE_ABORT, S.COMPLETE_COMMIT, S.EMPTY):
            if md.is_producer_epoch_exhausted and (expected is None or expected[1] == md.producer_epoch):
                return md.prepare_producer_id_rotation(self.ctx.next_producer_id(), timeout_ms, self.ctx.now_ms,
                                                       expected is not None)
            return md.prepare_increment_producer_epoch(timeout_ms, None if expected is None else expected[1],
                                                       self.ctx.now_ms)
        if md.state is S.ONGOING:
            return md.prepare_fence_producer_epoch()
        raise IllegalStateTransition(f"transactional id {md.transactional_id} found in state {md.state.value}")

    # ============================================================ AddPartitionsToTxn / AddOffsetsToTxn
    def add_partitions(self, now_ms: int, req: AddPartitions) -> ErrorCode:
        """AddPartitionsToTxn, AddOffsetsToTxn, and (``req.transaction_version`` 2) the partitions a
        V2 producer's transactional write or TxnOffsetCommit adds, which may start a transaction."""
        with self._request(now_ms):
            tid = req.transactional_id
            if not tid:
                return E.INVALID_REQUEST
            md = self.txns.get(tid)
            if md is None:
                return E.INVALID_PRODUCER_ID_MAPPING
            if md.pending_transition_in_progress:
                # first, as Kafka 4.x: a V2 completion may be rotating to the id the producer uses
                return E.CONCURRENT_TRANSACTIONS
            if md.producer_id != req.producer_id:
                return E.INVALID_PRODUCER_ID_MAPPING
            if md.producer_epoch != req.producer_epoch:
                return E.PRODUCER_FENCED
            if md.state in (S.PREPARE_COMMIT, S.PREPARE_ABORT):
                return E.CONCURRENT_TRANSACTIONS
            added = set(req.partitions)
            if md.state is S.ONGOING and added <= md.partitions:
                return E.NONE   # already in the transaction: nothing to write
            return self.txns.write(md, md.prepare_add_partitions(added, self.ctx.now_ms, req.transaction_version))

    def verify_partitions(self, now_ms: int, req: AddPartitions) -> dict[TopicPartition, ErrorCode]:
        """AddPartitionsToTxn v4+ verify_only (KIP-890): whether each partition is in the transaction."""
        with self._request(now_ms):
            parts = list(req.partitions)
            tid = req.transactional_id
            if not tid:
                return dict.fromkeys(parts, E.INVALID_REQUEST)
            md = self.txns.get(tid)
            if md is None or md.producer_id != req.producer_id:
                return dict.fromkeys(parts, E.INVALID_PRODUCER_ID_MAPPING)
            if md.producer_epoch != req.producer_epoch:
                return dict.fromkeys(parts, E.PRODUCER_FENCED)
            if md.state in (S.PREPARE_COMMIT, S.PREPARE_ABORT):
                return dict.fromkeys(parts, E.CONCURRENT_TRANSACTIONS)
            return {tp: E.NONE if tp in md.partitions else E.TRANSACTION_ABORTABLE for tp in parts}

    # ============================================================ EndTxn
    def end_transaction(self, now_ms: int, req: EndTxn) -> dict:
        """``error_code`` (PRODUCER_FENCED as such), ``producer_id``, ``producer_epoch``."""
        with self._request(now_ms):
            return self._end_transaction(req.transactional_id, req.producer_id, req.producer_epoch, req.committed,
                                         from_client=True, transaction_version=req.transaction_version)

    def _end_transaction(self, tid: str, producer_id: int, epoch: int, commit: bool, from_client: bool,
                         transaction_version: int | None = None) -> dict:
        if not tid:
            return _producer_result(E.INVALID_REQUEST)
        md = self.txns.get(tid)
        if md is None:
            return _producer_result(E.INVALID_PRODUCER_ID_MAPPING)
        if transaction_version is None:   # not from a client: the finalized version now
            transaction_version = self.ctx.transaction_version()
        fencing = md.pending_state is S.PREPARE_EPOCH_FENCE
        try:
            transit = prepare_end(md, producer_id, epoch, commit, from_client, transaction_version,
                                  self.ctx.next_producer_id, self.ctx.now_ms)
        except TransactionError as exc:
            if fencing and not from_client:
                md.pending_state = None   # the fence is not going ahead
            return _producer_result(exc.code)
        if transit is None:   # a retry of a completed EndTxn
            return _producer_result(E.NONE, md.producer_id, md.producer_epoch)
        error = self.txns.write(md, transit)
        if error:
            if fencing and not from_client:
                # As Kafka: the epoch stays bumped in memory (the producer stays fenced) and the
                # next fence reuses it rather than bumping again.
                md.has_failed_epoch_fence = True
                log.warning("transaction_fence_not_written", transactional_id=tid, producer_epoch=md.producer_epoch,
                            error=error.name)
            return _producer_result(error)
        # the outcome is decided: answer, then write the markers and complete
        completion = md.prepare_complete(self.ctx.now_ms)
        self.pending_markers[tid] = (commit, completion)
        log.info("transaction_ending", transactional_id=tid, commit=commit, producer_id=md.producer_id,
                 producer_epoch=md.producer_epoch, partitions=len(md.partitions), held=tid in self.held,
                 transaction_version=md.client_transaction_version)
        # the producer id and epoch the client goes on with (V2: bumped, or a new id at epoch 0)
        result = _producer_result(E.NONE, completion.producer_id, completion.producer_epoch)
        if tid not in self.held:
            self._write_markers(tid)
        return result

    def _write_markers(self, tid: str) -> bool:
        """Write the markers of a decided transaction, then its CompleteCommit/CompleteAbort record."""
        commit, completion = self.pending_markers[tid]
        md = self.txns.get(tid)
        partitions = tuple(sorted(md.partitions))
        try:
            if partitions:   # a V2 abort with no partition added has none to write
                self.ctx.markers(WriteMarkers(tid, self.partition_for(tid), md.producer_id, md.producer_epoch,
                                              commit, partitions, self.ctx.now_ms, md.client_transaction_version))
        except Exception:
            log.exception("transaction_markers_failed", transactional_id=tid)
            return False   # kept pending; retried at the next abort check
        for tp in partitions:
            md.remove_partition(tp)
        if self.txns.write(md, completion, keep_pending=True):
            return False   # kept pending with its markers written; retried at the next abort check
        del self.pending_markers[tid]
        log.info("transaction_completed", transactional_id=tid, commit=commit, producer_id=md.producer_id,
                 producer_epoch=md.producer_epoch, partitions=len(partitions))
        return True

    # ============================================================ timeouts
    def abort_timed_out_transactions(self, now_ms: int) -> list[str]:
        """Abort (fencing the epoch) every transaction open past its timeout; returns their ids."""
        self.ctx.advance(now_ms)
        for tid in [t for t in self.pending_markers if t not in self.held]:
            self._write_markers(tid)   # markers that failed before
        aborted = []
        for md in self.txns.timed_out(self.ctx.now_ms):
            if md.transactional_id in self.held:
                continue
            log.info("transaction_timed_out", transactional_id=md.transactional_id, producer_id=md.producer_id,
                     producer_epoch=md.producer_epoch, timeout_ms=md.txn_timeout_ms)
            if self._fence_and_abort(md) == E.NONE:
                aborted.append(md.transactional_id)
        return aborted

    def _fence_and_abort(self, md: TransactionMetadata) -> ErrorCode:
        transit = md.prepare_fence_producer_epoch()
        return E(self._end_transaction(md.transactional_id, transit.producer_id, transit.producer_epoch, False,
                                       from_client=False)["error_code"])

    # ============================================================ admin
    def describe(self, now_ms: int, transactional_id: str) -> dict:
        with self._request(now_ms):
            # an error sets the code alone; the other fields keep the message's defaults (0), as Kafka's
            out = {"transactional_id": transactional_id, "error_code": int(E.NONE), "transaction_state": "",
                   "transaction_timeout_ms": 0, "transaction_start_time_ms": 0, "producer_id": 0,
                   "producer_epoch": 0, "topics": []}
            if not transactional_id:
                return dict(out, error_code=int(E.INVALID_REQUEST))
            md = self.txns.get(transactional_id)
            if md is None or md.state is S.DEAD:
                return dict(out, error_code=int(E.TRANSACTIONAL_ID_NOT_FOUND))
            topics: dict[str, list[int]] = {}
            for topic, partition in sorted(md.partitions):
                topics.setdefault(topic, []).append(partition)
            return dict(out, transaction_state=md.state.value, transaction_timeout_ms=md.txn_timeout_ms,
                        transaction_start_time_ms=md.txn_start_timestamp, producer_id=md.producer_id,
                        producer_epoch=md.producer_epoch,
                        topics=[{"topic": t, "partitions": ps} for t, ps in topics.items()])

    def list_transactions(self, now_ms: int, req: ListTransactions) -> dict:
        with self._request(now_ms):
            return self.txns.list_states(req.producer_id_filters, req.state_filters, req.duration_filter_ms,
                                         self.ctx.now_ms)

    # ============================================================ replay of __transaction_state
    def load(self, entries: Iterable[tuple[bytes, bytes | None]], now_ms: int) -> None:
        """Rebuild every transactional id from __transaction_state; a transaction found in
        PrepareCommit/PrepareAbort (a restart mid-commit) gets its markers written and completes."""
        self.ctx.advance(now_ms)
        skipped = self.txns.load(entries)
        if skipped:
            log.warning("transaction_records_skipped", count=skipped)
        for md in list(self.txns.txns.values()):
            if md.state in (S.PREPARE_COMMIT, S.PREPARE_ABORT):
                commit = md.state is S.PREPARE_COMMIT
                self.pending_markers[md.transactional_id] = (commit, md.prepare_complete(self.ctx.now_ms))
                log.info("transaction_completing_after_load", transactional_id=md.transactional_id, commit=commit)
                self._write_markers(md.transactional_id)

    def max_producer_id(self) -> int:
        """The highest producer id any transactional id holds (new ids must come after it)."""
        return max((max(md.producer_id, md.previous_producer_id) for md in self.txns.txns.values()), default=-1)

    # ============================================================ test hooks
    def _existing(self, transactional_id: str) -> TransactionMetadata:
        md = self.txns.get(transactional_id)
        if md is None:
            raise KeyError(f"no transactional id {transactional_id!r}")
        return md

    def hold(self, transactional_id: str) -> None:
        """Keep this transactional id's markers unwritten (and its transaction from timing out)
        until ``release``: an EndTxn is answered but the transaction stays in PrepareCommit or
        PrepareAbort, so the last stable offset of its partitions stays where it began."""
        self.held.add(transactional_id)

    def release(self, now_ms: int, transactional_id: str) -> bool:
        """Stop holding; write markers withheld meanwhile. True when a transaction completed."""
        with self._request(now_ms):
            self.held.discard(transactional_id)
            if transactional_id in self.pending_markers:
                return self._write_markers(transactional_id)
            return False

    def abort(self, now_ms: int, transactional_id: str) -> ErrorCode:
        """Abort the open transaction as the coordinator does on its own (a timeout, a new instance):
        the epoch is bumped, so the producer is fenced. INVALID_TXN_STATE when none is open;
        CONCURRENT_TRANSACTIONS while a transition is under way."""
        with self._request(now_ms):
            md = self._existing(transactional_id)
            if md.pending_transition_in_progress:
                return E.CONCURRENT_TRANSACTIONS
            if md.state is not S.ONGOING:
                return E.INVALID_TXN_STATE
            return self._fence_and_abort(md)

    def time_out(self, now_ms: int, transactional_id: str) -> ErrorCode:
        """Make the open transaction's timeout pass now and abort it as the coordinator's timeout
        check does, whatever the clock (a held transaction times out too; its markers stay held)."""
        with self._request(now_ms):
            md = self._existing(transactional_id)
            if md.pending_transition_in_progress:
                return E.CONCURRENT_TRANSACTIONS
            if md.state is not S.ONGOING:
                return E.INVALID_TXN_STATE
            log.info("transaction_timed_out", transactional_id=transactional_id, producer_id=md.producer_id,
                     producer_epoch=md.producer_epoch, timeout_ms=md.txn_timeout_ms, forced=True)
            return self._fence_and_abort(md)

    def fence(self, now_ms: int, transactional_id: str) -> dict:
        """Bump the epoch as a new producer instance's InitProducerId would (aborting an open
        transaction first), so the current producer gets PRODUCER_FENCED. Returns the new
        ``producer_id``/``producer_epoch`` or the error."""
        md = self._existing(transactional_id)
        result = self.init_producer_id(now_ms, InitProducerId(transactional_id, md.txn_timeout_ms))
        if result["error_code"] == E.CONCURRENT_TRANSACTIONS and md.state is S.COMPLETE_ABORT:
            result = self.init_producer_id(now_ms, InitProducerId(transactional_id, md.txn_timeout_ms))
        return result

    def state(self, transactional_id: str) -> dict | None:
        """A transactional id's metadata as a dict (None when unknown)."""
        md = self.txns.get(transactional_id)
        if md is None:
            return None
        return {"transactional_id": md.transactional_id, "state": md.state.value,
                "pending_state": md.pending_state.value if md.pending_state else None,
                "producer_id": md.producer_id, "producer_epoch": md.producer_epoch,
                "last_producer_epoch": md.last_producer_epoch, "timeout_ms": md.txn_timeout_ms,
                "partitions": sorted(md.partitions), "start_ms": md.txn_start_timestamp,
                "last_update_ms": md.txn_last_update_timestamp, "held": transactional_id in self.held,
                "transaction_version": md.client_transaction_version,
                "markers_pending": transactional_id in self.pending_markers,
                "coordinator_partition": self.partition_for(transactional_id)}
