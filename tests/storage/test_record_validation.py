"""Append validation as Kafka's LogValidator does it: the max timestamp recomputed from the records
(header and CRC rewritten), record count and framing consistent with the header, compressed
batches re-encoded when their offset deltas are off or the topic's compression.type differs,
LogAppendTime, keys on compacted topics, timestamp bounds; and decompression that is incremental
and bounded, so compression bombs are refused without being inflated and reads of what is stored
stay bounded. Pure: PartitionLog with time as an argument."""
import struct
import tracemalloc

import crc32c
import pytest
import zlib
import zstandard
from kafka.record.legacy_records import LegacyRecordBatchBuilder

from kafkaemu.storage import compression
from kafkaemu.storage.log_store import LogStore
from kafkaemu.storage.topic_config import validate_topic_config
from kafkaemu.storage.record_batch import (HEADER_SIZE, build_batch, crc_ok, encode_records, iter_records,
                                           parse_header)

NOW = 1_700_000_000_000
_HEADER = struct.Struct(">qiibIhiqqqhii")


def raw_batch(payload: bytes, count: int, *, codec=0, base_ts=NOW, max_ts=NOW, last_offset_delta=None,
              attrs=0, producer_id=-1) -> bytes:
    """A v2 batch around ``payload`` (already compressed with ``codec``), header fields as given."""
    lod = count - 1 if last_offset_delta is None else last_offset_delta
    buf = bytearray(_HEADER.pack(0, HEADER_SIZE - 12 + len(payload), -1, 2, 0, codec | attrs, lod, base_ts, max_ts,
                                 producer_id, -1, -1, count))
    buf += payload
    struct.pack_into(">I", buf, 17, crc32c.crc32c(bytes(buf[21:])))
    return bytes(buf)


def records(n, ts=NOW, key=b"k"):
    return [(key + b"%d" % i if key is not None else None, b"value-%d" % i, [("h", b"1")], ts + i) for i in range(n)]


def with_max_timestamp(batch: bytes, max_ts: int) -> bytes:
    buf = bytearray(batch)
    struct.pack_into(">q", buf, 35, max_ts)
    struct.pack_into(">I", buf, 17, crc32c.crc32c(bytes(buf[21:])))
    return bytes(buf)


@pytest.fixture
def store():
    return LogStore()


@pytest.fixture
def log(store):
    return store.create_topic("t", 1).partitions[0]


# -- max timestamp ------------------------------------------------------------------------------

@pytest.mark.parametrize("codec", [compression.NONE, compression.GZIP, compression.ZSTD])
def test_a_max_timestamp_of_minus_one_is_recomputed_from_the_records(log, codec):
    # older Go clients write -1 as the batch's max timestamp
    log.append(build_batch(records(3, ts=1000)), NOW)                                  # offsets 0-2, 1000-1002
    assert log.append(with_max_timestamp(build_batch(records(4, ts=2000), codec=codec), -1), NOW).error == "NONE"
    stored = log.batches()[1]
    assert parse_header(stored).max_timestamp == 2003 and crc_ok(stored)
    assert log.offset_for_timestamp(1500)[:2] == (2000, 3)   # was offset -1: the batch looked empty of time
    assert log.offset_for_timestamp(2002)[:2] == (2002, 5)
    assert log.max_timestamp_offset()[:2] == (2003, 6)       # was timestamp -1


def test_a_wrong_max_timestamp_is_corrected_and_a_right_one_left_alone(log):
    assert log.append(with_max_timestamp(build_batch(records(3, ts=5000)), 4000), NOW).error == "NONE"
    assert log.append(build_batch(records(2, ts=6000)), NOW).error == "NONE"
    assert [parse_header(b).max_timestamp for b in log.batches()] == [5002, 6001]
    assert log.offset_for_timestamp(5001)[:2] == (5001, 1)


# -- record count and framing -------------------------------------------------------------------

@pytest.mark.parametrize("codec", [compression.NONE, compression.LZ4])
def test_a_count_larger_than_the_records_is_invalid_record(log, codec):
    payload = compression.compress(codec, encode_records(records(3), NOW))
    r = log.append(raw_batch(payload, 4, codec=codec), NOW)        # header: 4 records, offsets 0-3
    assert r.error == "INVALID_RECORD" and "premature EOF" in r.message and log.high_watermark == 0


