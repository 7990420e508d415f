"""InitProducerId (key 22), v0-v5.

Without a transactional id (idempotent producers): always a fresh producer id with epoch 0, as
Kafka's TransactionCoordinator does (the v3+ producer_id/epoch of a KIP-360 reset are accepted and
a new id is issued). With a transactional id the transaction coordinator answers (see
core/transactions/coordinator.py): the id's producer id with its epoch bumped, a new producer id
once the epoch is exhausted, an open transaction aborted first (CONCURRENT_TRANSACTIONS, the
client retries), KIP-360 recovery with the v3+ producer_id/producer_epoch (PRODUCER_FENCED for a
stale one). Errors as Kafka: one of producer_id/epoch without the other or an empty transactional
id INVALID_REQUEST; a timeout outside (0, transaction.max.timeout.ms] INVALID_TRANSACTION_TIMEOUT;
a node not leading the id's __transaction_state partition NOT_COORDINATOR; PRODUCER_FENCED is
INVALID_PRODUCER_EPOCH before v4. Not implemented: authorization, KIP-939 (v6, two-phase commit).
"""
from ..core.transactions.requests import InitProducerId
from ..protocol.errors import ErrorCode
from ..protocol.api_keys import ApiKey
from .authorization import (CLUSTER, IDEMPOTENT_WRITE, TOPIC, TRANSACTIONAL_ID, WRITE, authorize,
                            authorize_by_resource_type)
from .registry import registry
from .txn_common import fenced_for, is_txn_coordinator


@registry.register(ApiKey.INIT_PRODUCER_ID, 0, 5)
def init_producer_id(ctx, req):
    tid = req.transactional_id
    if tid is not None and not authorize(ctx, WRITE, TRANSACTIONAL_ID, tid):
        return _response(ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
    # an idempotent producer: IDEMPOTENT_WRITE on the cluster, or WRITE on some topic
    if tid is None and not authorize(ctx, IDEMPOTENT_WRITE, CLUSTER, "kafka-cluster", log_denied=False) \
            and not authorize_by_resource_type(ctx, WRITE, TOPIC):
        return _response(ErrorCode.CLUSTER_AUTHORIZATION_FAILED)
    coordinator = ctx.txns
    # Kafka's order: the request's own errors (answered by the coordinator below), then ownership
    well_formed = (req.producer_id == -1) == (req.producer_epoch == -1) \
        and coordinator.txns.validate_timeout(req.transaction_timeout_ms)
    if tid and well_formed and not is_txn_coordinator(ctx, tid):
        return _response(ErrorCode.NOT_COORDINATOR)
    result = coordinator.init_producer_id(ctx.now_ms, InitProducerId(tid, req.transaction_timeout_ms,
                                                                     req.producer_id, req.producer_epoch))
    return _response(fenced_for(ctx.api_version, 4, result["error_code"]), result["producer_id"],
                     result["producer_epoch"])


def _response(code, producer_id: int = -1, producer_epoch: int = -1) -> dict:
    return {"throttle_time_ms": 0, "error_code": code, "producer_id": producer_id, "producer_epoch": producer_epoch}
