"""What a produce request's records must pass before they are appended, as Kafka's UnifiedLog
and LogValidator check them (magic, CRC, size, offset range, record count, control batches, then
every record: see ``record_validation``); batches that cannot be kept as sent are re-encoded here.
Each function takes the partition log the records are for (its topic, index and bounds)."""
from __future__ import annotations

from functools import lru_cache

from . import topic_config
from .record_batch import (HEADER_SIZE, NO_TIMESTAMP, InvalidBatch, build_batch, crc_ok, iter_records, parse_header,
                           split_batches)
from .record_validation import check_records


def validate(plog, records, produce_version: int, max_message_bytes: int, configs, now_ms: int,
             limit: int, inflated: list) -> list:
    """[(batch, header, max timestamp)] ready to append, or InvalidBatch (one function: every
    produced partition passes here)."""
    if records is None:
        raise InvalidBatch("INVALID_RECORD", "produce request without records for the partition")
    found = list(split_batches(records))
    # ProduceRequest.validateRecords (Produce v0-2, whose legacy message sets Kafka converted, are gone)
    if not found:
        raise InvalidBatch("INVALID_RECORD", f"Produce requests with version {produce_version} must have "
                           "at least one record batch per partition")
    if found[0][2] != 2:
        raise InvalidBatch("INVALID_RECORD", f"Produce requests with version {produce_version} are only "
                           "allowed to contain record batches with magic version 2")
    if produce_version < 7 and records[21 + found[0][0] + 1] & 0x07 == 4:
        raise InvalidBatch("UNSUPPORTED_COMPRESSION_TYPE", f"Produce requests with version "
                           f"{produce_version} are not allowed to use ZStandard compression")
    if len(found) > 1:
        raise InvalidBatch("INVALID_RECORD", f"Produce requests with version {produce_version} are only "
                           "allowed to contain exactly one record batch per partition")
    [(pos, size, _)] = found
    if records[pos:pos + 8] != b"\0" * 8:
        raise InvalidBatch("INVALID_RECORD", f"The baseOffset of the record batch in the append to "
                           f"{plog.topic.name}-{plog.index} should be 0, but it is "
                           f"{int.from_bytes(records[pos:pos + 8], 'big', signed=True)}")
    if size > max_message_bytes:
        raise InvalidBatch("MESSAGE_TOO_LARGE", f"The record batch size in the append is {size} bytes, "
                           f"which exceeds the maximum configured value of {max_message_bytes}.")
    if size < HEADER_SIZE:
        raise InvalidBatch("CORRUPT_MESSAGE", f"record batch of {size} bytes is shorter than its header")
    batch = bytearray(memoryview(records)[pos:pos + size])
    if not crc_ok(batch):
        raise InvalidBatch("CORRUPT_MESSAGE", "Record is corrupt (stored crc does not match the computed crc)")
    h = parse_header(batch)
    if h.last_offset_delta < 0:
        raise InvalidBatch("INVALID_RECORD", f"Batch has an invalid offset range: [0, {h.last_offset_delta}] "
                           f"in topic partition {plog.topic.name}-{plog.index}")
    if h.records_count <= 0:
        raise InvalidBatch("INVALID_RECORD", f"Invalid reported count for record batch: {h.records_count} "
                           f"in topic partition {plog.topic.name}-{plog.index}")
    if h.records_count != h.last_offset_delta + 1:
        raise InvalidBatch("INVALID_RECORD", f"Inconsistent batch offset range [0, {h.last_offset_delta}] "
                           f"and count of records {h.records_count} in topic partition "
                           f"{plog.topic.name}-{plog.index}")
    if h.is_control:
        raise InvalidBatch("INVALID_RECORD", f"Clients are not allowed to write control records in topic "
                           f"partition {plog.topic.name}-{plog.index}")
    validated = validate_records(plog, batch, h, configs, now_ms, max_message_bytes, limit, inflated)
    size = len(validated[0])
    segment_bytes = configs.get("segment.bytes")
    segment_bytes = _DEFAULT_SEGMENT_BYTES if segment_bytes is None else int(segment_bytes)
    if size > segment_bytes:   # UnifiedLog.append: no segment could hold it
        raise InvalidBatch("RECORD_LIST_TOO_LARGE", f"Message batch size is {size} bytes in append to partition "
                           f"{plog.topic.name}-{plog.index}, which exceeds the maximum configured segment size "
                           f"of {segment_bytes}.")
    return [validated]


