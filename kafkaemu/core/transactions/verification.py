"""KIP-890 part 1: how the coordinator's answer to a verification becomes the error a partition
write answers (Kafka's AddPartitionsToTxnManager and ReplicaManager)."""
from __future__ import annotations

from ...protocol.errors import ErrorCode

E = ErrorCode


def verification_error(code: ErrorCode) -> ErrorCode:
    """AddPartitionsToTxnManager: a fenced producer reads as INVALID_PRODUCER_EPOCH."""
    return E.INVALID_PRODUCER_EPOCH if code == E.PRODUCER_FENCED else code


def for_client(code: ErrorCode, knows_abortable: bool) -> ErrorCode:
    """TRANSACTION_ABORTABLE reaches only clients whose request version knows it (Produce v11+,
    TxnOffsetCommit v4+); older ones get INVALID_TXN_STATE, as Kafka answers them."""
    return E.INVALID_TXN_STATE if code == E.TRANSACTION_ABORTABLE and not knows_abortable else code
