"""EndTxn's decision: which transition a commit or abort makes, or which error it answers
(Apache Kafka's TransactionCoordinator.endTransactionWithTV1 and endTransaction).

Transactions V1: the request's epoch must be the current one (a fence from the coordinator
itself may carry a higher one); a retry of a completed EndTxn answers NONE.

Transactions V2 (KIP-890 part 2, EndTxn v5, or the coordinator's own aborts when the finalized
``transaction.version`` is 2): every EndTxn bumps the epoch, so a retry is recognised by the epoch
being one below the current one (or, after an exhausted epoch rotated the producer id, by the
previous id at Short.MaxValue - 1). Empty and Complete* states accept an abort of a transaction
that added no partition (Kafka's table; PF = PRODUCER_FENCED, ITS = INVALID_TXN_STATE, EB = a new
transition with the epoch bumped):

    state          | abort: retry  current | commit: retry  current
    Empty          |        PF     EB      |         PF     ITS
    CompleteAbort  |        NONE   EB      |         ITS    ITS
    CompleteCommit |        ITS    EB      |         NONE   ITS
"""
from __future__ import annotations

from typing import Callable

from ...protocol.errors import ErrorCode
from .metadata import (MAX_EPOCH, NO_PRODUCER_EPOCH, NO_PRODUCER_ID, TransactionError, TransactionMetadata, TxnTransit,
                       supports_epoch_bump)
from .state import IllegalStateTransition, TransactionState

S = TransactionState
E = ErrorCode


def prepare_end(md: TransactionMetadata, producer_id: int, epoch: int, commit: bool, from_client: bool,
                transaction_version: int, next_producer_id: Callable[[], int], now_ms: int) -> TxnTransit | None:
    """The Prepare* transition of an EndTxn, None for a retry of one already done (answered NONE),
    or TransactionError with the code to answer."""
    if supports_epoch_bump(transaction_version):
        return _prepare_v2(md, producer_id, epoch, commit, from_client, transaction_version, next_producer_id, now_ms)
    return _prepare_v1(md, producer_id, epoch, commit, from_client, now_ms)


def _prepare_v1(md, producer_id, epoch, commit, from_client, now_ms) -> TxnTransit | None:
    if md.producer_id != producer_id:
        raise TransactionError(E.INVALID_PRODUCER_ID_MAPPING)
    if (from_client and epoch != md.producer_epoch) or epoch < md.producer_epoch:
        raise TransactionError(E.PRODUCER_FENCED)   # clients may not bump the epoch themselves
    if md.pending_transition_in_progress and md.pending_state is not S.PREPARE_EPOCH_FENCE:
        raise TransactionError(E.CONCURRENT_TRANSACTIONS)
    state = md.state
    if state is S.ONGOING:
        next_state = S.PREPARE_COMMIT if commit else S.PREPARE_ABORT
        if next_state is S.PREPARE_ABORT and md.pending_state is S.PREPARE_EPOCH_FENCE:
            _carry_fence(md, epoch)
        return md.prepare_abort_or_commit(next_state, now_ms)
    if state in (S.COMPLETE_COMMIT, S.COMPLETE_ABORT):
        if commit == (state is S.COMPLETE_COMMIT):
            return None
        raise TransactionError(E.INVALID_TXN_STATE)
    return _prepared_or_empty(md, state, commit)


def _prepare_v2(md, producer_id, epoch, commit, from_client, tv, next_producer_id, now_ms) -> TxnTransit | None:
    fencing = md.pending_state is S.PREPARE_EPOCH_FENCE
    # a retry of an EndTxn that rotated an exhausted producer id: the new id is current, at epoch 0
    retry_on_overflow = not fencing and md.previous_producer_id == producer_id and epoch == MAX_EPOCH - 1 \
        and md.producer_epoch == 0
    retry_on_bump = not fencing and md.producer_epoch == epoch + 1
    state = md.state
    if fencing:
        valid_epoch = (not from_client or epoch == md.producer_epoch) and epoch >= md.producer_epoch
    elif state in (S.PREPARE_COMMIT, S.PREPARE_ABORT):
        valid_epoch = retry_on_bump
    elif state in (S.COMPLETE_COMMIT, S.COMPLETE_ABORT):
        valid_epoch = retry_on_bump or retry_on_overflow or epoch == md.producer_epoch
    else:
        valid_epoch = epoch == md.producer_epoch
    retry = retry_on_bump or retry_on_overflow
    if md.producer_id != producer_id and not retry_on_overflow:
        raise TransactionError(E.INVALID_PRODUCER_ID_MAPPING)
    if not valid_epoch:
        raise TransactionError(E.PRODUCER_FENCED)
    if md.pending_transition_in_progress and not fencing:
        raise TransactionError(E.CONCURRENT_TRANSACTIONS)

    def complete_with(next_state: TransactionState, no_partition_added: bool) -> TxnTransit:
        # an exhausted epoch: the completion moves to a new producer id
        next_id = next_producer_id() if not fencing and md.is_producer_epoch_exhausted else NO_PRODUCER_ID
        if next_state is S.PREPARE_ABORT and fencing:
            _carry_fence(md, epoch)
        return md.prepare_abort_or_commit(next_state, now_ms, tv, next_id, no_partition_added)

    if state is S.ONGOING:
        return complete_with(S.PREPARE_COMMIT if commit else S.PREPARE_ABORT, False)
    if state is S.COMPLETE_COMMIT:
        if commit:
            if retry:
                return None
            raise TransactionError(E.INVALID_TXN_STATE)
        if retry:
            raise TransactionError(E.INVALID_TXN_STATE)
        return complete_with(S.PREPARE_ABORT, True)
    if state is S.COMPLETE_ABORT:
        if not commit:
            return None if retry else complete_with(S.PREPARE_ABORT, True)
        raise TransactionError(E.INVALID_TXN_STATE)
    if state is S.EMPTY:
        if not commit:
            return complete_with(S.PREPARE_ABORT, True)
        raise TransactionError(E.INVALID_TXN_STATE)
    return _prepared_or_empty(md, state, commit)


def _prepared_or_empty(md: TransactionMetadata, state: TransactionState, commit: bool) -> None:
    if state in (S.PREPARE_COMMIT, S.PREPARE_ABORT):
        if commit == (state is S.PREPARE_COMMIT):
            raise TransactionError(E.CONCURRENT_TRANSACTIONS)
        raise TransactionError(E.INVALID_TXN_STATE)
    if state is S.EMPTY:
        raise TransactionError(E.INVALID_TXN_STATE)
    raise IllegalStateTransition(f"transactional id {md.transactional_id} found in state {state.value}")


def _carry_fence(md: TransactionMetadata, epoch: int) -> None:
    """The fence goes ahead as this abort: its pending state cleared, its bumped epoch kept."""
    md.pending_state = None
    md.producer_epoch = epoch
    md.last_producer_epoch = NO_PRODUCER_EPOCH
