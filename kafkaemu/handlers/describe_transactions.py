"""DescribeTransactions (key 65), v0.

Each transactional id's state, timeout, start time, producer id and epoch, and partitions, as the
coordinator holds them: an empty id INVALID_REQUEST, one this node does not coordinate
NOT_COORDINATOR, an unknown (or expired) one TRANSACTIONAL_ID_NOT_FOUND. Not implemented:
authorization.
"""
from ..protocol.errors import ErrorCode
from ..protocol.api_keys import ApiKey
from .registry import registry
from .txn_common import is_txn_coordinator


@registry.register(ApiKey.DESCRIBE_TRANSACTIONS, 0, 0)
def describe_transactions(ctx, req):
    coordinator = ctx.txns
    states = []
    for tid in req.transactional_ids:
        if tid and not is_txn_coordinator(ctx, tid):
            states.append(dict(coordinator.describe(ctx.now_ms, ""), transactional_id=tid,
                               error_code=ErrorCode.NOT_COORDINATOR))
        else:
            states.append(coordinator.describe(ctx.now_ms, tid))
    return {"throttle_time_ms": 0, "transaction_states": states}
