"""The transaction coordinator driven with requests and a manual clock: every API's answers by
state, fencing, KIP-360 recovery, epoch exhaustion, timeouts, expiration, the test hooks."""
import pytest

from kafkaemu.core.transactions.metadata import MAX_EPOCH
from kafkaemu.core.transactions.state import TransactionState as S
from kafkaemu.protocol.errors import ErrorCode as E

from .harness import TIMEOUT, TxnHarness


def transitions(h, tid="t"):
    return [(t.from_state.value, t.to_state.value, t.producer_epoch) for t in h.c.transitions
            if t.transactional_id == tid]


# ------------------------------------------------------------------ InitProducerId
def test_idempotent_producers_get_a_fresh_id_each_time_and_nothing_is_written():
    h = TxnHarness()
    a, b = h.init(None), h.init(None)
    assert a["error_code"] == b["error_code"] == E.NONE and a["producer_id"] != b["producer_id"]
    assert a["producer_epoch"] == b["producer_epoch"] == 0 and h.records == []


def test_init_writes_empty_with_epoch_zero_then_bumps_the_epoch_with_the_same_id():
    h = TxnHarness()
    pid, epoch = h.init_ok()
    assert epoch == 0 and h.state() == "Empty"
    assert h.init_ok() == (pid, 1)
    partition = h.c.partition_for("t")
    assert [p for p, _, _ in h.records] == [partition, partition]


@pytest.mark.parametrize("timeout,code", [(0, E.INVALID_TRANSACTION_TIMEOUT), (-1, E.INVALID_TRANSACTION_TIMEOUT),
                                          (900001, E.INVALID_TRANSACTION_TIMEOUT), (900000, E.NONE)])
def test_transaction_timeout_is_bounded_by_the_max(timeout, code):
    h = TxnHarness()
    assert h.init(timeout=timeout)["error_code"] == code


def test_bad_init_requests_change_nothing():
    h = TxnHarness()
    assert h.init("")["error_code"] == E.INVALID_REQUEST
    assert h.init("t", producer_id=5)["error_code"] == E.INVALID_REQUEST          # id without epoch
    assert h.init(None, producer_epoch=5)["error_code"] == E.INVALID_REQUEST      # epoch without id
    assert h.records == [] and h.c.state("t") is None


def test_a_transactional_id_too_long_for_a_record_key_is_refused_without_state():
    h = TxnHarness()
    assert h.init("x" * 32768)["error_code"] == E.UNKNOWN_SERVER_ERROR
    assert h.c.state("x" * 32768) is None and h.records == []
    assert h.init_ok("x" * 32767)[1] == 0


def test_init_during_an_open_transaction_aborts_it_with_a_bumped_epoch_and_asks_for_a_retry():
    h = TxnHarness()
    pid, epoch = h.ongoing("t", ("a", 0), ("b", 1))
    assert h.init()["error_code"] == E.CONCURRENT_TRANSACTIONS
    assert h.state() == "CompleteAbort" and h.md().producer_epoch == epoch + 1
    [marker] = h.markers
    assert (marker.commit, marker.producer_epoch, marker.partitions) == (False, epoch + 1, (("a", 0), ("b", 1)))
    assert h.init_ok() == (pid, epoch + 2)
    # the old instance is fenced everywhere
    assert h.add(pid, epoch) == E.PRODUCER_FENCED
    assert h.end(pid, epoch) == E.PRODUCER_FENCED
    assert transitions(h)[-4:] == [("Empty", "Ongoing", 0), ("Ongoing", "PrepareAbort", 1),
                                   ("PrepareAbort", "CompleteAbort", 1), ("CompleteAbort", "Empty", 2)]


def test_init_while_markers_are_pending_answers_concurrent_transactions():
    h = TxnHarness()
    pid, epoch = h.ongoing()
    h.c.hold("t")
    assert h.end(pid, epoch) == E.NONE and h.state() == "PrepareCommit"
    assert h.init()["error_code"] == E.CONCURRENT_TRANSACTIONS
    assert h.md().producer_epoch == epoch


def test_kip360_a_producer_carrying_on_bumps_its_own_epoch():
    h = TxnHarness()
    pid, epoch = h.init_ok()
    assert h.init_ok(producer_id=pid, producer_epoch=epoch) == (pid, epoch + 1)
    # a retry of that call (its answer lost) gets the same epoch, not another bump
    assert h.init_ok(producer_id=pid, producer_epoch=epoch) == (pid, epoch + 1)
    # an instance that never saw either is fenced
    assert h.init("t", producer_id=pid, producer_epoch=epoch - 1 if epoch else 99)["error_code"] == E.PRODUCER_FENCED
    assert h.init("t", producer_id=pid + 50, producer_epoch=0)["error_code"] == E.PRODUCER_FENCED


