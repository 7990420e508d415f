"""Metadata (key 3), v0-v13.

Topics: null (v1+) or empty (v0) means all topics, internal ones included. Unknown topics are
auto-created when both the broker (auto.create.topics.enable) and the request (v4+
allow_auto_topic_creation) allow it; unlike Kafka, creation is immediate, so the topic is
answered as available in the same response instead of LEADER_NOT_AVAILABLE. An illegal name is
INVALID_TOPIC_EXCEPTION whether or not it could be auto-created (Kafka's AutoTopicCreationManager
validates first). ``__consumer_offsets`` is auto-created as the group coordinator creates it
(offsets.topic.num.partitions, compacted, internal), as Kafka's AutoTopicCreationManager does.
Every partition is led by this broker (single-node cluster); no racks.

Topic ids and null names, as KafkaApis.handleTopicMetadataRequest:
- v10-v11 (the fields exist but are not supported): a null name or a non-zero id fails the
  whole request with INVALID_REQUEST, answered as Kafka's MetadataRequest.getErrorResponse
  (every requested topic with the error, a null name as "", no brokers).
- v12: when any topic has a non-zero id, topics are looked up by id only (unknown ids get
  UNKNOWN_TOPIC_ID; entries without an id are ignored). Otherwise names are looked up; a null
  name then fails Kafka's metadata cache lookup, which answers the error response with
  UNKNOWN_SERVER_ERROR.
Names asked twice are answered once (Kafka works on a set).
v13 (KIP-1102) adds a top-level error code for the client's rebootstrap; a broker answers it NONE.

Answers reused. A client asks the same Metadata again and again; with authorization off, on a
single live node, the answer naming topics is kept (``ctx.metadata_answers``, a ConstantResponse,
so its bytes are encoded once) under the request's version, names and flags, with what it was made
from: each named topic (the object, or its absence), its internal flag and its partitions' leader
epochs, the node's listener and the cluster id. It is answered again only while all of those are
the same (a created or deleted topic, a new partition, a leader change or a moved listener makes a
new one); an answer that auto-created a topic, or failed to, is not kept.
"""
from ..broker.context import ConstantResponse
from ..storage.offsets_topic import ensure_offsets_topic
from ..protocol.defaults import ZERO_UUID
from ..protocol.errors import ErrorCode
from ..protocol.operations import CLUSTER_OPERATIONS, NOT_REQUESTED, TOPIC_OPERATIONS
from ..storage.log_store import OFFSETS_TOPIC, TopicError, validate_topic_name
from ..protocol.api_keys import ApiKey
from .authorization import (CLUSTER, CREATE, DESCRIBE, TOPIC, authorize, authorize_cluster, authorized_operations,
                            denied_names)
from .registry import registry
from .topic_views import brokers, controller_id, partitions_metadata


@registry.register(ApiKey.METADATA, 0, 13)
def metadata(ctx, req):
    v = ctx.api_version
    want_all = req.topics is None or (v == 0 and not req.topics)
    if not want_all:
        error = _request_error(req.topics, v)
        if error is not None:
            return _error_response(req.topics, error)
    topic_ops = TOPIC_OPERATIONS if req.include_topic_authorized_operations else NOT_REQUESTED
    if want_all:  # topics the principal may not describe are left out, as if they did not exist
        hidden = denied_names(ctx, DESCRIBE, TOPIC, ctx.store.topics, log_denied=False)
        results = [_describe(ctx, topic, topic_ops) for topic in ctx.store.topics.values()
                   if topic.name not in hidden]
    elif any(t.topic_id != ZERO_UUID for t in req.topics):
        results = _by_id(ctx, req.topics, topic_ops)
    else:
        allow_create = ctx.config.auto_create_topics and (v < 4 or req.allow_auto_topic_creation)
        names = dict.fromkeys(t.name for t in req.topics)
        if ctx.authorizer is None:   # the common case, asking nothing
            return _named_answer(ctx, req, v, names, allow_create, topic_ops)
        else:
            # a missing topic the principal may not create is refused, not unknown (KafkaApis:
            # unauthorizedForCreateTopics), when the request may auto-create it
            denied = denied_names(ctx, DESCRIBE, TOPIC, names)
            with ctx.store.topic_changes():   # the topics it auto-creates reach the data directory as one write
                results = [_denied(name, ZERO_UUID) if name in denied or (allow_create and not _may_create(ctx, name))
                           else _by_name(ctx, name, allow_create, topic_ops) for name in names]
    if ctx.authorizer is not None and req.include_topic_authorized_operations and v >= 8:
        for topic in results:
            if topic.get("topic_authorized_operations", NOT_REQUESTED) != NOT_REQUESTED:
                topic["topic_authorized_operations"] = authorized_operations(ctx, TOPIC, topic["name"])
    return _response(ctx, req, v, results)


MAX_KEPT_ANSWERS = 256


class _KeptAnswer:
    """An answer and what it was made from (see the module docstring)."""
    __slots__ = ("response", "topics", "listener", "cluster_id")

    def __init__(self, response: ConstantResponse, store, names, listener, cluster_id) -> None:
        self.response = response
        self.topics = [(name, topic, topic is not None and topic.internal,
                        topic is not None and [p.leader_epoch for p in topic.partitions])
                       for name in names for topic in (store.topics.get(name),)]
        self.listener = listener
        self.cluster_id = cluster_id

    def current(self, store, listener, cluster_id) -> bool:
        if listener != self.listener or cluster_id != self.cluster_id:
            return False
        topics = store.topics
        for name, topic, internal, epochs in self.topics:
            if topics.get(name) is not topic:
                return False
            if topic is not None and (topic.internal != internal
                                      or [p.leader_epoch for p in topic.partitions] != epochs):
                return False
        return True


