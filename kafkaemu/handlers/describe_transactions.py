"""DescribeTransactions (key 65), v0.

Each transactional id's state, timeout, start time, producer id and epoch, and partitions, as the
coordinator holds them: an empty id INVALID_REQUEST, one this node does not coordinate
NOT_COORDINATOR, an unknown (or expired) one TRANSACTIONAL_ID_NOT_FOUND. Not implemented:
authorization.
"""
from ..protocol.errors import ErrorCode
from ..protocol.api_keys import ApiKey
from .authorization import DESCRIBE, TOPIC, TRANSACTIONAL_ID, authorize, denied_names
from .registry import registry
from .txn_common import is_txn_coordinator


@registry.register(ApiKey.DESCRIBE_TRANSACTIONS, 0, 0)
def describe_transactions(ctx, req):
    coordinator = ctx.txns
    states = []
    for tid in req.transactional_ids:
        if not authorize(ctx, DESCRIBE, TRANSACTIONAL_ID, tid):
            states.append(dict(coordinator.describe(ctx.now_ms, ""), transactional_id=tid,
                               error_code=ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED))
        elif tid and not is_txn_coordinator(ctx, tid):
            states.append(dict(coordinator.describe(ctx.now_ms, ""), transactional_id=tid,
                               error_code=ErrorCode.NOT_COORDINATOR))
        else:
            state = coordinator.describe(ctx.now_ms, tid)
            topics = state.get("topics") or []
            hidden = denied_names(ctx, DESCRIBE, TOPIC, [t["topic"] for t in topics], log_denied=False)
            if hidden:   # only the partitions of topics the principal may describe
                state = dict(state, topics=[t for t in topics if t["topic"] not in hidden])
            states.append(state)
    return {"throttle_time_ms": 0, "transaction_states": states}
