"""ListTransactions (key 66), v0-v2.

The transactions this node coordinates (with several nodes each lists its own, as Kafka), filtered
by state names (unknown names are echoed in unknown_state_filters), producer ids and, v1+
(KIP-994), a duration: only transactions open longer than it; v2+ (KIP-1152) a regular expression
the whole transactional id must match (null or empty: all), one that does not compile answering
INVALID_REGULAR_EXPRESSION with no transactions. Ids the principal may not describe are left out.
"""
import re

from ..core.transactions.requests import ListTransactions
from ..protocol.errors import ErrorCode
from ..protocol.api_keys import ApiKey
from .authorization import DESCRIBE, TRANSACTIONAL_ID, authorize
from .registry import registry
from .txn_common import is_txn_coordinator


@registry.register(ApiKey.LIST_TRANSACTIONS, 0, 2)
def list_transactions(ctx, req):
    pattern = None
    if ctx.api_version >= 2 and req.transactional_id_pattern:
        try:
            pattern = re.compile(req.transactional_id_pattern)
        except (re.error, RecursionError, OverflowError):
            return {"throttle_time_ms": 0, "error_code": ErrorCode.INVALID_REGULAR_EXPRESSION,
                    "unknown_state_filters": [], "transaction_states": []}
    result = ctx.txns.list_transactions(ctx.now_ms, ListTransactions(
        list(req.state_filters), list(req.producer_id_filters),
        req.duration_filter if ctx.api_version >= 1 else -1))
    result["transaction_states"] = [s for s in result["transaction_states"]
                                    if is_txn_coordinator(ctx, s["transactional_id"])
                                    and (pattern is None or pattern.fullmatch(s["transactional_id"]))
                                    and authorize(ctx, DESCRIBE, TRANSACTIONAL_ID, s["transactional_id"],
                                                  log_denied=False)]
    return dict(result, throttle_time_ms=0)