def test_kip360_after_another_instance_initialised_the_old_one_is_fenced():
    h = TxnHarness()
    pid, epoch = h.init_ok()
    h.init_ok()   # a new instance without an expected epoch: last epoch becomes -1
    assert h.init("t", producer_id=pid, producer_epoch=epoch)["error_code"] == E.PRODUCER_FENCED


def test_an_exhausted_epoch_rotates_to_a_new_producer_id():
    h = TxnHarness()
    pid, _ = h.init_ok()
    h.md().producer_epoch = MAX_EPOCH - 1
    new_pid, epoch = h.init_ok()
    assert new_pid != pid and epoch == 0 and h.md().previous_producer_id == pid
    # the rotation was not asked with the old epoch, so a producer still holding it is fenced
    assert h.init("t", producer_id=pid, producer_epoch=MAX_EPOCH - 1)["error_code"] == E.PRODUCER_FENCED


def test_kip360_rotation_is_idempotent_for_the_producer_that_asked_for_it():
    h = TxnHarness()
    pid, _ = h.init_ok()
    h.md().producer_epoch = MAX_EPOCH - 1
    new_pid, epoch = h.init_ok(producer_id=pid, producer_epoch=MAX_EPOCH - 1)
    assert (new_pid != pid, epoch, h.md().last_producer_epoch) == (True, 0, MAX_EPOCH - 1)
    # a retry with the old id and exhausted epoch (the answer was lost): the same id and epoch again
    assert h.init_ok(producer_id=pid, producer_epoch=MAX_EPOCH - 1) == (new_pid, 0)


def test_a_timeout_fence_on_an_exhausted_epoch_then_rotates():
    h = TxnHarness()
    pid, _ = h.init_ok()
    h.md().producer_epoch = MAX_EPOCH - 2
    assert h.add(pid, MAX_EPOCH - 2) == E.NONE
    assert h.c.abort(h.now, "t") == E.NONE
    assert h.md().producer_epoch == MAX_EPOCH - 1 and h.state() == "CompleteAbort"
    new_pid, epoch = h.init_ok()
    assert (new_pid != pid, epoch) == (True, 0)


# ------------------------------------------------------------------ AddPartitionsToTxn
def test_add_partitions_starts_a_transaction_and_records_its_start():
    h = TxnHarness()
    pid, epoch = h.init_ok()
    h.advance(5)
    assert h.add(pid, epoch, ("a", 0)) == E.NONE
    md = h.md()
    assert (md.state, md.partitions, md.txn_start_timestamp) == (S.ONGOING, {("a", 0)}, h.now)
    h.advance(5)
    assert h.add(pid, epoch, ("a", 1)) == E.NONE
    assert h.md().partitions == {("a", 0), ("a", 1)} and h.md().txn_start_timestamp == h.now - 5


def test_adding_partitions_already_in_the_transaction_writes_nothing():
    h = TxnHarness()
    pid, epoch = h.ongoing("t", ("a", 0))
    written = len(h.records)
    assert h.add(pid, epoch, ("a", 0)) == E.NONE and len(h.records) == written


@pytest.mark.parametrize("case,code", [("unknown id", E.INVALID_PRODUCER_ID_MAPPING),
                                       ("other producer id", E.INVALID_PRODUCER_ID_MAPPING),
                                       ("stale epoch", E.PRODUCER_FENCED), ("newer epoch", E.PRODUCER_FENCED),
                                       ("empty id", E.INVALID_REQUEST)])
def test_add_partitions_errors_change_nothing(case, code):
    h = TxnHarness()
    pid, epoch = h.init_ok()
    h.init_ok()   # epoch 1
    args = {"unknown id": (pid, 1, "other"), "other producer id": (pid + 1, 1, "t"), "stale epoch": (pid, 0, "t"),
            "newer epoch": (pid, 2, "t"), "empty id": (pid, 1, "")}[case]
    written = len(h.records)
    assert h.add(args[0], args[1], ("a", 0), tid=args[2]) == code
    assert len(h.records) == written and h.state() == "Empty"


def test_add_partitions_while_completing_is_concurrent_transactions():
    h = TxnHarness()
    pid, epoch = h.ongoing()
    h.c.hold("t")
    h.end(pid, epoch)
    assert h.add(pid, epoch, ("b", 0)) == E.CONCURRENT_TRANSACTIONS
    assert h.c.release(h.now, "t") is True
    assert h.add(pid, epoch, ("b", 0)) == E.NONE and h.state() == "Ongoing"


