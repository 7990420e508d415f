"""Produce (key 0), v3-v13: Kafka 4 removed v0-v2 (KIP-896), which close the connection, yet still
advertises v0 in ApiVersions (``api_versions.py``).

Appends each partition's records to its log (see ``storage/partition_log.py`` for the
validation: CRC -> CORRUPT_MESSAGE, batch over max.message.bytes -> MESSAGE_TOO_LARGE, v3+ needs
exactly one v2 batch -> INVALID_RECORD, zstd before v7 -> UNSUPPORTED_COMPRESSION_TYPE,
idempotent sequences -> OUT_OF_ORDER_SEQUENCE_NUMBER / INVALID_PRODUCER_EPOCH, duplicates get
their original offsets). A legacy message set (magic 0/1, what v0-v2 sent) is INVALID_RECORD.
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

Transactions: a transactional batch starts (or continues) its producer's open transaction on
the partition, pinning the last stable offset until the coordinator writes the commit/abort
marker; a plain batch from a producer with an open transaction is INVALID_TXN_STATE. Transactional
records without a transactional_id answer TRANSACTIONAL_ID_AUTHORIZATION_FAILED and transactional
batches of two producers in one request INVALID_PRODUCER_ID_MAPPING, for every partition, as
Kafka. KIP-890 part 1: a transactional batch that would start a transaction on a partition is
first checked by ``ctx.txn_path.partition_verifier`` when one is installed (the transaction
coordinator's answer: INVALID_TXN_STATE "Partition was not added to the transaction"; its
retriable errors become NOT_ENOUGH_REPLICAS, as Kafka's ReplicaManager maps them). v12 (KIP-890
part 2, sent by transactions V2 producers, which send no AddPartitionsToTxn): such a batch adds its
partition to the producer's transaction instead, starting the transaction if none is open,
whether or not verification is enabled (``ctx.txn_path.partition_check``).

v13 (KIP-516) names topics by id: an id the broker does not know (the zero id too) answers
UNKNOWN_TOPIC_ID for each of its partitions, before authorization, and such a topic is never
auto-created (KafkaApis.handleProduceRequest); the response names topics by id. v12 is v11 (KIP-890).

Not implemented: throttling.
"""
from operator import itemgetter

from ..core.transactions.verification import for_client
from ..protocol.errors import ErrorCode
from ..storage.log_store import OFFSETS_TOPIC, TopicError, validate_topic_name
from ..storage.record_batch import transactional_producer
from .authorization import TOPIC, TRANSACTIONAL_ID, WRITE, authorize, denied_names
from .partition_access import current_leader, node_endpoints, serve_partition
from ..broker.context import NO_RESPONSE
from ..protocol.api_keys import ApiKey
from .registry import registry

_ADMIN_CLIENT_ID = "__admin_client"
# a partition's fields, read as items (decoded bodies are Containers, i.e. dicts): one C call
_INDEX_AND_RECORDS = itemgetter("index", "records")


