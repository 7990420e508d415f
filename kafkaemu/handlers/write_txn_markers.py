"""WriteTxnMarkers (key 27), v1-v2 (Kafka 4 removed the older versions, KIP-896: they close the connection).

Writes a commit (transaction_result true) or abort marker for each producer to the listed
partitions, as Kafka's KafkaApis: an unknown topic or partition UNKNOWN_TOPIC_OR_PARTITION, a
partition this node does not lead NOT_LEADER_OR_FOLLOWER, a producer epoch or coordinator epoch
older than the partition has seen INVALID_PRODUCER_EPOCH / TRANSACTION_COORDINATOR_FENCED (nothing
written there). A marker written to __consumer_offsets completes the producer's transactional
offset commits. kafkaemu's own coordinator writes its markers in-process; this is what
Admin.abortTransaction (``kafka-transactions.sh abort``) sends to end a hanging transaction, which
the transaction coordinator does not learn of, as in Kafka. v2 (KIP-1228) names each marker's
transaction version, which Admin.abortTransaction sends as 0 (unknown); the markers are written
as before (the epoch rules of Transactions V2 are the transaction coordinator's).
"""
from ..protocol.errors import ErrorCode
from ..storage.log_store import OFFSETS_TOPIC
from .partition_access import find_partition
from ..protocol.api_keys import ApiKey
from .authorization import ALTER, CLUSTER_ACTION, authorize_cluster
from .registry import registry

E = ErrorCode


@registry.register(ApiKey.WRITE_TXN_MARKERS, 1, 2)
def write_txn_markers(ctx, req):
    if ctx.authorizer is not None and not authorize_cluster(ctx, ALTER) and not authorize_cluster(ctx, CLUSTER_ACTION):
        return {"markers": [{"producer_id": m.producer_id, "topics": [
            {"name": t.name, "partitions": [{"partition_index": i, "error_code": E.CLUSTER_AUTHORIZATION_FAILED}
                                            for i in t.partition_indexes]} for t in m.topics]} for m in req.markers]}
    markers = []
    for marker in req.markers:
        results: dict[tuple[str, int], ErrorCode] = {}
        writable = []
        for t in marker.topics:
            for index in t.partition_indexes:
                plog = find_partition(ctx.store.get(t.name), index)
                if plog is None:
                    results[(t.name, index)] = E.UNKNOWN_TOPIC_OR_PARTITION
                elif ctx.placement.partition_leader(plog) != ctx.node_id:
                    results[(t.name, index)] = E.NOT_LEADER_OR_FOLLOWER
                else:
                    writable.append((t.name, index))
        if writable:
            written = ctx.txn_path.write_txn_markers(marker.producer_id, marker.producer_epoch,
                                                     marker.transaction_result, marker.coordinator_epoch, writable,
                                                     ctx.now_ms)
            results.update(written)
            if any(t == OFFSETS_TOPIC and code == E.NONE for (t, _), code in written.items()):
                ctx.groups.complete_transaction(ctx.now_ms, marker.producer_id, marker.transaction_result)
        topics: dict[str, list[dict]] = {}
        for (name, index), code in results.items():
            topics.setdefault(name, []).append({"partition_index": index, "error_code": code})
        markers.append({"producer_id": marker.producer_id,
                        "topics": [{"name": name, "partitions": parts} for name, parts in topics.items()]})
    return {"markers": markers}