def _named_answer(ctx, req, v, names, allow_create, topic_ops):
    """The answer to named topics with authorization off, reused while it would be the same."""
    placement = ctx.placement
    nodes = placement.node_ids
    kept = key = None
    if len(nodes) == 1 and not placement.absent(nodes[0]):   # one node: the answer's brokers and leaders
        listener = placement.listeners.get(nodes[0])
        key = (v, tuple(names), allow_create, topic_ops, req.include_cluster_authorized_operations)
        answers = ctx.metadata_answers
        kept = answers.get(key)
        if kept is not None and kept.current(ctx.store, listener, ctx.cluster_id):
            return kept.response
    with ctx.store.topic_changes():   # the topics it auto-creates reach the data directory as one write
        results = [_by_name(ctx, name, allow_create, topic_ops) for name in names]
    response = ConstantResponse(_response(ctx, req, v, results))
    if key is not None and not (allow_create and any(r["error_code"] for r in results)):
        if len(answers) >= MAX_KEPT_ANSWERS and key not in answers:
            answers.clear()
        answers[key] = _KeptAnswer(response, ctx.store, names, listener, ctx.cluster_id)
    return response


def _response(ctx, req, v, results) -> dict:
    return {
        "brokers": brokers(ctx.placement),
        "cluster_id": ctx.cluster_id,
        "controller_id": controller_id(ctx),
        "topics": results,
        "cluster_authorized_operations": _cluster_operations(ctx, req, v)
        if 8 <= v <= 10 and req.include_cluster_authorized_operations else NOT_REQUESTED,
    }


def _cluster_operations(ctx, req, v) -> int:
    """Asked for (v8-10 only): what the principal may do on the cluster."""
    if ctx.authorizer is None:
        return CLUSTER_OPERATIONS
    return authorized_operations(ctx, CLUSTER, "kafka-cluster") if authorize_cluster(ctx, DESCRIBE) else 0


def _may_create(ctx, name) -> bool:
    """Auto-creating a topic takes CREATE on the cluster or on the topic (asked only of a missing one)."""
    if ctx.authorizer is None or ctx.store.get(name) is not None:
        return True
    return authorize(ctx, CREATE, CLUSTER, "kafka-cluster", log_denied=False) or authorize(ctx, CREATE, TOPIC, name)


def _denied(name, topic_id) -> dict:
    return {"error_code": ErrorCode.TOPIC_AUTHORIZATION_FAILED, "name": name, "topic_id": topic_id,
            "is_internal": False, "partitions": []}


def _request_error(topics, v):
    """The error failing the whole request, or None."""
    for t in topics:
        if v < 12 and (t.name is None or t.topic_id != ZERO_UUID):
            return ErrorCode.INVALID_REQUEST
    if v >= 12 and all(t.topic_id == ZERO_UUID for t in topics) and any(t.name is None for t in topics):
        return ErrorCode.UNKNOWN_SERVER_ERROR
    return None


def _error_response(topics, code):
    return {"brokers": [], "cluster_id": None, "controller_id": -1, "topics": [
        {"error_code": code, "name": "" if t.name is None else t.name, "topic_id": t.topic_id,
         "is_internal": False, "partitions": []} for t in topics]}


def _by_id(ctx, topics, topic_ops):
    results = []
    for topic_id in dict.fromkeys(t.topic_id for t in topics if t.topic_id != ZERO_UUID):
        topic = ctx.store.by_id(topic_id)
        if topic is None:
            results.append({"error_code": ErrorCode.UNKNOWN_TOPIC_ID, "name": None, "topic_id": topic_id,
                            "partitions": []})
        elif topic.name in denied_names(ctx, DESCRIBE, TOPIC, [topic.name]):
            results.append(_denied(None, topic_id))   # ids are not secret, as Kafka
        else:
            results.append(_describe(ctx, topic, topic_ops))
    return results


def _by_name(ctx, name, allow_create, topic_ops):
    topic = ctx.store.get(name)
    if topic is None and not validate_topic_name(name):
        return {"error_code": ErrorCode.INVALID_TOPIC_EXCEPTION, "name": name, "partitions": []}
    if topic is None and allow_create and name == OFFSETS_TOPIC:
        topic = ensure_offsets_topic(ctx.store, ctx.config.offsets.topic_num_partitions)
    elif topic is None and allow_create:
        try:
            topic = ctx.topics.create(name, ctx.config.num_partitions, {})
        except TopicError:
            topic = None
    if topic is None:
        return {"error_code": ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "name": name, "partitions": []}
    return _describe(ctx, topic, topic_ops)


def _describe(ctx, topic, topic_ops):
    return {
        "error_code": ErrorCode.NONE,
        "name": topic.name,
        "topic_id": topic.topic_id,
        "is_internal": topic.internal,
        "partitions": partitions_metadata(ctx.placement, topic.partitions),
        "topic_authorized_operations": topic_ops,
    }
