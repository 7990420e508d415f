"""OffsetCommit (key 8), v2-v10 (Kafka 4 removed the older versions, KIP-896: they close the connection).

Generation/member checks as Kafka's classic groups (ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID,
FENCED_INSTANCE_ID, REBALANCE_IN_PROGRESS in CompletingRebalance, commits in PreparingRebalance
with the current generation); standalone commits (generation -1, no member) while the group has no
members; OFFSET_METADATA_TOO_LARGE; UNKNOWN_TOPIC_OR_PARTITION for partitions that do not exist;
v9 answers GROUP_ID_NOT_FOUND for an unknown group with a generation, older versions
ILLEGAL_GENERATION. The commit timestamp is the broker's time (Kafka 4's OffsetAndMetadata.fromRequest:
v1's client timestamp went with v0-1, KIP-896); v2-4 retention_time_ms sets an expiry
(now + retention in Java long arithmetic: a huge one wraps to the past, as in Kafka). A commit
whose records cannot be written (a group id over 32767 UTF-8 bytes) gets UNKNOWN_SERVER_ERROR
with nothing changed; the empty group id is a valid one here, as in Kafka.
For a KIP-848 consumer group generation_id_or_member_epoch is the member epoch: a newer one gets
STALE_MEMBER_EPOCH, an older one commits only partitions held since then (otherwise the whole
request fails), an unknown member UNKNOWN_MEMBER_ID, a member committing below v9 UNSUPPORTED_VERSION. With an authorizer: GROUP READ, then TOPIC READ per topic (KafkaApis).
v10 (KIP-848) names topics by id, as KafkaApis.handleOffsetCommitRequest: each id is resolved to
its name first (offsets are kept by name), an unknown id (the zero id too) answers UNKNOWN_TOPIC_ID
for its partitions before topic authorization, and the response names topics by the request's ids.
The answer is in KafkaApis's order: the topics it answers itself (an unknown id, a refused topic,
partitions that do not exist) in request order, one entry per topic, then the coordinator's answer
merged in (OffsetCommitResponse.Builder.merge: a topic named twice is one entry when KafkaApis
answered anything itself, two otherwise). An existing topic named with no partitions is left out;
an unknown one is answered with none.
"""
from ..broker.context import DEFERRED
from ..core.offsets.manager import OffsetManager
from ..core.offsets.requests import OffsetCommit
from ..protocol.errors import ErrorCode
from .group_common import is_coordinator, partition_exists, resolve_topic_ids
from ..protocol.api_keys import ApiKey
from .authorization import GROUP, READ, TOPIC, authorize, denied_names
from .registry import registry


@registry.register(ApiKey.OFFSET_COMMIT, 2, 10)
def offset_commit(ctx, req):
    if ctx.authorizer is not None and not authorize(ctx, READ, GROUP, req.group_id):
        return _all(req.topics, ErrorCode.GROUP_AUTHORIZATION_FAILED)
    if ctx.api_version >= 10:
        return _by_topic_id(ctx, req)
    return _named(ctx, req, req.topics, None, None)


def _named(ctx, req, topics, finish, ids):
    """The commit of ``topics``: the answer returned, or DEFERRED and given to ``ctx.respond``
    once the commit is written; ``finish`` completes the answer first (None: it is complete).
    ``ids``: v10's topic ids by name, which the answer names the topics by."""
    if ctx.authorizer is not None:   # KafkaApis refuses topics before the coordinator answers anything
        denied = denied_names(ctx, READ, TOPIC, [t.name for t in topics])
        if denied:   # those topics' partitions fail; the rest go to the coordinator
            refused = _all([t for t in topics if t.name in denied], ErrorCode.TOPIC_AUTHORIZATION_FAILED)["topics"]
            done = finish

            def merged(response: dict) -> dict:
                response = _kafka_order(req, refused, response, ids is not None)
                return response if done is None else done(response)
            topics = [t for t in topics if t.name not in denied]
            if not topics:
                return merged({"topics": []})
            finish = merged
    if not is_coordinator(ctx, req.group_id):   # the coordinator's answer: KafkaApis's come first
        answer = OffsetManager.commit_failed(ErrorCode.NOT_COORDINATOR, _request(ctx, req, topics, ids),
                                             partition_exists(ctx))
        return answer if finish is None else finish(answer)
    return _commit(ctx, req, topics, finish, ids)


