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
The answer is in KafkaApis's order: first the topics it answers itself (an unknown id, a refused
topic, an unknown topic or partition), one entry per topic (by id from v6), then the coordinator's
answer merged in (TxnOffsetCommitResponse.Builder.merge: joined to the entry of its topic if there
is one; with no such entry at all, the coordinator's answer as it is, a topic named twice twice). An
existing topic named with no partitions is left out of the answer.
"""
from ..core.offsets.requests import CommitPartition, TxnOffsetCommit
from ..core.transactions.verification import for_client
from ..protocol.defaults import ZERO_UUID
from ..protocol.errors import ErrorCode
from ..storage.log_store import OFFSETS_TOPIC
from .group_common import is_coordinator, resolve_topic_ids
from ..protocol.api_keys import ApiKey
from .authorization import GROUP, READ, TOPIC, TRANSACTIONAL_ID, WRITE, authorize, denied_names
from .registry import registry

E = ErrorCode


@registry.register(ApiKey.TXN_OFFSET_COMMIT, 0, 6)
def txn_offset_commit(ctx, req):
    if not authorize(ctx, WRITE, TRANSACTIONAL_ID, req.transactional_id):
        return _sent(ctx, _all(req.topics, E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED))
    if not authorize(ctx, READ, GROUP, req.group_id):
        return _sent(ctx, _all(req.topics, E.GROUP_AUTHORIZATION_FAILED))
    by_id = ctx.api_version >= 6
    unknown_ids = set()
    if by_id:   # each id's name set first, as KafkaApis does (offsets are kept by name)
        known, unknown, _ = resolve_topic_ids(ctx, req.topics)
        unknown_ids = {id(t) for t in unknown}
    denied = denied_names(ctx, READ, TOPIC, [t.name for t in req.topics if id(t) not in unknown_ids])
    answered = _Answer(by_id)   # the topics KafkaApis answers itself, before the coordinator
    valid = []   # (request topic, its partitions that exist): what the coordinator is asked
    for t in req.topics:
        if id(t) in unknown_ids:
            answered.add(t.topic_id, t.name, t.partitions, E.UNKNOWN_TOPIC_ID)
            continue
        if t.name in denied:
            answered.add(t.topic_id, t.name, t.partitions, E.TOPIC_AUTHORIZATION_FAILED)
            continue
        topic = ctx.store.get(t.name)
        if topic is None:
            answered.add(ZERO_UUID, t.name, t.partitions, E.UNKNOWN_TOPIC_OR_PARTITION)
            continue
        count = len(topic.partitions)
        parts = []
        for p in t.partitions:
            if 0 <= p.partition_index < count:
                parts.append(p)
            else:
                answered.add(t.topic_id, t.name, (p,), E.UNKNOWN_TOPIC_OR_PARTITION)
        if parts:   # an existing topic named with no partitions is left out, as in Kafka
            valid.append((t, parts))
    if not valid:
        return _sent(ctx, {"topics": answered.topics})
    coordinator = _coordinator_answer(ctx, req, valid)
    for (t, _), entry in zip(valid, coordinator):
        entry["topic_id"] = t.topic_id
    return _sent(ctx, {"topics": answered.merged(coordinator)})


class _Answer:
    """TxnOffsetCommitResponse.Builder: one entry per topic (told by id from v6, else by name),
    partitions added in turn; ``merged`` adds the coordinator's answer as Builder.merge does."""
    __slots__ = ("topics", "_by_key", "_by_id")

    def __init__(self, by_id: bool) -> None:
        self.topics: list[dict] = []
        self._by_key: dict = {}
        self._by_id = by_id

    def add(self, topic_id: bytes, name: str, partitions, code: ErrorCode) -> None:
        entry = self._by_key.get(topic_id if self._by_id else name)
        if entry is None:
            entry = {"name": name, "topic_id": topic_id, "partitions": []}
            self._add(entry)
        entry["partitions"].extend({"partition_index": p.partition_index, "error_code": code} for p in partitions)

    def _add(self, entry: dict) -> None:
        self.topics.append(entry)
        self._by_key[entry["topic_id"] if self._by_id else entry["name"]] = entry

    def merged(self, coordinator: list[dict]) -> list[dict]:
        """With nothing answered before, the coordinator's answer as it is (a topic named twice
        twice); otherwise each of its topics joins the entry of the same topic, or is added."""
        if not self.topics:
            return coordinator
        for entry in coordinator:
            existing = self._by_key.get(entry["topic_id"] if self._by_id else entry["name"])
            if existing is None:
                self._add(entry)
            else:
                existing["partitions"].extend(entry["partitions"])
        return self.topics


def _coordinator_answer(ctx, req, valid) -> list[dict]:
    """GroupCoordinatorService.commitTransactionalOffsets for the topics KafkaApis passed on: an
    error of the coordinator (INVALID_GROUP_ID, NOT_COORDINATOR, KIP-890 verification) answers
    each of their partitions, else the commit's answer; one entry per topic, in request order."""
    if not req.group_id:
        error = E.INVALID_GROUP_ID
    elif not is_coordinator(ctx, req.group_id):
        error = E.NOT_COORDINATOR
    else:
        error = _verification_error(ctx, req)
    if error is not None:
        return [{"name": t.name, "partitions": [{"partition_index": p.partition_index, "error_code": error}
                                                for p in parts]} for t, parts in valid]
    version = ctx.api_version
    commit = TxnOffsetCommit(
        transactional_id=req.transactional_id, group_id=req.group_id, producer_id=req.producer_id,
        producer_epoch=req.producer_epoch,
        topics=[(t.name, [CommitPartition(p.partition_index, p.committed_offset,
                                          p.committed_leader_epoch if version >= 2 else -1,
                                          p.committed_metadata) for p in parts])
                for t, parts in valid],
        generation_id=req.generation_id_or_member_epoch if version >= 3 else -1,
        member_id=req.member_id if version >= 3 else "",
        group_instance_id=req.group_instance_id if version >= 3 else None,
        api_version=version)
    return ctx.groups.commit_transactional_offsets(ctx.now_ms, commit)["topics"]


def _sent(ctx, response: dict) -> dict:
    """As KafkaApis's sendResponse: v0-1 clients get COORDINATOR_NOT_AVAILABLE for
    COORDINATOR_LOAD_IN_PROGRESS (KAFKA-7296)."""
    if ctx.api_version < 2:
        for t in response["topics"]:
            for p in t["partitions"]:
                if p["error_code"] == E.COORDINATOR_LOAD_IN_PROGRESS:
                    p["error_code"] = E.COORDINATOR_NOT_AVAILABLE
    return dict(response, throttle_time_ms=0)


def _all(topics, code) -> dict:
    """TxnOffsetCommitRequest.getErrorResponse: every partition of the request with ``code``."""
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
