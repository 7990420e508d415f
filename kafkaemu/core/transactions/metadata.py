"""One transactional id's metadata and its transitions (Apache Kafka's TransactionMetadata).

A change is made in two steps, as in Kafka: ``prepare_*`` checks the transition against the state
table, sets ``pending_state`` and returns the target as a frozen ``TxnTransit``; once its record is
written to ``__transaction_state``, ``complete_transition`` applies it (checking it once more).
While a transition is pending (the markers of a commit being written, say), requests that would
start another answer CONCURRENT_TRANSACTIONS.

Both transaction versions are modelled (Kafka's ``clientTransactionVersion``, the version the
client's last transition used): under V1 the epoch is bumped by InitProducerId and by fencing;
under V2 (KIP-890 part 2) every EndTxn bumps it too, the Prepare* record carrying the bumped
epoch (and, when the epoch is exhausted, the next producer id, which the Complete* record
rotates to at epoch 0).
"""
from __future__ import annotations

from dataclasses import dataclass

from ...protocol.errors import ErrorCode
from .state import IllegalStateTransition, TransactionState

S = TransactionState
E = ErrorCode
NO_PRODUCER_ID = -1
NO_PRODUCER_EPOCH = -1
MAX_EPOCH = 32767            # Short.MaxValue

TopicPartition = tuple[str, int]
TV_1 = 1                     # flexible __transaction_state records
TV_2 = 2                     # an epoch bump at every EndTxn


def supports_epoch_bump(transaction_version: int) -> bool:
    return transaction_version >= TV_2


def is_epoch_exhausted(epoch: int) -> bool:
    """Kafka never hands out Short.MaxValue, so the coordinator can always fence once more."""
    return epoch >= MAX_EPOCH - 1


class TransactionError(Exception):
    """A request-level error: the Kafka error code to answer with."""

    def __init__(self, code: ErrorCode, message: str | None = None):
        super().__init__(message or code.name)
        self.code = code


@dataclass(frozen=True)
class TxnTransit:
    """The target of one transition, as written to __transaction_state (Kafka's TxnTransitMetadata)."""
    producer_id: int
    prev_producer_id: int
    next_producer_id: int
    producer_epoch: int
    last_producer_epoch: int
    txn_timeout_ms: int
    state: TransactionState
    partitions: frozenset[TopicPartition]
    txn_start_timestamp: int
    txn_last_update_timestamp: int
    client_transaction_version: int = 0


