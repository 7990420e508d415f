"""Metadata (key 3), v0-v12.

Topics: null (v1+) or empty (v0) means all topics, internal ones included. Unknown topics are
auto-created when both the broker (auto.create.topics.enable) and the request (v4+
allow_auto_topic_creation) allow it; unlike Kafka, creation is immediate, so the topic is
answered as available in the same response instead of LEADER_NOT_AVAILABLE. v10+ topics are
looked up by id whenever the request gives a non-zero id. Every partition is led by this broker (single-node cluster); no racks.
"""
from ..protocol.codegen import ZERO_UUID
from ..protocol.errors import ErrorCode
from ..protocol.operations import CLUSTER_OPERATIONS, NOT_REQUESTED, TOPIC_OPERATIONS
from ..storage.log_store import TopicError, validate_topic_name
from .registry import handler
from .topic_views import brokers, partition_metadata


@handler(3, 0, 12)
def metadata(ctx, req):
    broker = ctx.broker
    store = broker.store
    v = ctx.api_version
    want_all = req.topics is None or (v == 0 and not req.topics)
    topic_ops = TOPIC_OPERATIONS if req.include_topic_authorized_operations else NOT_REQUESTED
    results = []
    if want_all:
        for topic in store.topics.values():
            results.append(_describe(broker, topic, topic_ops))
    else:
        allow_create = broker.config.auto_create_topics and (v < 4 or req.allow_auto_topic_creation)
        for wanted in req.topics:
            # Kafka looks topics up by id whenever a non-zero id is given (Java sends name "" then).
            if v >= 10 and wanted.topic_id != ZERO_UUID:
                topic = store.by_id(wanted.topic_id)
                if topic is None:
                    results.append({"error_code": ErrorCode.UNKNOWN_TOPIC_ID, "name": None,
                                    "topic_id": wanted.topic_id, "partitions": []})
                else:
                    results.append(_describe(broker, topic, topic_ops))
                continue
            topic = store.get(wanted.name)
            if topic is None and allow_create and validate_topic_name(wanted.name):
                try:
                    topic = broker.create_topic(wanted.name, broker.config.num_partitions, {})
                except TopicError:
                    topic = None
            if topic is None:
                code = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION if validate_topic_name(wanted.name) \
                    else ErrorCode.INVALID_TOPIC_EXCEPTION
                results.append({"error_code": code, "name": wanted.name, "partitions": []})
            else:
                results.append(_describe(broker, topic, topic_ops))
    return {
        "brokers": brokers(broker),
        "cluster_id": broker.cluster_id,
        "controller_id": broker.node_id,
        "topics": results,
        "cluster_authorized_operations":
            CLUSTER_OPERATIONS if v >= 8 and req.include_cluster_authorized_operations else NOT_REQUESTED,
    }


def _describe(broker, topic, topic_ops):
    return {
        "error_code": ErrorCode.NONE,
        "name": topic.name,
        "topic_id": topic.topic_id,
        "is_internal": topic.internal,
        "partitions": [partition_metadata(broker, p) for p in topic.partitions],
        "topic_authorized_operations": topic_ops,
    }
