"""Transactions V2 (KIP-890 part 2) in the pure coordinator: an epoch bump at every EndTxn, Kafka's
table of retries and empty aborts, producer id rotation on an exhausted epoch, the coordinator's own
aborts at transaction.version 2, and the records they write."""
import pytest

from kafkaemu.core.transactions import records
from kafkaemu.core.transactions.metadata import MAX_EPOCH
from kafkaemu.protocol.errors import ErrorCode as E
from tests.core.transactions.harness import TxnHarness

V2 = 2


def v2_ongoing(h: TxnHarness, *partitions) -> tuple[int, int]:
    pid, epoch = h.init_ok()
    assert h.add(pid, epoch, *(partitions or [("a", 0)]), tv=V2) == E.NONE
    return pid, epoch


def last_value(h: TxnHarness):
    key, value = h.all_records()[-1]
    return records.decode_value(records.decode_key(key).transactional_id, value)


@pytest.mark.parametrize("commit", [True, False])
def test_every_end_txn_bumps_the_epoch_and_answers_it(commit):
    h = TxnHarness(transaction_version=V2)
    pid, epoch = v2_ongoing(h, ("a", 0), ("b", 1))
    result = h.end_result(pid, epoch, commit, tv=V2)
    assert result == {"error_code": E.NONE, "producer_id": pid, "producer_epoch": epoch + 1}
    assert h.state() == ("CompleteCommit" if commit else "CompleteAbort")
    assert (h.md().producer_epoch, h.md().last_producer_epoch) == (epoch + 1, epoch)
    # the markers carry the bumped epoch and say they are V2's
    (marker,) = h.markers
    assert (marker.producer_epoch, marker.transaction_version, marker.commit) == (epoch + 1, V2, commit)
    # the next transaction runs at the bumped epoch and bumps it again
    assert h.add(pid, epoch, ("a", 0), tv=V2) == E.PRODUCER_FENCED
    assert h.add(pid, epoch + 1, ("a", 0), tv=V2) == E.NONE
    assert h.end_result(pid, epoch + 1, True, tv=V2)["producer_epoch"] == epoch + 2


def test_prepare_and_complete_records_carry_the_bumped_epoch_and_the_client_version():
    h = TxnHarness(transaction_version=V2)
    pid, epoch = v2_ongoing(h)
    before = len(h.all_records())
    h.end(pid, epoch, True, tv=V2)
    prepare, complete = [records.decode_value("t", v) for _, v in h.all_records()[before:]]
    assert (prepare.state.value, prepare.producer_epoch, prepare.client_transaction_version) == \
        ("PrepareCommit", epoch + 1, V2)
    assert (complete.state.value, complete.producer_epoch, complete.partitions) == ("CompleteCommit", epoch + 1, set())
    assert h.all_records()[-1][1][:2] == b"\x00\x01"   # TransactionLogValue v1 at transaction.version >= 1


def test_at_transaction_version_0_the_values_stay_version_0():
    h = TxnHarness(transaction_version=0)
    h.init_ok()
    assert h.all_records()[-1][1][:2] == b"\x00\x00"


def test_a_retry_is_an_epoch_one_below_and_answers_the_current_epoch():
    h = TxnHarness(transaction_version=V2)
    pid, epoch = v2_ongoing(h)
    h.end(pid, epoch, True, tv=V2)
    writes = len(h.all_records())
    assert h.end_result(pid, epoch, True, tv=V2) == {"error_code": E.NONE, "producer_id": pid,
                                                     "producer_epoch": epoch + 1}
    assert h.end(pid, epoch, False, tv=V2) == E.INVALID_TXN_STATE     # a retry of the other outcome
    assert h.end(pid, epoch - 1, True, tv=V2) == E.PRODUCER_FENCED     # older than a retry
    assert len(h.all_records()) == writes
    assert h.end_result(pid, epoch, False, tv=V2)["producer_id"] == -1  # errors answer no producer


