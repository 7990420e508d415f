"""The transaction state table and the two-step transitions of TransactionMetadata (as Kafka's)."""
import pytest

from kafkaemu.core.transactions.metadata import MAX_EPOCH, TransactionError, TransactionMetadata
from kafkaemu.core.transactions.state import IllegalStateTransition, TransactionState as S, check_transition
from kafkaemu.protocol.errors import ErrorCode as E

ALL = list(S)
# Kafka's TransactionState.validPreviousStates, restated
VALID = {
    S.EMPTY: {S.EMPTY, S.COMPLETE_COMMIT, S.COMPLETE_ABORT},
    S.ONGOING: {S.ONGOING, S.EMPTY, S.COMPLETE_COMMIT, S.COMPLETE_ABORT},
    S.PREPARE_COMMIT: {S.ONGOING},
    S.PREPARE_ABORT: {S.ONGOING, S.PREPARE_EPOCH_FENCE, S.EMPTY, S.COMPLETE_COMMIT, S.COMPLETE_ABORT},   # V2 too
    S.COMPLETE_COMMIT: {S.PREPARE_COMMIT},
    S.COMPLETE_ABORT: {S.PREPARE_ABORT},
    S.DEAD: {S.EMPTY, S.COMPLETE_ABORT, S.COMPLETE_COMMIT},
    S.PREPARE_EPOCH_FENCE: {S.ONGOING},
}


@pytest.mark.parametrize("target", ALL, ids=lambda s: s.value)
@pytest.mark.parametrize("current", ALL, ids=lambda s: s.value)
def test_every_transition_is_checked_against_the_table(current, target):
    if current in VALID[target]:
        check_transition(current, target)
    else:
        with pytest.raises(IllegalStateTransition):
            check_transition(current, target)


def test_ids_and_names_are_kafkas():
    assert [(s.id, s.value) for s in sorted(ALL, key=lambda s: s.id)] == [
        (0, "Empty"), (1, "Ongoing"), (2, "PrepareCommit"), (3, "PrepareAbort"), (4, "CompleteCommit"),
        (5, "CompleteAbort"), (6, "Dead"), (7, "PrepareEpochFence")]
    assert all(S.from_id(s.id) is s and S.from_name(s.value) is s for s in ALL)
    assert S.from_name("ongoing") is None
    with pytest.raises(ValueError):
        S.from_id(8)


def test_only_settled_states_may_expire():
    assert {s for s in ALL if s.expiration_allowed} == {S.EMPTY, S.COMPLETE_COMMIT, S.COMPLETE_ABORT}


def md(state=S.EMPTY, epoch=0, partitions=(), start=-1) -> TransactionMetadata:
    return TransactionMetadata("t", 7, epoch, 60000, state, 0, partitions=partitions, txn_start_timestamp=start)


def test_a_prepared_transition_blocks_another_until_completed():
    m = md()
    t = m.prepare_add_partitions({("a", 0)}, 10)
    assert m.pending_state is S.ONGOING and m.state is S.EMPTY and not m.partitions
    with pytest.raises(IllegalStateTransition):
        m.prepare_add_partitions({("a", 1)}, 11)
    m.complete_transition(t)
    assert (m.state, m.pending_state, m.partitions, m.txn_start_timestamp) == (S.ONGOING, None, {("a", 0)}, 10)


def test_an_illegal_prepare_raises_and_leaves_no_pending_state():
    m = md()
    with pytest.raises(IllegalStateTransition):
        m.prepare_abort_or_commit(S.PREPARE_COMMIT, 10)
    assert m.pending_state is None


def test_completing_a_transition_other_than_the_pending_one_raises():
    m = md(S.ONGOING, partitions={("a", 0)}, start=5)
    commit = m.prepare_abort_or_commit(S.PREPARE_COMMIT, 10)
    other = md(S.ONGOING, partitions={("a", 0)}, start=5).prepare_abort_or_commit(S.PREPARE_ABORT, 10)
    with pytest.raises(IllegalStateTransition):
        m.complete_transition(other)
    m.complete_transition(commit)
    assert m.state is S.PREPARE_COMMIT


def test_epoch_increment_with_expected_epochs_as_kafka():
    m = md(epoch=3)
    m.last_producer_epoch = 2
    assert m.prepare_increment_producer_epoch(100, None, 1).producer_epoch == 4
    m.pending_state = None
    bumped = m.prepare_increment_producer_epoch(100, 3, 1)   # KIP-360: the current epoch carries on
    assert (bumped.producer_epoch, bumped.last_producer_epoch) == (4, 3)
    m.pending_state = None
    retry = m.prepare_increment_producer_epoch(100, 2, 1)    # a retry of a bump that worked: no bump
    assert (retry.producer_epoch, retry.last_producer_epoch) == (3, 2)
    m.pending_state = None
    with pytest.raises(TransactionError) as exc:
        m.prepare_increment_producer_epoch(100, 1, 1)
    assert exc.value.code == E.PRODUCER_FENCED and m.pending_state is None


def test_no_epoch_is_handed_out_once_exhausted_and_short_max_cannot_be_fenced():
    with pytest.raises(IllegalStateTransition):
        md(epoch=MAX_EPOCH - 1).prepare_increment_producer_epoch(100, None, 1)
    with pytest.raises(IllegalStateTransition):
        md(S.ONGOING, epoch=MAX_EPOCH, start=1).prepare_fence_producer_epoch()
    fence = md(S.ONGOING, epoch=MAX_EPOCH - 1, start=1).prepare_fence_producer_epoch()
    assert fence.producer_epoch == MAX_EPOCH and fence.state is S.PREPARE_EPOCH_FENCE


def test_a_fence_is_never_completed():
    m = md(S.ONGOING, start=1, partitions={("a", 0)})
    fence = m.prepare_fence_producer_epoch()
    with pytest.raises(IllegalStateTransition):
        m.complete_transition(fence)