def _by_topic_id(ctx, req):
    """v10: ids resolved to names (as Kafka sets each known topic's name), unknown ones answered
    UNKNOWN_TOPIC_ID, the rest committed by name and answered with the request's ids."""
    known, unknown, ids = resolve_topic_ids(ctx, req.topics)
    if not unknown:
        return _named(ctx, req, known, None, ids)
    unknown_topics = _all(unknown, ErrorCode.UNKNOWN_TOPIC_ID)["topics"]

    def with_unknown(response: dict) -> dict:   # a new answer: the coordinator's may be kept (ConstantResponse)
        return _kafka_order(req, unknown_topics, response, True)
    return _named(ctx, req, known, with_unknown, ids) if known else with_unknown({"topics": []})


# the codes KafkaApis answers itself, before the coordinator: the coordinator answers none of them
_ANSWERED_BY_APIS = frozenset((ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, ErrorCode.TOPIC_AUTHORIZATION_FAILED,
                               ErrorCode.UNKNOWN_TOPIC_ID))


def _kafka_order(req, refused: list[dict], response: dict, by_id: bool) -> dict:
    """The answer in KafkaApis.handleOffsetCommitRequest's order (OffsetCommitResponse.Builder):
    first the topics it answers itself, one entry per topic (by id in v10) in request order (the
    ``refused`` ones, and those of ``response`` with partitions that do not exist, which the
    coordinator's answer puts first with those partitions first, or with none), then the
    coordinator's other topics, each joined to an entry of its topic already there (Builder.merge
    with something answered before)."""
    def key(t: dict):
        return t["topic_id"] if by_id else t["name"]
    first: dict = {}
    for t in refused:   # a topic named twice is one entry
        entry = first.get(key(t))
        if entry is None:
            first[key(t)] = dict(t, partitions=list(t["partitions"]))
        else:
            entry["partitions"].extend(t["partitions"])
    rest: dict = {}
    for t in response["topics"]:
        parts = t["partitions"]
        if not parts or parts[0]["error_code"] in _ANSWERED_BY_APIS:
            first[key(t)] = t   # the coordinator's answer has one entry per such topic
        elif key(t) in rest:
            rest[key(t)] = dict(rest[key(t)], partitions=rest[key(t)]["partitions"] + parts)
        else:
            rest[key(t)] = t
    position: dict = {}
    for i, t in enumerate(req.topics):
        position.setdefault(t.topic_id if by_id else t.name, i)
    ordered = sorted(first.values(), key=lambda t: position.get(key(t), len(position)))
    return dict(response, topics=ordered + list(rest.values()))


def _all(topics, code) -> dict:
    return {"topics": [{"name": t.name, "topic_id": t.topic_id, "partitions": [
        {"partition_index": p.partition_index, "error_code": code} for p in t.partitions]} for t in topics]}


def _commit(ctx, req, topics, finish, ids):
    """Answered once the commit's records are written: with those of the commits that arrived
    with it as one batch while the connection lingers (``GroupCoordinator.commit_offsets_then``).
    The decoded partitions go to the core as they are (``CommitPartition``'s fields are theirs),
    and so do the fields a version lacks: they decode as their defaults (no leader epoch before v6,
    no instance id before v7, no retention after v4), which is what the older version means."""
    commit = OffsetCommit(req.group_id, [(t.name, t.partitions) for t in topics], req.generation_id_or_member_epoch,
                          req.member_id, req.group_instance_id, req.retention_time_ms, ctx.api_version, ids)
    respond = ctx.respond
    ctx.groups.commit_offsets_then(ctx.now_ms, commit, partition_exists(ctx),
                                   respond if finish is None else lambda response: respond(finish(response)))
    return DEFERRED


def _request(ctx, req, topics, ids) -> OffsetCommit:   # as _commit's (written out there: every commit runs it)
    return OffsetCommit(req.group_id, [(t.name, t.partitions) for t in topics], req.generation_id_or_member_epoch,
                        req.member_id, req.group_instance_id, req.retention_time_ms, ctx.api_version, ids)