class TransactionMetadata:
    def __init__(self, transactional_id: str, producer_id: int, producer_epoch: int, txn_timeout_ms: int,
                 state: TransactionState, txn_last_update_timestamp: int, *,
                 previous_producer_id: int = NO_PRODUCER_ID, next_producer_id: int = NO_PRODUCER_ID,
                 last_producer_epoch: int = NO_PRODUCER_EPOCH, partitions=(), txn_start_timestamp: int = -1,
                 client_transaction_version: int = 0) -> None:
        self.transactional_id = transactional_id
        self.producer_id = producer_id
        self.previous_producer_id = previous_producer_id
        self.next_producer_id = next_producer_id
        self.producer_epoch = producer_epoch
        self.last_producer_epoch = last_producer_epoch
        self.txn_timeout_ms = txn_timeout_ms
        self.state = state
        self.partitions: set[TopicPartition] = set(partitions)
        self.txn_start_timestamp = txn_start_timestamp
        self.txn_last_update_timestamp = txn_last_update_timestamp
        # the transaction version of the client's last transition (Kafka's clientTransactionVersion)
        self.client_transaction_version = client_transaction_version
        # The state a prepared transition is going to; None when no transition is under way.
        self.pending_state: TransactionState | None = None
        # A fence whose record failed to be written keeps its bumped epoch for the next attempt.
        self.has_failed_epoch_fence = False

    def __repr__(self) -> str:
        return (f"TransactionMetadata({self.transactional_id!r}, producer_id={self.producer_id}, "
                f"epoch={self.producer_epoch}, state={self.state.value}, pending={self.pending_state}, "
                f"partitions={sorted(self.partitions)}, tv={self.client_transaction_version})")

    @property
    def pending_transition_in_progress(self) -> bool:
        return self.pending_state is not None

    @property
    def is_producer_epoch_exhausted(self) -> bool:
        return is_epoch_exhausted(self.producer_epoch)

    def remove_partition(self, tp: TopicPartition) -> None:
        """A marker of the completing transaction is written (or its partition is gone)."""
        if self.state not in (S.PREPARE_COMMIT, S.PREPARE_ABORT):
            raise IllegalStateTransition(f"removing a partition whose marker was written in state {self.state.value}")
        self.partitions.discard(tp)

    # ------------------------------------------------------------------ prepare
    def prepare_fence_producer_epoch(self) -> TxnTransit:
        if self.producer_epoch == MAX_EPOCH:
            raise IllegalStateTransition("cannot fence a producer whose epoch is already Short.MaxValue")
        bumped = self.producer_epoch if self.has_failed_epoch_fence else self.producer_epoch + 1
        return self._prepare(S.PREPARE_EPOCH_FENCE, self.producer_id, bumped, NO_PRODUCER_EPOCH, self.txn_timeout_ms,
                             frozenset(self.partitions), self.txn_start_timestamp, self.txn_last_update_timestamp)

    def prepare_increment_producer_epoch(self, new_timeout_ms: int, expected_epoch: int | None,
                                         now_ms: int) -> TxnTransit:
        """InitProducerId on Empty/Complete*; TransactionError(PRODUCER_FENCED) for a stale expected epoch."""
        if self.is_producer_epoch_exhausted:
            raise IllegalStateTransition(f"no more epochs for producer id {self.producer_id}")
        bumped = self.producer_epoch + 1
        if expected_epoch is None:
            next_epoch, last_epoch = bumped, NO_PRODUCER_EPOCH
        elif self.producer_epoch == NO_PRODUCER_EPOCH or expected_epoch == self.producer_epoch:
            # a producer carrying on after an error (KIP-360) with no other instance since
            next_epoch, last_epoch = bumped, self.producer_epoch
        elif expected_epoch == self.last_producer_epoch:
            # a retry of a bump that succeeded: the current epoch again
            next_epoch, last_epoch = self.producer_epoch, self.last_producer_epoch
        else:
            raise TransactionError(E.PRODUCER_FENCED)
        return self._prepare(S.EMPTY, self.producer_id, next_epoch, last_epoch, new_timeout_ms, frozenset(), -1, now_ms)

    def prepare_producer_id_rotation(self, new_producer_id: int, new_timeout_ms: int, now_ms: int,
                                     record_last_epoch: bool) -> TxnTransit:
        if self.state.has_pending_transaction:
            raise IllegalStateTransition("cannot rotate producer ids while a transaction is pending")
        return self._prepare(S.EMPTY, new_producer_id, 0,
                             self.producer_epoch if record_last_epoch else NO_PRODUCER_EPOCH,
                             new_timeout_ms, frozenset(), -1, now_ms)

    def prepare_add_partitions(self, added, now_ms: int, client_transaction_version: int = 0) -> TxnTransit:
        start = now_ms if self.state in (S.EMPTY, S.COMPLETE_ABORT, S.COMPLETE_COMMIT) else self.txn_start_timestamp
        return self._prepare(S.ONGOING, self.producer_id, self.producer_epoch, self.last_producer_epoch,
                             self.txn_timeout_ms, frozenset(self.partitions | set(added)), start, now_ms,
                             tv=client_transaction_version)

    def prepare_abort_or_commit(self, new_state: TransactionState, now_ms: int, client_transaction_version: int = 0,
                                next_producer_id: int = NO_PRODUCER_ID, no_partition_added: bool = False) -> TxnTransit:
        """Under V2 the record carries the bumped epoch (the previous one as last epoch); an abort
        with no partition added (V2 allows it) starts and ends at ``now_ms``."""
        if supports_epoch_bump(client_transaction_version):
            epoch, last_epoch = self.producer_epoch + 1, self.producer_epoch
        else:
            epoch, last_epoch = self.producer_epoch, self.last_producer_epoch
        start = now_ms if no_partition_added else self.txn_start_timestamp
        return self._prepare(new_state, self.producer_id, epoch, last_epoch, self.txn_timeout_ms,
                             frozenset(self.partitions), start, now_ms, next_producer_id=next_producer_id,
                             tv=client_transaction_version)

    def prepare_complete(self, now_ms: int) -> TxnTransit:
        """Under V2 with an exhausted epoch, the completion moves to the next producer id at epoch 0
        (the last epoch stays the one the client saw)."""
        new_state = S.COMPLETE_COMMIT if self.state is S.PREPARE_COMMIT else S.COMPLETE_ABORT
        self.has_failed_epoch_fence = False   # the abort's record was written
        if supports_epoch_bump(self.client_transaction_version) and self.next_producer_id != NO_PRODUCER_ID:
            producer_id, epoch = self.next_producer_id, 0
        else:
            producer_id, epoch = self.producer_id, self.producer_epoch
        v2 = supports_epoch_bump(self.client_transaction_version)
        return self._prepare(new_state, producer_id, epoch, self.last_producer_epoch if v2 else self.producer_epoch,
                             self.txn_timeout_ms,
                             frozenset(), self.txn_start_timestamp, now_ms)

    def prepare_dead(self) -> TxnTransit:
        return self._prepare(S.DEAD, self.producer_id, self.producer_epoch, self.last_producer_epoch,
                             self.txn_timeout_ms, frozenset(), self.txn_start_timestamp,
                             self.txn_last_update_timestamp)

    def _prepare(self, state: TransactionState, producer_id: int, epoch: int, last_epoch: int, timeout_ms: int,
                 partitions: frozenset, start_ms: int, now_ms: int, *, next_producer_id: int = NO_PRODUCER_ID,
                 tv: int | None = None) -> TxnTransit:
        if self.pending_state is not None:
            raise IllegalStateTransition(f"{self.transactional_id}: preparing {state.value} while "
                                         f"{self.pending_state.value} is pending")
        if producer_id < 0:
            raise ValueError(f"illegal producer id {producer_id}")
        if state is not S.DEAD and epoch < 0:
            raise ValueError(f"illegal producer epoch {epoch}")
        if not state.can_follow(self.state):
            raise IllegalStateTransition(f"{self.transactional_id}: cannot go from {self.state.value} to "
                                         f"{state.value}")
        self.pending_state = state
        return TxnTransit(producer_id, self.producer_id, next_producer_id, epoch, last_epoch, timeout_ms, state,
                          partitions, start_ms, now_ms,
                          self.client_transaction_version if tv is None else tv)

    # ------------------------------------------------------------------ complete
    def complete_transition(self, t: TxnTransit) -> None:
        """Apply a prepared transition once its record is written (Kafka's completeTransitionTo)."""
        to = self.pending_state
        if to is None or to is not t.state:
            self._fail(t)
        if to is S.EMPTY:                       # InitProducerId
            if (self.producer_epoch != t.producer_epoch and not self._valid_epoch_bump(t)) or t.partitions \
                    or t.txn_start_timestamp != -1:
                self._fail(t)
            self.txn_timeout_ms = t.txn_timeout_ms
            self.producer_epoch = t.producer_epoch
            self.last_producer_epoch = t.last_producer_epoch
            self.producer_id = t.producer_id
            self.previous_producer_id = t.prev_producer_id
        elif to is S.ONGOING:                   # AddPartitionsToTxn / AddOffsetsToTxn / a V2 produce
            if not self._valid_producer_epoch(t) or not self.partitions <= t.partitions \
                    or self.txn_timeout_ms != t.txn_timeout_ms:
                self._fail(t)
            self.txn_start_timestamp = t.txn_start_timestamp
            self.partitions |= t.partitions
        elif to in (S.PREPARE_COMMIT, S.PREPARE_ABORT):   # EndTxn
            # V2 may abort from Empty/Complete* (no partition added): a new start time
            empty_abort = to is S.PREPARE_ABORT and supports_epoch_bump(t.client_transaction_version) \
                and self.state in (S.EMPTY, S.COMPLETE_COMMIT, S.COMPLETE_ABORT)
            if not self._valid_producer_epoch(t) or self.partitions != t.partitions \
                    or self.txn_timeout_ms != t.txn_timeout_ms \
                    or (self.txn_start_timestamp != t.txn_start_timestamp and not empty_abort):
                self._fail(t)
            self.txn_start_timestamp = t.txn_start_timestamp
        elif to in (S.COMPLETE_COMMIT, S.COMPLETE_ABORT):  # every marker written
            if not self._valid_producer_epoch(t) or self.txn_timeout_ms != t.txn_timeout_ms \
                    or t.txn_start_timestamp == -1:
                self._fail(t)
            self.txn_start_timestamp = t.txn_start_timestamp
            self.partitions.clear()
        else:   # PREPARE_EPOCH_FENCE and DEAD are never completed
            self._fail(t)
        if to is not S.EMPTY:
            if t.producer_id != self.producer_id:   # a V2 completion rotating an exhausted producer id
                self.producer_id, self.previous_producer_id = t.producer_id, t.prev_producer_id
            self.producer_epoch, self.last_producer_epoch = t.producer_epoch, t.last_producer_epoch
        self.next_producer_id = t.next_producer_id
        self.client_transaction_version = t.client_transaction_version
        self.txn_last_update_timestamp = t.txn_last_update_timestamp
        self.pending_state = None
        self.state = to

    def _valid_producer_epoch(self, t: TxnTransit) -> bool:
        """Kafka's validProducerEpoch: under V2 a Prepare* carries the bumped epoch (its last epoch
        is the current one) and a Complete* after an exhausted epoch the next producer id at 0."""
        v2 = supports_epoch_bump(t.client_transaction_version)
        if v2 and t.state in (S.COMPLETE_COMMIT, S.COMPLETE_ABORT) and t.producer_epoch == 0 \
                and t.producer_id != self.producer_id:
            return t.last_producer_epoch == self.last_producer_epoch and t.prev_producer_id == self.producer_id
        if v2 and t.state in (S.PREPARE_COMMIT, S.PREPARE_ABORT):
            return t.last_producer_epoch == self.producer_epoch and t.producer_id == self.producer_id
        return t.producer_epoch == self.producer_epoch and t.producer_id == self.producer_id

    def _valid_epoch_bump(self, t: TxnTransit) -> bool:
        return t.producer_epoch == self.producer_epoch + 1 or (t.producer_epoch == 0 and t.producer_id != self.producer_id)

    def _fail(self, t: TxnTransit):
        raise IllegalStateTransition(f"{self.transactional_id}: unexpected transition from {self!r} to {t}")
