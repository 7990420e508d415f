"""AddOffsetsToTxn (key 25), v0-v4.

Adds the group's __consumer_offsets partition to the transaction, so TxnOffsetCommit may write
there and the transaction's marker completes the offsets. Errors as AddPartitionsToTxn:
NOT_COORDINATOR, INVALID_PRODUCER_ID_MAPPING, PRODUCER_FENCED (INVALID_PRODUCER_EPOCH before v2),
CONCURRENT_TRANSACTIONS, INVALID_REQUEST for an empty transactional id. Not implemented:
authorization.
"""
from ..core.transactions.requests import AddPartitions
from ..protocol.errors import ErrorCode
from ..storage.log_store import OFFSETS_TOPIC
from ..protocol.api_keys import ApiKey
from .authorization import GROUP, READ, TRANSACTIONAL_ID, WRITE, authorize
from .registry import registry
from .txn_common import fenced_for, is_txn_coordinator


@registry.register(ApiKey.ADD_OFFSETS_TO_TXN, 0, 4)
def add_offsets_to_txn(ctx, req):
    tid = req.transactional_id
    if not authorize(ctx, WRITE, TRANSACTIONAL_ID, tid):
        return {"throttle_time_ms": 0, "error_code": ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED}
    if not authorize(ctx, READ, GROUP, req.group_id):
        return {"throttle_time_ms": 0, "error_code": ErrorCode.GROUP_AUTHORIZATION_FAILED}
    if tid and not is_txn_coordinator(ctx, tid):
        return {"throttle_time_ms": 0, "error_code": ErrorCode.NOT_COORDINATOR}
    partition = (OFFSETS_TOPIC, ctx.placement.group_partition(req.group_id))
    code = ctx.txns.add_partitions(ctx.now_ms, AddPartitions(tid, req.producer_id, req.producer_epoch,
                                                                          [partition]))
    return {"throttle_time_ms": 0, "error_code": fenced_for(ctx.api_version, 2, code)}
