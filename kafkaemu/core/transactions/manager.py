"""The transactional ids' metadata and __transaction_state (Apache Kafka's TransactionStateManager):
the cache, placement, writing a transition's record and completing it, finding transactions past
their timeout and ids past their expiration, listing, and replaying the log.

Writing is synchronous: ``write`` appends a prepared transition's record to the transactional id's
partition of __transaction_state and only then completes the transition, so no request ever sees a
transition written but not applied (Kafka completes it in the append's callback). An append that
fails leaves the metadata as it was (the pending state reset, as Kafka's callback does) and
``write`` returns Kafka's error for it (runtime.append_error_code); the coordinator answers with it.
"""
from __future__ import annotations

from typing import Iterable

from ...logging import get_logger
from ...protocol.errors import ErrorCode
from ..placement import partition_for
from ..record_format import UnknownRecordType, replay_or_skip, split
from ..runtime import append_error_code
from . import records
from .context import TransactionContext
from .metadata import TransactionMetadata, TxnTransit
from .state import TransactionState

log = get_logger("kafkaemu.transactions")
S = TransactionState
E = ErrorCode


class TransactionStateManager:
    def __init__(self, ctx: TransactionContext) -> None:
        self.ctx = ctx
        self.txns: dict[str, TransactionMetadata] = {}

    def partition_for(self, transactional_id: str) -> int:
        return partition_for(transactional_id, self.ctx.settings.state_log_num_partitions)

    def get(self, transactional_id: str) -> TransactionMetadata | None:
        return self.txns.get(transactional_id)

    def put_if_absent(self, md: TransactionMetadata) -> TransactionMetadata:
        return self.txns.setdefault(md.transactional_id, md)

    def validate_timeout(self, timeout_ms: int) -> bool:
        return 0 < timeout_ms <= self.ctx.settings.max_timeout_ms

    # ------------------------------------------------------------------ writing
    def write(self, md: TransactionMetadata, transit: TxnTransit, keep_pending: bool = False) -> ErrorCode:
        """Write the transition's record to __transaction_state, then complete it. If the append
        fails, the error (the pending state is reset unless ``keep_pending``: a completion that is
        retried, as Kafka's marker manager retries it)."""
        try:
            key = records.encode_key(md.transactional_id)
            value = records.encode_value(transit, self.ctx.transaction_version())
            self.ctx.sink(self.partition_for(md.transactional_id), [(key, value)], self.ctx.now_ms)
        except Exception as exc:
            error = append_error_code(exc, transactional=True)
            log.warning("transaction_state_write_failed", transactional_id=md.transactional_id[:256],
                        to_state=transit.state.value, error=error.name, cause=str(exc)[:200])
            if not keep_pending:
                md.pending_state = None
            return error
        old = md.state
        md.complete_transition(transit)
        self.ctx.record_transition(md.transactional_id, old, md.state, md.producer_id, md.producer_epoch)
        log.debug("transaction_transition", transactional_id=md.transactional_id, from_state=old.value,
                  to_state=md.state.value, producer_id=md.producer_id, producer_epoch=md.producer_epoch)
        return E.NONE

    # ------------------------------------------------------------------ time
    def timed_out(self, now_ms: int) -> list[TransactionMetadata]:
        """Transactions open longer than their timeout with no transition under way (Kafka's
        timedOutTransactions: start + timeout < now)."""
        return [md for md in self.txns.values() if not md.pending_transition_in_progress
                and md.state is S.ONGOING and md.txn_start_timestamp + md.txn_timeout_ms < now_ms]

    def remove_expired_transactional_ids(self, now_ms: int) -> list[str]:
        """Tombstone every transactional id idle longer than transactional.id.expiration.ms in a state
        that allows it (no transaction in flight); returns the ids removed."""
        expiration = self.ctx.settings.transactional_id_expiration_ms
        expired: dict[int, list[TransactionMetadata]] = {}
        for md in self.txns.values():
            if md.pending_state is None and md.state.expiration_allowed \
                    and md.txn_last_update_timestamp <= now_ms - expiration:
                md.prepare_dead()
                expired.setdefault(self.partition_for(md.transactional_id), []).append(md)
        removed = []
        for partition, mds in expired.items():
            try:
                self.ctx.sink(partition, [(records.encode_key(md.transactional_id), None) for md in mds], now_ms)
            except Exception as exc:
                log.warning("transactional_id_expiration_failed", partition=partition,
                            error=append_error_code(exc, transactional=True).name, cause=str(exc)[:200])
                for md in mds:
                    md.pending_state = None
                continue
            for md in mds:
                del self.txns[md.transactional_id]
                self.ctx.record_transition(md.transactional_id, md.state, S.DEAD, md.producer_id, md.producer_epoch)
                removed.append(md.transactional_id)
        if removed:
            log.info("transactional_ids_expired", count=len(removed))
        return removed

    # ------------------------------------------------------------------ admin
    def list_states(self, producer_ids: Iterable[int], state_names: Iterable[str], duration_ms: int,
                    now_ms: int) -> dict:
        """ListTransactions' answer: every transaction matching the filters (Dead ones never)."""
        pids = set(producer_ids)
        names = list(state_names)
        states = {S.from_name(n) for n in names} - {None}
        unknown = [n for n in names if S.from_name(n) is None]

        def include(md: TransactionMetadata) -> bool:
            if md.state is S.DEAD:
                return False
            if pids and md.producer_id not in pids:
                return False
            if names and md.state not in states:
                return False
            if duration_ms >= 0 and now_ms - md.txn_start_timestamp <= duration_ms:
                return False
            return True
        found = [{"transactional_id": md.transactional_id, "producer_id": md.producer_id,
                  "transaction_state": md.state.value} for md in self.txns.values() if include(md)]
        return {"error_code": int(E.NONE), "unknown_state_filters": unknown, "transaction_states": found}

    # ------------------------------------------------------------------ replay
    def replay(self, key: bytes, value: bytes | None) -> None:
        """Apply one __transaction_state record, as on loading its partition (the last one wins)."""
        version = split(key)[0]
        if version not in records.KEY_VERSIONS:
            raise UnknownRecordType(version)
        tid = records.decode_key(key).transactional_id
        if value is None:
            self.txns.pop(tid, None)
        else:
            self.txns[tid] = records.decode_value(tid, value)

    def load(self, entries: Iterable[tuple[bytes, bytes | None]]) -> int:
        """Replay records in log order; an unknown key version or an undecodable record is logged and
        skipped (Kafka skips unknown keys and fails the partition on a bad value, which kafkaemu does
        not emulate). Returns how many were skipped."""
        return sum(not replay_or_skip(self.replay, key, value, event="transaction_record_skipped", log=log)
                   for key, value in entries)