def test_verify_only_answers_per_partition_and_writes_nothing():
    h = TxnHarness()
    pid, epoch = h.ongoing("t", ("a", 0))
    written = len(h.records)
    assert h.verify(pid, epoch, ("a", 0), ("a", 1)) == {("a", 0): E.NONE, ("a", 1): E.TRANSACTION_ABORTABLE}
    assert h.verify(pid, epoch - 1 if epoch else 5, ("a", 0)) == {("a", 0): E.PRODUCER_FENCED}
    assert h.verify(pid + 1, epoch, ("a", 0)) == {("a", 0): E.INVALID_PRODUCER_ID_MAPPING}
    assert h.verify(pid, epoch, ("a", 0), tid="nope") == {("a", 0): E.INVALID_PRODUCER_ID_MAPPING}
    assert h.verify(pid, epoch, ("a", 0), tid="") == {("a", 0): E.INVALID_REQUEST}
    h.c.hold("t")
    h.end(pid, epoch)
    assert h.verify(pid, epoch, ("a", 0)) == {("a", 0): E.CONCURRENT_TRANSACTIONS}
    assert len(h.records) == written + 1   # only the PrepareCommit


# ------------------------------------------------------------------ EndTxn
def test_commit_writes_prepare_markers_and_complete_in_that_order():
    h = TxnHarness()
    pid, epoch = h.ongoing("t", ("a", 0), ("a", 1))
    assert h.end(pid, epoch, commit=True) == E.NONE
    [marker] = h.markers
    assert (marker.transactional_id, marker.producer_id, marker.producer_epoch, marker.commit, marker.partitions,
            marker.txn_partition) == ("t", pid, epoch, True, (("a", 0), ("a", 1)), h.c.partition_for("t"))
    assert transitions(h)[-2:] == [("Ongoing", "PrepareCommit", epoch), ("PrepareCommit", "CompleteCommit", epoch)]
    assert h.md().partitions == set() and h.md().producer_epoch == epoch   # V1: no bump at EndTxn


def test_end_txn_answers_by_state_as_kafka():
    h = TxnHarness()
    pid, epoch = h.init_ok()
    assert h.end(pid, epoch, True) == E.INVALID_TXN_STATE          # Empty: nothing to end
    h.add(pid, epoch)
    assert h.end(pid, epoch, True) == E.NONE
    assert h.end(pid, epoch, True) == E.NONE                       # a retry after completion
    assert h.end(pid, epoch, False) == E.INVALID_TXN_STATE         # the other outcome
    h.add(pid, epoch)
    h.c.hold("t")
    assert h.end(pid, epoch, False) == E.NONE and h.state() == "PrepareAbort"
    assert h.end(pid, epoch, False) == E.CONCURRENT_TRANSACTIONS   # a retry while completing
    assert h.end(pid, epoch, True) == E.CONCURRENT_TRANSACTIONS    # (pending completion answers first)
    assert len(h.markers) == 1


@pytest.mark.parametrize("case,code", [("unknown id", E.INVALID_PRODUCER_ID_MAPPING),
                                       ("other producer id", E.INVALID_PRODUCER_ID_MAPPING),
                                       ("stale epoch", E.PRODUCER_FENCED), ("newer epoch", E.PRODUCER_FENCED),
                                       ("empty id", E.INVALID_REQUEST)])
def test_end_txn_errors_leave_the_transaction_open(case, code):
    h = TxnHarness()
    h.init_ok()
    pid, epoch = h.ongoing()
    args = {"unknown id": (pid, epoch, "other"), "other producer id": (pid + 1, epoch, "t"),
            "stale epoch": (pid, epoch - 1, "t"), "newer epoch": (pid, epoch + 1, "t"),
            "empty id": (pid, epoch, "")}[case]
    assert h.end(args[0], args[1], True, tid=args[2]) == code
    assert h.state() == "Ongoing" and h.markers == [] and h.md().pending_state is None


def test_markers_that_fail_are_retried_and_the_transaction_completes():
    h = TxnHarness(abort_timed_out_transactions_interval_ms=1000)
    pid, epoch = h.ongoing()
    h.fail_markers = True
    assert h.end(pid, epoch) == E.NONE
    assert h.state() == "PrepareCommit" and h.c.state("t")["markers_pending"]
    h.fail_markers = False
    h.advance(1000)
    assert h.state() == "CompleteCommit" and len(h.markers) == 1


# ------------------------------------------------------------------ timeouts
def test_a_transaction_open_past_its_timeout_is_aborted_at_the_next_check_with_the_epoch_bumped():
    h = TxnHarness(abort_timed_out_transactions_interval_ms=10000)
    pid, epoch = h.init_ok(timeout=15000)
    h.add(pid, epoch)
    h.advance(14999)
    assert h.state() == "Ongoing"
    h.advance(10000)   # past start + timeout, and a check ran
    assert h.state() == "CompleteAbort" and h.md().producer_epoch == epoch + 1
    assert h.markers[-1].commit is False and h.markers[-1].producer_epoch == epoch + 1
    assert h.end(pid, epoch, True) == E.PRODUCER_FENCED and h.add(pid, epoch) == E.PRODUCER_FENCED


