"""AddPartitionsToTxn (key 24), v0-v5.

v0-3 (clients): one transaction; v4+ (brokers, KIP-890): a batch of transactions, each either adding
its partitions (for a transactions V2 producer, KIP-890 part 2) or, with verify_only, asking whether
they are in the transaction (NONE, or TRANSACTION_ABORTABLE for one that is not). As Kafka's
KafkaApis, partitions are checked first: an internal topic (from a v0-3 client)
TOPIC_AUTHORIZATION_FAILED, an unknown topic or partition UNKNOWN_TOPIC_OR_PARTITION, and then the
transaction's other partitions OPERATION_NOT_ATTEMPTED, nothing added. Otherwise the coordinator's
answer goes to every partition: NOT_COORDINATOR on a node not leading the id's __transaction_state
partition, INVALID_PRODUCER_ID_MAPPING for an unknown id or another producer id, PRODUCER_FENCED for
another epoch (INVALID_PRODUCER_EPOCH before v2), CONCURRENT_TRANSACTIONS while the transaction is
completing. Not implemented: authorization (v4+ needs CLUSTER_ACTION in Kafka; kafkaemu has no
ACLs).
"""
from ..core.transactions.requests import AddPartitions
from ..protocol.errors import ErrorCode
from ..protocol.api_keys import ApiKey
from .authorization import CLUSTER_ACTION, TOPIC, TRANSACTIONAL_ID, WRITE, authorize, authorize_cluster, denied_names
from .registry import registry
from .txn_common import fenced_for, is_txn_coordinator

E = ErrorCode


@registry.register(ApiKey.ADD_PARTITIONS_TO_TXN, 0, 5)
def add_partitions_to_txn(ctx, req):
    version = ctx.api_version
    if version < 4:
        results = _transaction(ctx, req.v3_and_below_transactional_id, req.v3_and_below_producer_id,
                               req.v3_and_below_producer_epoch, req.v3_and_below_topics, False)
        return {"throttle_time_ms": 0, "results_by_topic_v3_and_below": results}
    if not authorize_cluster(ctx, CLUSTER_ACTION):   # v4+ come from brokers
        return {"throttle_time_ms": 0, "error_code": E.CLUSTER_AUTHORIZATION_FAILED, "results_by_transaction": []}
    return {"throttle_time_ms": 0, "error_code": E.NONE, "results_by_transaction": [
        {"transactional_id": t.transactional_id,
         "topic_results": _transaction(ctx, t.transactional_id, t.producer_id, t.producer_epoch, t.topics,
                                       t.verify_only)}
        for t in req.transactions]}


def _transaction(ctx, tid, producer_id, producer_epoch, topics, verify_only) -> list[dict]:
    partitions = list(dict.fromkeys((t.name, p) for t in topics for p in t.partitions))
    store = ctx.store
    client = ctx.api_version < 4
    if client and not authorize(ctx, WRITE, TRANSACTIONAL_ID, tid):
        return _by_topic(dict.fromkeys(partitions, E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED))
    denied = denied_names(ctx, WRITE, TOPIC, [name for name, _ in partitions]) if client else ()
    failed = {}
    for name, index in partitions:
        topic = store.get(name)
        if (topic is not None and topic.internal and client) or name in denied:
            failed[(name, index)] = E.TOPIC_AUTHORIZATION_FAILED   # clients may not write internal topics
        elif topic is None or not 0 <= index < len(topic.partitions):
            failed[(name, index)] = E.UNKNOWN_TOPIC_OR_PARTITION
    if failed:
        return _by_topic({tp: failed.get(tp, E.OPERATION_NOT_ATTEMPTED) for tp in partitions})
    if tid and not is_txn_coordinator(ctx, tid):
        return _by_topic(dict.fromkeys(partitions, E.NOT_COORDINATOR))
    # v4+ additions come from brokers adding a V2 producer's partitions (KIP-890 part 2)
    request = AddPartitions(tid, producer_id, producer_epoch, partitions, transaction_version=0 if client else 2)
    coordinator = ctx.txns
    if verify_only:
        return _by_topic(coordinator.verify_partitions(ctx.now_ms, request))
    code = fenced_for(ctx.api_version, 2, coordinator.add_partitions(ctx.now_ms, request))
    return _by_topic(dict.fromkeys(partitions, code))


def _by_topic(codes: dict) -> list[dict]:
    topics: dict[str, list[dict]] = {}
    for (name, index), code in codes.items():
        topics.setdefault(name, []).append({"partition_index": index, "partition_error_code": code})
    return [{"name": name, "results_by_partition": results} for name, results in topics.items()]
