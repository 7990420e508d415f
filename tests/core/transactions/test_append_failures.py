"""A __transaction_state append that fails: the transactional id stays as it was and the request
gets Kafka's error for it (TransactionStateManager.appendTransactionToLog's mapping); a retry
succeeds. A failed fencing abort keeps the bumped epoch in memory, as Kafka does, and a failed
completion is retried at the next abort check."""
from __future__ import annotations

import pytest

from kafkaemu.core.runtime import AppendError
from kafkaemu.protocol.errors import ErrorCode as E

from .harness import TIMEOUT, TxnHarness


class Failing:
    def __init__(self, h: TxnHarness) -> None:
        self.sink = h.c.ctx.sink
        self.failure: Exception | None = None
        h.c.ctx.sink = self

    def __call__(self, *args) -> None:
        if self.failure is not None:
            raise self.failure
        self.sink(*args)


def observe(h: TxnHarness) -> dict:
    return {tid: h.c.state(tid) for tid in h.c.txns.txns}, list(h.c.transitions)


@pytest.mark.parametrize("failure,expected", [
    (AppendError(E.UNKNOWN_TOPIC_OR_PARTITION), E.COORDINATOR_NOT_AVAILABLE),
    (AppendError(E.NOT_ENOUGH_REPLICAS_AFTER_APPEND), E.COORDINATOR_NOT_AVAILABLE),
    (AppendError(E.NOT_LEADER_OR_FOLLOWER), E.NOT_COORDINATOR),
    (AppendError(E.KAFKA_STORAGE_ERROR), E.NOT_COORDINATOR),
    (AppendError(E.RECORD_LIST_TOO_LARGE), E.UNKNOWN_SERVER_ERROR),
    (OSError("disk gone"), E.UNKNOWN_SERVER_ERROR),
])
def test_init_producer_id_of_a_new_id_fails_and_nothing_is_kept(failure, expected):
    h = TxnHarness()
    sink = Failing(h)
    sink.failure = failure
    r = h.init("t")
    assert r == {"error_code": int(expected), "producer_id": -1, "producer_epoch": -1}
    assert h.md("t") is None and h.records == [] and observe(h) == ({}, [])
    sink.failure = None
    pid, epoch = h.init_ok("t")
    assert epoch == 0 and h.state() == "Empty"


def test_init_producer_id_bump_fails_and_the_epoch_stays():
    h = TxnHarness()
    sink = Failing(h)
    pid, epoch = h.init_ok("t")
    before = observe(h)
    sink.failure = AppendError(E.NOT_LEADER_OR_FOLLOWER)
    assert h.init("t")["error_code"] == E.NOT_COORDINATOR
    assert observe(h) == before and h.md().pending_state is None
    sink.failure = None
    assert h.init_ok("t") == (pid, epoch + 1)


def test_add_partitions_fails_and_the_transaction_does_not_begin():
    h = TxnHarness()
    sink = Failing(h)
    pid, epoch = h.init_ok("t")
    before = observe(h)
    sink.failure = AppendError(E.REQUEST_TIMED_OUT)
    assert h.add(pid, epoch, ("a", 0)) == E.COORDINATOR_NOT_AVAILABLE
    assert observe(h) == before and h.state() == "Empty"
    sink.failure = None
    assert h.add(pid, epoch, ("a", 0)) == E.NONE and h.state() == "Ongoing"


def test_end_txn_fails_and_the_transaction_stays_open():
    h = TxnHarness()
    sink = Failing(h)
    pid, epoch = h.ongoing("t", ("a", 0))
    before = observe(h)
    sink.failure = AppendError(E.NOT_LEADER_OR_FOLLOWER)
    assert h.end(pid, epoch, commit=True) == E.NOT_COORDINATOR
    assert observe(h) == before and h.state() == "Ongoing" and h.markers == []
    sink.failure = None
    assert h.end(pid, epoch, commit=True) == E.NONE
    assert h.state() == "CompleteCommit" and [m.partitions for m in h.markers] == [(("a", 0),)]


def test_completion_that_cannot_be_written_is_retried_at_the_next_abort_check():
    h = TxnHarness(abort_timed_out_transactions_interval_ms=1000)
    sink = Failing(h)
    pid, epoch = h.ongoing("t", ("a", 0))
    real = h._markers

    def markers_then_fail(request):
        real(request)
        sink.failure = AppendError(E.NOT_ENOUGH_REPLICAS)   # the CompleteCommit record is refused
    h.c.ctx.markers = markers_then_fail
    assert h.end(pid, epoch, commit=True) == E.NONE           # decided: PrepareCommit is written
    state = h.c.state("t")
    assert state["state"] == "PrepareCommit" and state["markers_pending"] and state["pending_state"] == "CompleteCommit"
    assert h.end(pid, epoch, commit=True) == E.CONCURRENT_TRANSACTIONS
    sink.failure = None
    h.c.ctx.markers = real
    h.advance(1000)
    assert h.state() == "CompleteCommit" and not h.c.state("t")["markers_pending"]


def test_timeout_abort_that_cannot_be_written_keeps_the_bumped_epoch_and_retries_with_it():
    """Kafka's endTransaction: a failed epoch fence leaves the epoch bumped in memory (the producer
    stays fenced) and marks hasFailedEpochFence, so the next attempt does not bump again."""
    h = TxnHarness(abort_timed_out_transactions_interval_ms=1000)
    sink = Failing(h)
    pid, epoch = h.ongoing("t", ("a", 0))
    sink.failure = AppendError(E.NOT_LEADER_OR_FOLLOWER)
    h.advance(TIMEOUT + 1000)
    md = h.md()
    assert h.state() == "Ongoing" and md.pending_state is None
    assert md.producer_epoch == epoch + 1 and md.has_failed_epoch_fence
    assert h.end(pid, epoch, commit=True) == E.PRODUCER_FENCED
    sink.failure = None
    h.advance(1000)
    assert h.state() == "CompleteAbort" and h.md().producer_epoch == epoch + 1


def test_transactional_id_expiration_that_cannot_be_written_keeps_the_id():
    h = TxnHarness(transactional_id_expiration_ms=1000, remove_expired_transactional_ids_interval_ms=500)
    sink = Failing(h)
    h.init_ok("t")
    sink.failure = AppendError(E.NOT_LEADER_OR_FOLLOWER)
    h.advance(1500)
    assert h.state() == "Empty" and h.md().pending_state is None
    sink.failure = None
    h.advance(500)
    assert h.md() is None