@registry.register(ApiKey.PRODUCE, 3, 13)
def produce(ctx, req):
    store = ctx.store
    version = ctx.api_version
    acks = req.acks
    now = ctx.now_ms
    responses = []
    leaders = set()   # nodes named in current_leader hints, described in node_endpoints (v10+)
    inflatable = ctx.config.socket_request_max_bytes   # what the request's batches may decompress to
    # one pass over the decoded request (its fields are costly to read), finding transactional batches
    topic_data = []
    txn = None
    by_id = version >= 13
    for td in req.topic_data:
        partitions = list(map(_INDEX_AND_RECORDS, td["partition_data"]))
        if by_id:
            topic_id = td["topic_id"]
            known = store.by_id(topic_id)
            topic_data.append((None if known is None else known.name, partitions, topic_id))
        else:
            topic_data.append((td["name"], partitions, None))
        if txn is None:
            for _, records in partitions:
                txn = transactional_producer(records)
                if txn is not None:
                    break
    verifier = None   # KIP-890 verification of partitions a transactional request starts a transaction on
    if txn is not None:
        request_error = _transactional_request_error(req, topic_data)
        if request_error is None and not authorize(ctx, WRITE, TRANSACTIONAL_ID, req.transactional_id):
            request_error = ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
        if request_error is not None:
            return NO_RESPONSE if acks == 0 else _request_error(topic_data, request_error)
        verifier = ctx.txn_path.partition_check(adds=version >= 12)
    denied = () if ctx.authorizer is None else denied_names(ctx, WRITE, TOPIC, [name for name, _, _ in topic_data
                                                                                if name is not None])
    with store.topic_changes():   # the topics it auto-creates reach the data directory as one write
        for name, partitions, topic_id in topic_data:
            topic = None if name is None else store.get(name)
            topic_error = None
            if name is None:
                topic_error = ErrorCode.UNKNOWN_TOPIC_ID
            elif name in denied:   # before existence, as Kafka: a denied name's existence is not disclosed
                topic, topic_error = None, ErrorCode.TOPIC_AUTHORIZATION_FAILED
            elif topic is None:
                # __consumer_offsets is the group coordinator's to create, not a produce's
                if ctx.config.auto_create_topics and validate_topic_name(name) and name != OFFSETS_TOPIC:
                    try:
                        topic = ctx.topics.create(name, ctx.config.num_partitions, {})
                    except TopicError as exc:
                        topic_error = exc.code
                else:  # an illegal name too: Kafka only finds no such partition in its metadata cache
                    topic_error = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
            elif topic.internal and ctx.client_id != _ADMIN_CLIENT_ID:
                topic_error = ErrorCode.INVALID_TOPIC_EXCEPTION
            parts = []
            late = []   # answers Kafka puts after the appended partitions' (see below)
            max_message_bytes = None if topic is None else \
                int(topic.configs.get("max.message.bytes", ctx.config.message_max_bytes))
            for index, records in partitions:
                if acks not in (0, 1, -1):
                    parts.append(_error(index, ErrorCode.INVALID_REQUIRED_ACKS))
                    continue
                if topic_error is not None:
                    msg = f"Cannot append to internal topic {name}" \
                        if topic_error == ErrorCode.INVALID_TOPIC_EXCEPTION and topic is not None else None
                    parts.append(_error(index, topic_error, msg))
                    continue
                plog, error = serve_partition(ctx, topic, index)
                if plog is None:
                    late.append((1, _error(index, error)))
                    continue
                if error != ErrorCode.NONE:
                    out = _error(index, error)
                    out["current_leader"] = current_leader(ctx, plog)
                    leaders.add(out["current_leader"]["leader_id"])
                    parts.append(out)
                    continue
                if verifier is not None:
                    out = _verify(verifier, req.transactional_id, plog, index, records, version)
                    if out is not None:
                        parts.append(out)
                        continue
                res = plog.append(records, now, produce_version=version, max_message_bytes=max_message_bytes,
                                  max_uncompressed_bytes=inflatable)
                inflatable = max(0, inflatable - res.uncompressed_bytes)
                if res.error != "NONE":
                    # Kafka's answer carries a message only for record errors (ReplicaManager's
                    # RecordValidationException) and for an error met reading the request's batches
                    # (the request fails with ApiError's message); an error of the producer's state has the
                    # log start offset
                    shown = res.record_errors or res.request_wide
                    out = _error(index, ErrorCode[res.error], res.message if shown else None)
                    out["log_start_offset"] = plog.log_start_offset if res.error in _PRODUCER_STATE_ERRORS else -1
                    if res.record_errors:
                        out["record_errors"] = [{"batch_index": i, "batch_index_error_message": m}
                                                for i, m in res.record_errors]
                    if records is not None and len(records) > 16 and records[16] in (0, 1):
                        late.append((2, out))   # a legacy batch: refused by ProduceRequest.validateRecords
                    else:
                        parts.append(out)
                    continue
                parts.append({"index": index, "error_code": ErrorCode.NONE, "base_offset": res.base_offset,
                              "log_append_time_ms": res.log_append_time, "log_start_offset": res.log_start_offset,
                              "record_errors": [], "error_message": None})
            # KafkaApis merges its answers in this order: the partitions it appended (or tried to), those
            # not in its metadata, those whose records it refused before appending (a batch's magic)
            parts += [out for _, out in sorted(late, key=lambda kv: kv[0])]
            responses.append({"name": name, "topic_id": topic_id, "partition_responses": parts})
    if acks == 0:
        return NO_RESPONSE
    return {"responses": responses, "throttle_time_ms": 0, "node_endpoints": node_endpoints(ctx, leaders)}


def _transactional_request_error(req, topic_data):
    """Kafka's whole-request errors for transactional records: no transactional id
    (TRANSACTIONAL_ID_AUTHORIZATION_FAILED, KafkaApis.handleProduceRequest), transactional
    batches of more than one producer (INVALID_PRODUCER_ID_MAPPING, ReplicaManager)."""
    if req.transactional_id is None:
        return ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    producers = set()
    for _, partitions, _ in topic_data:
        for _, records in partitions:
            found = transactional_producer(records)
            if found is not None and found[0] >= 0:
                producers.add(found)
    return ErrorCode.INVALID_PRODUCER_ID_MAPPING if len(producers) > 1 else None


def _request_error(topic_data, code):
    return {"responses": [{"name": name, "topic_id": topic_id,
                           "partition_responses": [_error(index, code) for index, _ in partitions]}
                          for name, partitions, topic_id in topic_data], "throttle_time_ms": 0, "node_endpoints": []}


# coordinator errors a verification may answer that older clients would not retry: answered as
# NOT_ENOUGH_REPLICAS (retriable, no metadata refresh), as ReplicaManager does
_RETRIABLE_VERIFICATION_ERRORS = {ErrorCode.CONCURRENT_TRANSACTIONS, ErrorCode.NETWORK_EXCEPTION,
                                  ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, ErrorCode.COORDINATOR_NOT_AVAILABLE,
                                  ErrorCode.NOT_COORDINATOR}


def _verify(verifier, transactional_id, plog, index, records, version: int):
    """KIP-890 part 1: a transactional batch starting a transaction on this partition is checked
    with the transaction coordinator (``ctx.txn_path.partition_verifier``); an error response for
    the partition, or None to append."""
    producer = transactional_producer(records)
    if producer is None or producer[0] < 0 or plog.producers.has_ongoing(producer[0], producer[1]):
        return None
    code = verifier(transactional_id, producer[0], producer[1], plog.topic.name, plog.index)
    if not code:
        return None
    # TRANSACTION_ABORTABLE only for clients that know it (Produce v11+), as ReplicaManager
    code = for_client(ErrorCode(code), knows_abortable=version > 10)
    if code == ErrorCode.INVALID_TXN_STATE:
        return _error(index, code, "Partition was not added to the transaction")
    if code in _RETRIABLE_VERIFICATION_ERRORS:
        return _error(index, ErrorCode.NOT_ENOUGH_REPLICAS, "Unable to verify the partition has been added to "
                      f"the transaction. Underlying error: {code.name}")
    return _error(index, code)


_PRODUCER_STATE_ERRORS = ("OUT_OF_ORDER_SEQUENCE_NUMBER", "INVALID_PRODUCER_EPOCH")


def _error(index, code, message=None):
    return {"index": index, "error_code": code, "base_offset": -1, "log_append_time_ms": -1,
            "log_start_offset": -1, "record_errors": [], "error_message": message}