def validate_records(plog, batch: bytearray, h, configs, now_ms: int, max_message_bytes: int, limit: int,
                     inflated: list):
    """LogValidator's record pass over one v2 batch: (batch, header, max timestamp), the batch
    re-encoded when it cannot be kept (a compressed batch whose offset deltas are not 0, 1, 2, ...
    or whose codec is not the topic's ``compression.type``)."""
    lat_topic, compacted, before_ms, after_ms, ranged = _settings_of(tuple(map(configs.get, _SETTINGS_KEYS)))
    target = topic_config.target_codec(configs, h.codec)
    keep = h.codec == target   # in place unless the codec changes (or, below, deltas are off)
    check = check_records(batch, h, fields=compacted, limit=limit - inflated[0])
    inflated[0] += check.uncompressed_bytes
    errors = []   # (record index, error code name, message); at most one per record, keys first
    if compacted and check.null_keys:
        errors += [(i, "INVALID_RECORD", f"Compacted topic cannot accept message without key in topic "
                    f"partition {plog.topic.name}-{plog.index}") for i in check.null_keys]
    if h.log_append_time and (lat_topic or h.max_timestamp == NO_TIMESTAMP):
        keyless = set(check.null_keys) if compacted else ()
        errors += [(i, "INVALID_TIMESTAMP", "Invalid timestamp type in message with offset "
                    f"{i}. Producer should not set timestamp type to LogAppendTime.")
                   for i in range(h.records_count) if i not in keyless]
    elif ranged and (before_ms != topic_config.LONG_MAX or check.max_timestamp > now_ms + after_ms):
        # at the defaults (no lower bound, an hour ahead) the batch's largest timestamp tells; only a
        # batch that breaks a bound is read record by record, for each record's error
        errors += timestamp_errors(plog, batch, now_ms, before_ms, after_ms, limit,
                                   set(check.null_keys) if compacted else set())
    if errors:
        raise _record_errors(errors)
    if not keep or not check.sequential:
        batch = reencode(plog, batch, h, target, lat_topic, now_ms, max_message_bytes, limit)
        h = parse_header(batch)
    return batch, h, check.max_timestamp


def timestamp_errors(plog, batch, now_ms: int, before_ms: int, after_ms: int, limit: int, skip: set) -> list:
    """Records outside message.timestamp.before/after.max.ms (decoded: only topics that set them)."""
    lo, hi = now_ms - before_ms, now_ms + after_ms
    return [(i, "INVALID_TIMESTAMP", f"Timestamp {r.timestamp} of message with offset {r.offset} is out of "
             f"range. The timestamp should be within [{lo}, {hi}]")
            for i, r in enumerate(iter_records(batch, limit))
            if i not in skip and r.timestamp != NO_TIMESTAMP and not lo <= r.timestamp <= hi]


def reencode(plog, batch, h, codec: int, lat_topic: bool, now_ms: int, max_message_bytes: int, limit: int):
    """Kafka's buildRecordsAndAssignOffsets: the records again, offset deltas 0, 1, 2, ..., in
    the topic's codec; the result must still fit max.message.bytes."""
    try:
        records = [(r.key, r.value, r.headers, r.timestamp) for r in iter_records(batch, limit)]
    except InvalidBatch as exc:
        raise InvalidBatch("INVALID_RECORD", f"Found invalid record structure: {exc}") from exc
    new = build_batch(records, codec=codec, producer_id=h.producer_id, producer_epoch=h.producer_epoch,
                      base_sequence=h.base_sequence, transactional=h.is_transactional,
                      log_append_time=lat_topic)
    if len(new) > max_message_bytes:
        raise InvalidBatch("MESSAGE_TOO_LARGE", f"Message batch size is {len(new)} bytes in append to"
                           f"partition {plog.topic.name}-{plog.index} which exceeds the maximum configured "
                           f"size of {max_message_bytes}.")
    return bytearray(new)


def _record_errors(errors: list) -> InvalidBatch:
    """Kafka's processRecordErrors: INVALID_TIMESTAMP when any record has a bad timestamp, else
    INVALID_RECORD; every record error is listed (``record_errors``), the message shows three."""
    shown = ", ".join(f"RecordError(batchIndex={i}, message='{m}')" for i, _, m in errors[:3])
    if any(code == "INVALID_TIMESTAMP" for _, code, _ in errors):
        exc = InvalidBatch("INVALID_TIMESTAMP", "One or more records have been rejected due to invalid timestamp")
    else:
        exc = InvalidBatch("INVALID_RECORD", f"One or more records have been rejected due to {len(errors)} record "
                           f"errors in total, and only showing the first three errors at most: [{shown}]")
    exc.record_errors = [(i, m) for i, _, m in errors]
    return exc


def _record_settings(configs) -> tuple:
    """The topic configs record validation reads: (LogAppendTime topic, compacted, timestamp
    bounds before and after, whether those bounds are set)."""
    lat_topic = topic_config.log_append_time(configs)
    before_ms, after_ms = topic_config.timestamp_bounds(configs)
    ranged = not lat_topic and (before_ms != topic_config.LONG_MAX or after_ms != topic_config.LONG_MAX)
    return lat_topic, topic_config.is_compacted(configs), before_ms, after_ms, ranged


# What _record_settings reads; its answer is cached by their values (every produce asks, and every
# topic carries the broker's defaults, so "no configs" no longer tells).
_SETTINGS_KEYS = ("message.timestamp.type", "cleanup.policy", "message.timestamp.before.max.ms",
                  "message.timestamp.after.max.ms")


@lru_cache(maxsize=256)
def _settings_of(values: tuple) -> tuple:
    return _record_settings({k: v for k, v in zip(_SETTINGS_KEYS, values) if v is not None})


_DEFAULT_SEGMENT_BYTES = topic_config.int_config({}, "segment.bytes")
