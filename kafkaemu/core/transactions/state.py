"""The transaction states, with their valid predecessors as data (as Kafka's TransactionState).

Each state's ``id`` is the byte Kafka writes as ``TransactionStatus`` in ``__transaction_state``;
its ``value`` is the name DescribeTransactions and ListTransactions answer with.
"""
from __future__ import annotations

from enum import Enum


class IllegalStateTransition(Exception):
    pass


class TransactionState(Enum):
    """State of a transactional id, and how each state answers each request.

    EMPTY — a producer id and epoch are assigned, no transaction is open.
        InitProducerId: the epoch is bumped (=> EMPTY). AddPartitionsToTxn / AddOffsetsToTxn:
        accepted (=> ONGOING). EndTxn: INVALID_TXN_STATE. Verification (KIP-890): every partition
        TRANSACTION_ABORTABLE (not in the transaction). May expire after transactional.id.expiration.ms.
    ONGOING — partitions were added; records and offsets may be written.
        InitProducerId: the open transaction is aborted with the epoch bumped (=> PREPARE_EPOCH_FENCE
        => PREPARE_ABORT) and CONCURRENT_TRANSACTIONS is answered, so the client retries.
        AddPartitionsToTxn: accepted (already added partitions answer at once). EndTxn: commit
        => PREPARE_COMMIT, abort => PREPARE_ABORT. Aborted by the coordinator (epoch bumped) once
        open longer than its transaction timeout.
    PREPARE_COMMIT / PREPARE_ABORT — the outcome is decided and written; markers are being written
        to every partition of the transaction. InitProducerId, AddPartitionsToTxn:
        CONCURRENT_TRANSACTIONS. EndTxn with the same outcome: CONCURRENT_TRANSACTIONS (a retry),
        the other outcome: INVALID_TXN_STATE. Verification: CONCURRENT_TRANSACTIONS.
        Found on load (a restart mid-commit): the markers are written and the transaction completes.
    COMPLETE_COMMIT / COMPLETE_ABORT — every marker is written.
        InitProducerId: the epoch is bumped (=> EMPTY). AddPartitionsToTxn: a new transaction
        (=> ONGOING). EndTxn with the same outcome: NONE (a retry), the other: INVALID_TXN_STATE.
        May expire after transactional.id.expiration.ms.
    PREPARE_EPOCH_FENCE — transient: the epoch is being bumped to fence the producer before the
        abort; never written to the log and never completed (PREPARE_ABORT follows at once).
    DEAD — the transactional id expired and its tombstone is being written; it answers like an
        unknown transactional id (INVALID_PRODUCER_ID_MAPPING, TRANSACTIONAL_ID_NOT_FOUND).
    """

    EMPTY = "Empty"
    ONGOING = "Ongoing"
    PREPARE_COMMIT = "PrepareCommit"
    PREPARE_ABORT = "PrepareAbort"
    COMPLETE_COMMIT = "CompleteCommit"
    COMPLETE_ABORT = "CompleteAbort"
    DEAD = "Dead"
    PREPARE_EPOCH_FENCE = "PrepareEpochFence"

    @property
    def id(self) -> int:
        return _IDS[self]

    @classmethod
    def from_id(cls, state_id: int) -> "TransactionState":
        try:
            return _BY_ID[state_id]
        except KeyError:
            raise ValueError(f"unknown transaction state id {state_id}") from None

    @classmethod
    def from_name(cls, name: str) -> "TransactionState | None":
        return _BY_NAME.get(name)

    @property
    def valid_previous_states(self) -> frozenset["TransactionState"]:
        return _VALID_PREVIOUS[self]

    def can_follow(self, previous: "TransactionState") -> bool:
        return previous in _VALID_PREVIOUS[self]

    @property
    def expiration_allowed(self) -> bool:
        """Whether a transactional id in this state may expire (no transaction in flight)."""
        return self in (TransactionState.EMPTY, TransactionState.COMPLETE_COMMIT, TransactionState.COMPLETE_ABORT)

    @property
    def has_pending_transaction(self) -> bool:
        return self in (TransactionState.ONGOING, TransactionState.PREPARE_COMMIT, TransactionState.PREPARE_ABORT)

    @property
    def lower_name(self) -> str:
        return self.value.lower()


_S = TransactionState
_IDS = {_S.EMPTY: 0, _S.ONGOING: 1, _S.PREPARE_COMMIT: 2, _S.PREPARE_ABORT: 3, _S.COMPLETE_COMMIT: 4,
        _S.COMPLETE_ABORT: 5, _S.DEAD: 6, _S.PREPARE_EPOCH_FENCE: 7}
_BY_ID = {i: s for s, i in _IDS.items()}
_BY_NAME = {s.value: s for s in TransactionState}
_VALID_PREVIOUS: dict[TransactionState, frozenset[TransactionState]] = {
    _S.EMPTY: frozenset({_S.EMPTY, _S.COMPLETE_COMMIT, _S.COMPLETE_ABORT}),
    _S.ONGOING: frozenset({_S.ONGOING, _S.EMPTY, _S.COMPLETE_COMMIT, _S.COMPLETE_ABORT}),
    _S.PREPARE_COMMIT: frozenset({_S.ONGOING}),
    # V2 also aborts from Empty/Complete* (an abort with no partition added)
    _S.PREPARE_ABORT: frozenset({_S.ONGOING, _S.PREPARE_EPOCH_FENCE, _S.EMPTY, _S.COMPLETE_COMMIT, _S.COMPLETE_ABORT}),
    _S.COMPLETE_COMMIT: frozenset({_S.PREPARE_COMMIT}),
    _S.COMPLETE_ABORT: frozenset({_S.PREPARE_ABORT}),
    _S.DEAD: frozenset({_S.EMPTY, _S.COMPLETE_ABORT, _S.COMPLETE_COMMIT}),
    _S.PREPARE_EPOCH_FENCE: frozenset({_S.ONGOING}),
}


def check_transition(current: TransactionState, target: TransactionState) -> None:
    if not target.can_follow(current):
        raise IllegalStateTransition(f"cannot go from {current.value} to {target.value}")