# Kafka's table for Empty / CompleteAbort / CompleteCommit (retry: the epoch one below the current one)
@pytest.mark.parametrize("state,commit,retry,expected", [
    ("Empty", False, True, E.PRODUCER_FENCED), ("Empty", False, False, "bump"),
    ("Empty", True, True, E.PRODUCER_FENCED), ("Empty", True, False, E.INVALID_TXN_STATE),
    ("CompleteAbort", False, True, E.NONE), ("CompleteAbort", False, False, "bump"),
    ("CompleteAbort", True, True, E.INVALID_TXN_STATE), ("CompleteAbort", True, False, E.INVALID_TXN_STATE),
    ("CompleteCommit", False, True, E.INVALID_TXN_STATE), ("CompleteCommit", False, False, "bump"),
    ("CompleteCommit", True, True, E.NONE), ("CompleteCommit", True, False, E.INVALID_TXN_STATE),
])
def test_the_v2_table_for_settled_states(state, commit, retry, expected):
    h = TxnHarness(transaction_version=V2)
    pid, epoch = h.init_ok()
    h.init_ok()   # epoch 1: an epoch below it exists
    epoch += 1
    if state != "Empty":
        assert h.add(pid, epoch, tv=V2) == E.NONE
        assert h.end(pid, epoch, state == "CompleteCommit", tv=V2) == E.NONE
        epoch += 1
    assert h.state() == state
    markers, writes = len(h.markers), len(h.all_records())
    result = h.end_result(pid, epoch - 1 if retry else epoch, commit, tv=V2)
    if expected == "bump":   # an abort with no partition added: PrepareAbort, CompleteAbort, no marker
        assert result == {"error_code": E.NONE, "producer_id": pid, "producer_epoch": epoch + 1}
        assert h.state() == "CompleteAbort" and len(h.markers) == markers
        assert len(h.all_records()) == writes + 2
    else:
        assert result["error_code"] == expected and len(h.all_records()) == writes and h.state() == state


def test_v1_keeps_the_epoch_and_refuses_an_empty_abort():
    h = TxnHarness(transaction_version=V2)
    pid, epoch = h.ongoing()
    assert h.end_result(pid, epoch, True) == {"error_code": E.NONE, "producer_id": pid, "producer_epoch": epoch}
    assert h.md().producer_epoch == epoch and h.markers[-1].transaction_version == 0
    assert h.end(pid, epoch, False) == E.INVALID_TXN_STATE


def test_an_exhausted_epoch_moves_to_a_new_producer_id_at_completion():
    h = TxnHarness(transaction_version=V2)
    pid, _ = h.init_ok()
    h.md().producer_epoch = MAX_EPOCH - 1
    assert h.add(pid, MAX_EPOCH - 1, tv=V2) == E.NONE
    result = h.end_result(pid, MAX_EPOCH - 1, True, tv=V2)
    new_pid = result["producer_id"]
    assert new_pid != pid and result["producer_epoch"] == 0
    md = h.md()
    assert (md.producer_id, md.producer_epoch, md.previous_producer_id, md.state.value) == \
        (new_pid, 0, pid, "CompleteCommit")
    assert (h.markers[-1].producer_id, h.markers[-1].producer_epoch) == (pid, MAX_EPOCH)   # the old id's last
    # a retry with the old id and its last epoch is recognised
    assert h.end_result(pid, MAX_EPOCH - 1, True, tv=V2) == {"error_code": E.NONE, "producer_id": new_pid,
                                                             "producer_epoch": 0}
    assert h.add(new_pid, 0, tv=V2) == E.NONE


def test_added_partitions_start_a_v2_transaction_from_any_settled_state():
    h = TxnHarness(transaction_version=V2)
    pid, epoch = h.init_ok()
    assert h.add(pid, epoch, ("a", 0), tv=V2) == E.NONE
    assert (h.state(), h.md().client_transaction_version) == ("Ongoing", V2)
    assert last_value(h).client_transaction_version == V2


def test_a_timeout_at_transaction_version_2_fences_then_bumps_again():
    h = TxnHarness(transaction_version=V2)
    pid, epoch = v2_ongoing(h)
    h.advance(60000 + 10001)   # past the timeout, and the periodic check ran
    assert h.state() == "CompleteAbort"
    # the fence (+1) and the abort, a V2 EndTxn of the coordinator's (+1)
    assert h.md().producer_epoch == epoch + 2 and h.markers[-1].producer_epoch == epoch + 2
    assert h.end(pid, epoch, True, tv=V2) == E.PRODUCER_FENCED


def test_a_timeout_at_transaction_version_0_bumps_once():
    h = TxnHarness(transaction_version=0)
    pid, epoch = h.ongoing()
    h.advance(60000 + 10001)
    assert (h.state(), h.md().producer_epoch) == ("CompleteAbort", epoch + 1)


def test_init_during_a_v2_transaction_aborts_it_and_the_retry_bumps_once_more():
    h = TxnHarness(transaction_version=V2)
    pid, epoch = v2_ongoing(h)
    assert h.init()["error_code"] == E.CONCURRENT_TRANSACTIONS
    assert (h.state(), h.md().producer_epoch) == ("CompleteAbort", epoch + 2)
    assert h.init_ok() == (pid, epoch + 3)


def test_replay_restores_the_client_version_and_next_producer_id():
    h = TxnHarness(transaction_version=V2)
    pid, epoch = v2_ongoing(h)
    h.c.hold("t")
    h.end(pid, epoch, True, tv=V2)
    again = TxnHarness(transaction_version=V2)
    again.c.load(h.all_records(), h.now)   # PrepareCommit found: its markers are written, it completes
    md = again.md()
    assert (md.state.value, md.producer_epoch, md.client_transaction_version) == ("CompleteCommit", epoch + 1, V2)
    assert again.markers[-1].producer_epoch == epoch + 1