@pytest.mark.parametrize("codec", [compression.NONE, compression.SNAPPY])
def test_records_beyond_the_count_are_invalid_record(log, codec):
    payload = compression.compress(codec, encode_records(records(3), NOW))
    r = log.append(raw_batch(payload, 2, codec=codec), NOW)
    assert r.error == "INVALID_RECORD" and "records still remaining" in r.message and log.high_watermark == 0


def test_a_record_length_that_is_negative_or_too_short_is_invalid_record(log):
    good = encode_records(records(2), NOW)
    for bad_prefix in (b"\x01", b"\x04"):    # zigzag -1, and 2 bytes (less than a record body)
        r = log.append(raw_batch(bad_prefix + good[1:], 2), NOW)
        assert r.error == "INVALID_RECORD", bad_prefix


def test_compressed_offset_deltas_out_of_sequence_are_rewritten(log):
    recs = [(b"k%d" % i, b"v%d" % i, [], NOW + i, d) for i, d in enumerate((0, 5, 2))]
    payload = compression.compress(compression.GZIP, encode_records(recs, NOW))
    log.append(build_batch(records(2)), NOW)
    assert log.append(raw_batch(payload, 3, codec=compression.GZIP), NOW).error == "NONE"
    stored = log.batches()[1]
    assert parse_header(stored).codec == compression.GZIP and crc_ok(stored)
    assert [(r.offset, r.key) for r in iter_records(stored)] == [(2, b"k0"), (3, b"k1"), (4, b"k2")]


def test_the_topics_compression_type_is_applied(store):
    plog = store.create_topic("z", 1, {"compression.type": "zstd"}).partitions[0]
    assert plog.append(build_batch(records(3), codec=compression.GZIP), NOW).error == "NONE"
    assert plog.append(build_batch(records(2)), NOW).error == "NONE"
    assert [parse_header(b).codec for b in plog.batches()] == [compression.ZSTD, compression.ZSTD]
    assert [r.offset for b in plog.batches() for r in iter_records(b)] == [0, 1, 2, 3, 4]
    plain = store.create_topic("u", 1, {"compression.type": "uncompressed"}).partitions[0]
    assert plain.append(build_batch(records(3), codec=compression.LZ4), NOW).error == "NONE"
    assert parse_header(plain.batches()[0]).codec == compression.NONE


# -- timestamps ---------------------------------------------------------------------------------

def test_log_append_time_topics_are_stamped_and_refuse_a_client_stamped_batch(store):
    plog = store.create_topic("lat", 1, {"message.timestamp.type": "LogAppendTime"}).partitions[0]
    r = plog.append(build_batch(records(2, ts=5)), NOW)
    assert r.error == "NONE" and r.log_append_time == NOW
    h = parse_header(plog.batches()[0])
    assert h.log_append_time and h.max_timestamp == NOW and crc_ok(plog.batches()[0])
    r = plog.append(build_batch(records(2), log_append_time=True), NOW)
    assert r.error == "INVALID_TIMESTAMP" and [i for i, _ in r.record_errors] == [0, 1]


def test_a_client_log_append_time_batch_without_timestamp_is_refused_on_create_time_topics(log):
    stamped = with_max_timestamp(build_batch(records(2), log_append_time=True), -1)
    assert log.append(stamped, NOW).error == "INVALID_TIMESTAMP"
    # with a timestamp it is taken as CreateTime, as Kafka's setMaxTimestamp does
    assert log.append(build_batch(records(2, ts=NOW - 5), log_append_time=True), NOW).error == "NONE"
    h = parse_header(log.batches()[0])
    assert not h.log_append_time and h.max_timestamp == NOW - 4


def test_timestamps_outside_the_topics_bounds_are_invalid_timestamp(store):
    plog = store.create_topic("b", 1, {"message.timestamp.before.max.ms": "1000",
                                       "message.timestamp.after.max.ms": "100"}).partitions[0]
    batch = build_batch([(b"a", b"1", [], NOW - 5000), (b"b", b"2", [], NOW), (b"c", b"3", [], NOW + 500)])
    r = plog.append(batch, NOW)
    assert r.error == "INVALID_TIMESTAMP" and [i for i, _ in r.record_errors] == [0, 2]
    assert "out of range" in r.record_errors[0][1] and plog.high_watermark == 0
    assert plog.append(build_batch([(b"a", b"1", [], NOW - 999)]), NOW).error == "NONE"


