"""TxnOffsetCommit (key 28), v0-v6.

Offsets committed inside a transaction: written to the group's __consumer_offsets partition as a
transactional batch of the producer and kept pending until the transaction's marker — visible to
OffsetFetch on commit, gone on abort (OffsetFetch with require_stable answers
UNSTABLE_OFFSET_COMMIT meanwhile). As Kafka: unknown topics or partitions
UNKNOWN_TOPIC_OR_PARTITION (the others go on); an empty group id INVALID_GROUP_ID; a node not
leading the group's partition NOT_COORDINATOR; KIP-890 verification (when the partition has no
open transaction of the producer and transaction.partition.verification.enable) — the group's
partition not added with AddOffsetsToTxn TRANSACTION_ABORTABLE (INVALID_TXN_STATE before v4), a
fenced producer INVALID_PRODUCER_EPOCH, an unknown one INVALID_PRODUCER_ID_MAPPING,
CONCURRENT_TRANSACTIONS while it completes; then the group's checks: v3+ member and generation
(UNKNOWN_MEMBER_ID, ILLEGAL_GENERATION, FENCED_INSTANCE_ID; a KIP-848 member's stale epoch is
ILLEGAL_GENERATION, STALE_MEMBER_EPOCH from v6), an unknown group with a generation ILLEGAL_GENERATION
(GROUP_ID_NOT_FOUND from v6, as Kafka 4.4), older versions no
member at all; OFFSET_METADATA_TOO_LARGE per partition. v0-1 get COORDINATOR_NOT_AVAILABLE for
COORDINATOR_LOAD_IN_PROGRESS. v5 (KIP-890 part 2, transactions V2 producers, which send no
AddOffsetsToTxn): the group's partition is added to the transaction instead of verified.
v6 (Kafka 4.4) names topics by id, as KafkaApis.handleTxnOffsetCommitRequest: each id is resolved to
its name (offsets are kept by name), an unknown id (the zero id too) answers UNKNOWN_TOPIC_ID for its
partitions after the transactional id's and the group's authorization, and the response names
topics by the request's ids.
"""
from ..core.offsets.requests import CommitPartition, TxnOffsetCommit
from ..core.transactions.verification import for_client
from ..protocol.defaults import ZERO_UUID
from ..protocol.errors import ErrorCode
from ..storage.log_store import OFFSETS_TOPIC
from .group_common import is_coordinator, partition_exists, resolve_topic_ids
from ..protocol.api_keys import ApiKey
from .authorization import GROUP, READ, TOPIC, TRANSACTIONAL_ID, WRITE, authorize, denied_names
from .registry import registry

E = ErrorCode


@registry.register(ApiKey.TXN_OFFSET_COMMIT, 0, 6)
def txn_offset_commit(ctx, req):
    if ctx.api_version < 6:
        return _commit(ctx, req, req.topics, [])
    known, unknown, ids = resolve_topic_ids(ctx, req.topics)
    response = _commit(ctx, req, known, unknown)
    for t in response["topics"]:
        t.setdefault("topic_id", ids.get(t["name"], ZERO_UUID))
    return response


def _commit(ctx, req, topics, unknown_ids):
    """``topics`` by name; ``unknown_ids``: v6 topics whose id names no topic."""
    version = ctx.api_version
    exists = partition_exists(ctx)
    error = None
    denied = ()
    if not authorize(ctx, WRITE, TRANSACTIONAL_ID, req.transactional_id):
        error = E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    elif not authorize(ctx, READ, GROUP, req.group_id):
        error = E.GROUP_AUTHORIZATION_FAILED
    elif not req.group_id:
        error = E.INVALID_GROUP_ID
    elif not is_coordinator(ctx, req.group_id):
        error = E.NOT_COORDINATOR
    else:
        error = _verification_error(ctx, req)
        denied = denied_names(ctx, READ, TOPIC, [t.name for t in topics])
    if error in (E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, E.GROUP_AUTHORIZATION_FAILED):
        return dict(_all(topics + unknown_ids, error), throttle_time_ms=0)
    unknown = _all(unknown_ids, E.UNKNOWN_TOPIC_ID)["topics"]
    if error is not None:
        response = {"topics": unknown + [{"name": t.name, "partitions": [
            {"partition_index": p.partition_index,
             "error_code": error if exists(t.name, p.partition_index) else E.UNKNOWN_TOPIC_OR_PARTITION}
            for p in t.partitions]} for t in topics]}
    else:
        commit = TxnOffsetCommit(
            transactional_id=req.transactional_id, group_id=req.group_id, producer_id=req.producer_id,
            producer_epoch=req.producer_epoch,
            topics=[(t.name, [CommitPartition(p.partition_index, p.committed_offset,
                                              p.committed_leader_epoch if version >= 2 else -1,
                                              p.committed_metadata) for p in t.partitions])
                    for t in topics if t.name not in denied],
            generation_id=req.generation_id_or_member_epoch if version >= 3 else -1,
            member_id=req.member_id if version >= 3 else "",
            group_instance_id=req.group_instance_id if version >= 3 else None,
            api_version=version)
        response = ctx.groups.commit_transactional_offsets(ctx.now_ms, commit, exists)
        if denied:
            response = dict(response, topics=response["topics"] + [{"name": t.name, "partitions": [
                {"partition_index": p.partition_index, "error_code": E.TOPIC_AUTHORIZATION_FAILED}
                for p in t.partitions]} for t in topics if t.name in denied])
        if unknown:
            response = dict(response, topics=unknown + response["topics"])
    if version < 2:
        for t in response["topics"]:
            for p in t["partitions"]:
                if p["error_code"] == E.COORDINATOR_LOAD_IN_PROGRESS:
                    p["error_code"] = E.COORDINATOR_NOT_AVAILABLE
    return dict(response, throttle_time_ms=0)


def _all(topics, code) -> dict:
    return {"topics": [{"name": t.name, "topic_id": t.topic_id, "partitions": [
        {"partition_index": p.partition_index, "error_code": code} for p in t.partitions]} for t in topics]}


def _verification_error(ctx, req):
    """KIP-890: the group's partition must be in the producer's transaction before the producer's
    first transactional write there (Kafka verifies through CoordinatorPartitionWriter)."""
    verifier = ctx.txn_path.partition_check(adds=ctx.api_version >= 5)
    if verifier is None:
        return None
    index = ctx.placement.group_partition(req.group_id)
    plog = ctx.store.get(OFFSETS_TOPIC).partitions[index]
    if req.producer_id in plog.open_transactions():
        return None
    code = E(verifier(req.transactional_id, req.producer_id, req.producer_epoch, OFFSETS_TOPIC, index))
    if code == E.NONE:
        return None
    if code == E.NETWORK_EXCEPTION:
        return E.COORDINATOR_LOAD_IN_PROGRESS
    return for_client(code, knows_abortable=ctx.api_version >= 4)
