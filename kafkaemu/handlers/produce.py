"""Produce (key 0), v0-v11.

Appends each partition's records to its log (see ``storage/partition_log.py`` for the
validation: CRC -> CORRUPT_MESSAGE, batch over max.message.bytes -> MESSAGE_TOO_LARGE, v3+ needs
exactly one v2 batch -> INVALID_RECORD, zstd before v7 -> UNSUPPORTED_COMPRESSION_TYPE,
idempotent sequences -> OUT_OF_ORDER_SEQUENCE_NUMBER / INVALID_PRODUCER_EPOCH, duplicates get
their original offsets). Legacy message sets (magic 0/1, sent with v0-v2) are converted to v2.
Errors are per partition; the other partitions of the request are appended.

Every record of a batch is walked as Kafka's LogValidator does (count and framing, max timestamp
recomputed, LogAppendTime stamped, keys on compacted topics -> INVALID_RECORD with
record_errors, message.timestamp bounds -> INVALID_TIMESTAMP); see ``storage/partition_log.py``.
The batch size limit is the topic's max.message.bytes, defaulting to the broker's
message.max.bytes, as in Kafka. Decompression is bounded (kafkaemu's own limit; Kafka has none):
one batch inflates to at most ``max_uncompressed_batch_bytes`` and one request's batches to at
most ``socket_request_max_bytes`` in all, what the broker would accept uncompressed; beyond it a
partition answers MESSAGE_TOO_LARGE, so a compression bomb costs no more than a large request. acks: 0 appends and sends no reply; 1 and -1 reply at once
(single replica, so the high watermark is the log end); anything else is INVALID_REQUIRED_ACKS
for every partition.
Unknown topics are auto-created when auto.create.topics.enable (Apache Kafka answers
UNKNOWN_TOPIC_OR_PARTITION and creates the topic on the producer's next Metadata request; the
client-visible outcome is the same). Internal topics (``__consumer_offsets``) are not writable
by clients (INVALID_TOPIC_EXCEPTION).

With several emulated nodes, a partition led by another node answers NOT_LEADER_OR_FOLLOWER
with KIP-951's current_leader and node_endpoints (v10+).

Not implemented: transactions (transactional batches are appended like idempotent ones and
the transactional_id is not verified), throttling.
"""
from ..protocol.errors import ErrorCode
from ..storage.log_store import TopicError, validate_topic_name
from .partition_access import current_leader, node_endpoints, serve_partition
from .registry import NO_RESPONSE, handler

_ADMIN_CLIENT_ID = "__admin_client"


@handler(0, 0, 11)
def produce(ctx, req):
    broker = ctx.broker
    store = broker.store
    version = ctx.api_version
    acks = req.acks
    now = ctx.now_ms
    responses = []
    leaders = set()   # nodes named in current_leader hints, described in node_endpoints (v10+)
    inflatable = broker.config.socket_request_max_bytes   # what the request's batches may decompress to
    for td in req.topic_data:
        name = td.name
        topic = store.get(name)
        topic_error = None
        if topic is None:
            if broker.config.auto_create_topics and validate_topic_name(name):
                try:
                    topic = broker.create_topic(name, broker.config.num_partitions, {})
                except TopicError as exc:
                    topic_error = exc.code
            else:
                topic_error = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION if validate_topic_name(name) \
                    else ErrorCode.INVALID_TOPIC_EXCEPTION
        elif topic.internal and ctx.client_id != _ADMIN_CLIENT_ID:
            topic_error = ErrorCode.INVALID_TOPIC_EXCEPTION
        parts = []
        for pd in td.partition_data:
            if acks not in (0, 1, -1):
                parts.append(_error(pd.index, ErrorCode.INVALID_REQUIRED_ACKS))
                continue
            if topic_error is not None:
                msg = f"Cannot append to internal topic {name}" if topic_error == ErrorCode.INVALID_TOPIC_EXCEPTION \
                    and topic is not None else None
                parts.append(_error(pd.index, topic_error, msg))
                continue
            plog, error = serve_partition(ctx, topic, pd.index)
            if plog is None:
                parts.append(_error(pd.index, error))
                continue
            if error != ErrorCode.NONE:
                out = _error(pd.index, error)
                out["current_leader"] = current_leader(ctx, plog)
                leaders.add(out["current_leader"]["leader_id"])
                parts.append(out)
                continue
            res = plog.append(pd.records, now, produce_version=version,
                              max_message_bytes=int(topic.configs.get("max.message.bytes",
                                                                      broker.config.message_max_bytes)),
                              max_uncompressed_bytes=inflatable)
            inflatable = max(0, inflatable - res.uncompressed_bytes)
            if res.error != "NONE":
                out = _error(pd.index, ErrorCode[res.error], res.message)
                out["log_start_offset"] = -1
                if res.record_errors:
                    out["record_errors"] = [{"batch_index": i, "batch_index_error_message": m}
                                            for i, m in res.record_errors]
                parts.append(out)
                continue
            parts.append({"index": pd.index, "error_code": ErrorCode.NONE, "base_offset": res.base_offset,
                          "log_append_time_ms": res.log_append_time, "log_start_offset": res.log_start_offset,
                          "record_errors": [], "error_message": None})
        responses.append({"name": name, "partition_responses": parts})
    if acks == 0:
        return NO_RESPONSE
    return {"responses": responses, "throttle_time_ms": 0, "node_endpoints": node_endpoints(ctx, leaders)}


def _error(index, code, message=None):
    return {"index": index, "error_code": code, "base_offset": -1, "log_append_time_ms": -1,
            "log_start_offset": -1, "record_errors": [], "error_message": message}
