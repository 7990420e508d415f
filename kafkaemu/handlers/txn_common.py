"""Shared by the transaction API handlers: which node coordinates a transactional id, and the
errors older request versions cannot express."""
from __future__ import annotations

from ..protocol.errors import ErrorCode


def is_txn_coordinator(ctx, transactional_id: str) -> bool:
    """Whether this node leads the transactional id's __transaction_state partition."""
    return ctx.placement.txn_coordinator(transactional_id) == ctx.node_id


def fenced_for(version: int, first_with_producer_fenced: int, code) -> ErrorCode:
    """PRODUCER_FENCED came with InitProducerId v4 and AddPartitionsToTxn/AddOffsetsToTxn/EndTxn v2;
    older versions get INVALID_PRODUCER_EPOCH for it, as Kafka answers them."""
    code = ErrorCode(code)
    if code == ErrorCode.PRODUCER_FENCED and version < first_with_producer_fenced:
        return ErrorCode.INVALID_PRODUCER_EPOCH
    return code