def test_the_timeout_counts_from_the_first_partition_not_the_last():
    h = TxnHarness(abort_timed_out_transactions_interval_ms=1000)
    pid, epoch = h.init_ok(timeout=5000)
    h.add(pid, epoch, ("a", 0))
    h.advance(3000)
    h.add(pid, epoch, ("a", 1))
    h.advance(3000)
    assert h.state() == "CompleteAbort"


def test_a_held_transaction_does_not_time_out_until_released():
    h = TxnHarness(abort_timed_out_transactions_interval_ms=1000)
    pid, epoch = h.init_ok(timeout=5000)
    h.add(pid, epoch)
    h.c.hold("t")
    h.advance(60000)
    assert h.state() == "Ongoing"
    assert h.c.release(h.now, "t") is False   # nothing was withheld
    h.advance(1000)
    assert h.state() == "CompleteAbort"


def test_time_out_hook_aborts_now_whatever_the_clock():
    h = TxnHarness()
    pid, epoch = h.ongoing()
    assert h.c.time_out(h.now, "t") == E.NONE
    assert h.state() == "CompleteAbort" and h.md().producer_epoch == epoch + 1
    assert h.c.time_out(h.now, "t") == E.INVALID_TXN_STATE


def test_time_out_of_a_held_transaction_keeps_its_markers_held():
    h = TxnHarness()
    h.ongoing()
    h.c.hold("t")
    assert h.c.time_out(h.now, "t") == E.NONE
    assert h.state() == "PrepareAbort" and h.markers == []
    assert h.c.release(h.now, "t") is True and h.state() == "CompleteAbort"


def test_fence_hook_bumps_the_epoch_like_a_new_instance():
    h = TxnHarness()
    pid, epoch = h.ongoing()
    result = h.c.fence(h.now, "t")
    assert result == {"error_code": 0, "producer_id": pid, "producer_epoch": epoch + 2}
    assert h.state() == "Empty" and h.add(pid, epoch) == E.PRODUCER_FENCED
    assert h.c.fence(h.now, "t")["producer_epoch"] == epoch + 3


def test_abort_hook_needs_an_open_transaction():
    h = TxnHarness()
    h.init_ok()
    assert h.c.abort(h.now, "t") == E.INVALID_TXN_STATE
    with pytest.raises(KeyError):
        h.c.abort(h.now, "unknown")


# ------------------------------------------------------------------ expiration
def test_idle_transactional_ids_expire_with_a_tombstone_but_not_while_a_transaction_is_open():
    h = TxnHarness(transactional_id_expiration_ms=100000, remove_expired_transactional_ids_interval_ms=50000)
    h.init_ok("idle")
    pid, epoch = h.ongoing("busy")
    h.advance(150000)
    assert h.c.state("idle") is None and h.c.state("busy") is not None
    assert (records := [r for _, recs, _ in h.records for r in recs if r[1] is None])
    from kafkaemu.core.transactions.records import decode_key
    assert [decode_key(k).transactional_id for k, _ in records] == ["idle"]
    # the expired id starts over with a new producer id
    assert h.init("idle")["producer_epoch"] == 0


# ------------------------------------------------------------------ admin
def test_describe_and_list_with_filters():
    h = TxnHarness()
    h.init_ok("empty")
    pid, epoch = h.ongoing("open", ("b", 1), ("a", 0), ("a", 2))
    h.advance(100)
    d = h.c.describe(h.now, "open")
    assert (d["transaction_state"], d["producer_id"], d["producer_epoch"], d["transaction_timeout_ms"],
            d["transaction_start_time_ms"]) == ("Ongoing", pid, epoch, TIMEOUT, h.now - 100)
    assert d["topics"] == [{"topic": "a", "partitions": [0, 2]}, {"topic": "b", "partitions": [1]}]
    assert h.c.describe(h.now, "nope")["error_code"] == E.TRANSACTIONAL_ID_NOT_FOUND
    assert h.c.describe(h.now, "")["error_code"] == E.INVALID_REQUEST
    everything = h.list()
    assert sorted(s["transactional_id"] for s in everything["transaction_states"]) == ["empty", "open"]
    ongoing = h.list(states=["Ongoing", "Bogus"])
    assert [s["transactional_id"] for s in ongoing["transaction_states"]] == ["open"]
    assert ongoing["unknown_state_filters"] == ["Bogus"]
    assert [s["transactional_id"] for s in h.list(pids=[pid])["transaction_states"]] == ["open"]
    # the duration filter compares now with the start time, -1 for a transaction never started (as Kafka)
    assert sorted(s["transactional_id"] for s in h.list(duration=50)["transaction_states"]) == ["empty", "open"]
    assert [s["transactional_id"] for s in h.list(duration=100)["transaction_states"]] == ["empty"]