def test_records_more_than_an_hour_ahead_are_invalid_timestamp_by_default(store):
    """Kafka 4's message.timestamp.after.max.ms defaults to an hour; the lower bound stays open."""
    plog = store.create_topic("ahead", 1).partitions[0]
    r = plog.append(build_batch([(b"a", b"1", [], NOW + 3_600_001), (b"b", b"2", [], NOW + 3_600_000)]), NOW)
    assert r.error == "INVALID_TIMESTAMP" and [i for i, _ in r.record_errors] == [0]
    assert plog.append(build_batch([(b"a", b"1", [], NOW + 3_600_000), (b"b", b"2", [], 0)]), NOW).error == "NONE"


def test_configs_kafka_4_removed_are_unknown():
    for name in ("message.timestamp.difference.max.ms", "message.format.version", "message.downconversion.enable"):
        assert validate_topic_config(name, "1") == f"Unknown topic config name: {name}"


# -- keys on compacted topics -------------------------------------------------------------------

@pytest.mark.parametrize("codec", [compression.NONE, compression.ZSTD])
def test_null_keys_on_compacted_topics_are_invalid_record_with_every_index(store, codec):
    plog = store.create_topic("c", 1, {"cleanup.policy": "compact"}).partitions[0]
    recs = [(b"k0", b"v", [], NOW), (None, b"v", [], NOW), (b"k2", b"v", [], NOW), (None, b"v", [], NOW)]
    r = plog.append(build_batch(recs, codec=codec), NOW)
    assert r.error == "INVALID_RECORD" and [i for i, _ in r.record_errors] == [1, 3]
    assert r.message.startswith("One or more records have been rejected due to 2 record errors in total, and only "
                                "showing the first three errors at most: [RecordError(batchIndex=1, message='"
                                "Compacted topic cannot accept message without key in topic partition c-0')")
    assert plog.high_watermark == 0


# -- decompression bounds -----------------------------------------------------------------------

def _zstd_stream(parts) -> bytes:
    c = zstandard.ZstdCompressor(level=1).compressobj()
    out = bytearray()
    for part, times in parts:
        for _ in range(times):
            out += c.compress(part)
    return bytes(out + c.flush())


@pytest.fixture(scope="module")
def zstd_bomb():
    """The issue's bomb: ~128 KiB of zstd inflating to 4 GiB of zeros behind one valid record."""
    first = encode_records([(b"k", b"v", [], NOW)], NOW)
    return _zstd_stream([(first, 1), (bytes(1 << 20), 4096)])


def _peak(fn):
    tracemalloc.start()
    try:
        result = fn()
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_4_gib_zstd_bomb_is_refused_after_inflating_one_piece(log, zstd_bomb):
    assert len(zstd_bomb) < 200_000
    batch = raw_batch(zstd_bomb, 1, codec=compression.ZSTD)
    r, peak = _peak(lambda: log.append(batch, NOW))
    assert r.error == "INVALID_RECORD" and "records still remaining" in r.message
    assert peak < 8 << 20 and log.high_watermark == 0


@pytest.mark.parametrize("codec", [compression.GZIP, compression.LZ4, compression.ZSTD])
def test_valid_records_inflating_beyond_the_bound_are_message_too_large(store, codec):
    plog = store.create_topic("bomb%d" % codec, 1).partitions[0]
    plog.max_uncompressed_bytes = 8 << 20
    record = encode_records([(b"k", bytes(1 << 20), [], NOW)], NOW)   # 1 MiB records, 64 of them
    if codec == compression.GZIP:
        c = zlib.compressobj(1, zlib.DEFLATED, 31)
        payload = b"".join(c.compress(record) for _ in range(64)) + c.flush()
    elif codec == compression.LZ4:
        import lz4.frame
        c = lz4.frame.LZ4FrameCompressor()
        payload = c.begin() + b"".join(c.compress(record) for _ in range(64)) + c.flush()
    else:
        payload = _zstd_stream([(record, 64)])
    r, peak = _peak(lambda: plog.append(raw_batch(payload, 64, codec=codec), NOW))
    assert r.error == "MESSAGE_TOO_LARGE" and plog.high_watermark == 0
    assert peak < 24 << 20


