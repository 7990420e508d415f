"""InitProducerId (key 22), v0-v5.

Without a transactional id (idempotent producers): always a fresh producer id with epoch 0,
as Kafka's TransactionCoordinator does (the v3+ producer_id/epoch of a KIP-360 reset are
accepted and a new id is issued). With a transactional id: a stable producer id per
transactional id whose epoch is bumped on each call (a new id when the epoch would overflow);
an empty transactional id is INVALID_REQUEST; transaction_timeout_ms outside
(0, transaction.max.timeout.ms = 900000] is INVALID_TRANSACTION_TIMEOUT.

Not implemented: transactions themselves (AddPartitionsToTxn, EndTxn, markers) — a
transactional producer gets its id here and then finds those APIs missing; producer-epoch
fencing checks of the v3+ fields against the stored epoch (PRODUCER_FENCED).
"""
from ..protocol.errors import ErrorCode
from .registry import handler

TRANSACTION_MAX_TIMEOUT_MS = 900000


@handler(22, 0, 5)
def init_producer_id(ctx, req):
    ids = ctx.broker.store.producer_ids
    txn = req.transactional_id
    if txn is None:
        return {"throttle_time_ms": 0, "error_code": ErrorCode.NONE, "producer_id": ids.new_id(), "producer_epoch": 0}
    if txn == "":
        return _error(ErrorCode.INVALID_REQUEST)
    if not 0 < req.transaction_timeout_ms <= TRANSACTION_MAX_TIMEOUT_MS:
        return _error(ErrorCode.INVALID_TRANSACTION_TIMEOUT)
    pid, epoch = ids.for_transactional_id(txn)
    return {"throttle_time_ms": 0, "error_code": ErrorCode.NONE, "producer_id": pid, "producer_epoch": epoch}


def _error(code):
    return {"throttle_time_ms": 0, "error_code": code, "producer_id": -1, "producer_epoch": -1}
