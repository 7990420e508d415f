"""EndTxn (key 26), v0-v5.

Commits or aborts the producer's transaction: the coordinator writes PrepareCommit/PrepareAbort
to __transaction_state, answers, writes the commit/abort markers to every partition of the
transaction (with __consumer_offsets: its transactional offset commits apply or vanish) and then
CompleteCommit/CompleteAbort. A retry after completion answers NONE; the other outcome, or no
transaction, INVALID_TXN_STATE; while completing, CONCURRENT_TRANSACTIONS; NOT_COORDINATOR,
INVALID_PRODUCER_ID_MAPPING, PRODUCER_FENCED (INVALID_PRODUCER_EPOCH before v2) as Kafka.
v5 is transactions V2 (KIP-890 part 2, sent by clients once the finalized ``transaction.version``
is 2): every EndTxn bumps the epoch and the answer carries the producer id and epoch to go on
with; a retry is told by an epoch one below the current one; an abort with no partition added is
accepted (see core/transactions/end_txn.py for Kafka's table).
"""
from ..core.transactions.requests import EndTxn
from ..protocol.errors import ErrorCode
from ..protocol.api_keys import ApiKey
from .authorization import TRANSACTIONAL_ID, WRITE, authorize
from .registry import registry
from .txn_common import fenced_for, is_txn_coordinator


@registry.register(ApiKey.END_TXN, 0, 5)
def end_txn(ctx, req):
    tid = req.transactional_id
    if not authorize(ctx, WRITE, TRANSACTIONAL_ID, tid):
        return {"throttle_time_ms": 0, "error_code": ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED}
    if tid and not is_txn_coordinator(ctx, tid):
        return {"throttle_time_ms": 0, "error_code": ErrorCode.NOT_COORDINATOR}
    # KafkaApis: v5+ is a transactions V2 client, older ones V1
    transaction_version = 2 if ctx.api_version >= 5 else 0
    result = ctx.txns.end_transaction(ctx.now_ms, EndTxn(tid, req.producer_id, req.producer_epoch, req.committed,
                                                         transaction_version))
    return {"throttle_time_ms": 0, "error_code": fenced_for(ctx.api_version, 2, result["error_code"]),
            "producer_id": result["producer_id"], "producer_epoch": result["producer_epoch"]}