def test_a_snappy_block_declaring_more_than_the_bound_is_not_inflated(store):
    plog = store.create_topic("snap", 1).partitions[0]
    plog.max_uncompressed_bytes = 1 << 20
    framed = compression.compress(compression.SNAPPY, bytes(4 << 20))
    r, peak = _peak(lambda: plog.append(raw_batch(framed, 1, codec=compression.SNAPPY), NOW))
    assert r.error == "MESSAGE_TOO_LARGE" and peak < 2 << 20


def test_data_a_codec_rejects_is_unknown_server_error_as_in_kafka(log):
    r = log.append(raw_batch(b"\x28\xb5\x2f\xfd" + b"garbage" * 10, 1, codec=compression.ZSTD), NOW)
    assert r.error == "UNKNOWN_SERVER_ERROR"
    r = log.append(raw_batch(b"\x1f\x8b" + b"\x00" * 30, 1, codec=compression.GZIP), NOW)
    assert r.error == "UNKNOWN_SERVER_ERROR" and log.high_watermark == 0


def test_a_legacy_gzip_bomb_is_refused_without_inflating_it(log):
    # a 954 KiB gzip message set: ~37 million empty messages once inflated; magic 1 is refused first
    message = LegacyRecordBatchBuilder(magic=1, compression_type=0, batch_size=1 << 20)
    message.append(0, NOW, None, None)
    one = bytes(message.build())
    c = zlib.compressobj(9, zlib.DEFLATED, 31)
    inner = b"".join(c.compress(one * 40_000) for _ in range(64)) + c.flush()  # ~80 MiB inflated
    wrapper = LegacyRecordBatchBuilder(magic=1, compression_type=0, batch_size=1 << 30)
    wrapper.append(0, NOW, None, inner)
    data = bytearray(wrapper.build())
    data[17] |= compression.GZIP                       # mark the wrapper gzip; fix its CRC
    struct.pack_into(">I", data, 12, zlib.crc32(bytes(data[16:])))
    r, peak = _peak(lambda: log.append(bytes(data), NOW, produce_version=3))
    assert r.error == "INVALID_RECORD" and peak < 8 << 20 and log.high_watermark == 0


def test_reads_of_a_stored_bomb_stay_bounded(store, zstd_bomb):
    # a batch stored before validation existed (a data directory of an older kafkaemu)
    plog = store.create_topic("old", 1, {"cleanup.policy": "compact"}).partitions[0]
    bomb = raw_batch(zstd_bomb, 1, codec=compression.ZSTD, max_ts=-1)
    plog.restore([bomb, build_batch(records(2, ts=NOW + 10), base_offset=1)], 0)

    def reads():
        return plog.offset_for_timestamp(NOW), plog.max_timestamp_offset(), plog.compact(NOW, force=True)
    (by_time, newest, _), peak = _peak(reads)
    assert by_time[:2] == (NOW + 10, 1) and newest[:2] == (NOW + 11, 2)
    assert peak < 64 << 20


def test_one_requests_batches_share_one_inflation_budget(store):
    plog = store.create_topic("budget", 2).partitions
    batch = build_batch([(b"k%d" % i, bytes(100_000), [], NOW) for i in range(8)], codec=compression.ZSTD)
    first = plog[0].append(batch, NOW, max_uncompressed_bytes=1_200_000)
    assert first.error == "NONE" and 800_000 < first.uncompressed_bytes < 900_000
    second = plog[1].append(batch, NOW, max_uncompressed_bytes=1_200_000 - first.uncompressed_bytes)
    assert second.error == "MESSAGE_TOO_LARGE"


def test_an_empty_cleanup_policy_is_legal_and_neither_deletes_nor_compacts():
    from kafkaemu.storage.topic_config import is_compacted, is_deleting
    assert validate_topic_config("cleanup.policy", "") is None
    assert validate_topic_config("cleanup.policy", "delete,,compact") is not None
    assert not is_deleting({"cleanup.policy": ""}) and not is_compacted({"cleanup.policy": ""})
