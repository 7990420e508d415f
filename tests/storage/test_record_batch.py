"""RecordBatch v2 view, builder and compression, checked against kafka-python's own record code."""
import struct

import pytest
from kafka.record.default_records import DefaultRecordBatch, DefaultRecordBatchBuilder
from kafka.record.memory_records import MemoryRecords

from kafkaemu.storage import compression
from kafkaemu.storage.record_batch import (InvalidBatch, build_batch, crc_ok, iter_records, parse_header,
                                           read_varint, rewrite_offsets, set_log_append_time, split_batches,
                                           write_varint)

CODECS = [compression.NONE, compression.GZIP, compression.SNAPPY, compression.LZ4, compression.ZSTD]


def kafka_python_batch(codec, n=10, base_ts=1_000, producer_id=-1, base_sequence=-1):
    b = DefaultRecordBatchBuilder(magic=2, compression_type=codec, is_transactional=False, producer_id=producer_id,
                                  producer_epoch=0 if producer_id >= 0 else -1, base_sequence=base_sequence,
                                  batch_size=1 << 20)
    for i in range(n):
        b.append(i, base_ts + i, b"k%d" % i, b"value-%d" % i * 20, [("h", b"x%d" % i)])
    return bytes(b.build())


@pytest.mark.parametrize("codec", CODECS)
def test_reads_batches_built_by_kafka_python(codec):
    data = kafka_python_batch(codec)
    assert crc_ok(data)
    h = parse_header(data)
    assert (h.magic, h.codec, h.records_count, h.last_offset_delta) == (2, codec, 10, 9)
    recs = list(iter_records(data))
    assert [r.offset for r in recs] == list(range(10))
    assert recs[4].key == b"k4" and recs[4].value == b"value-4" * 20
    assert recs[4].headers == [("h", b"x4")] and recs[4].timestamp == 1_004


@pytest.mark.parametrize("codec", CODECS)
def test_built_batches_read_by_kafka_python(codec):
    data = build_batch([(b"k%d" % i, None if i == 2 else b"v%d" % i, [("a", None)], 500 + i) for i in range(5)],
                       codec=codec, producer_id=7, producer_epoch=1, base_sequence=3)
    batch = DefaultRecordBatch(data)
    assert batch.validate_crc()
    recs = list(batch)
    assert [(r.key, r.value, r.timestamp) for r in recs][:3] == [(b"k0", b"v0", 500), (b"k1", b"v1", 501),
                                                                (b"k2", None, 502)]
    assert list(recs[0].headers) == [("a", None)]
    assert batch.producer_id == 7 and batch.base_sequence == 3


def test_rewriting_offsets_keeps_crc_valid():
    batch = bytearray(kafka_python_batch(compression.NONE))
    rewrite_offsets(batch, 12345, 7)
    assert crc_ok(batch)
    h = parse_header(batch)
    assert (h.base_offset, h.partition_leader_epoch, h.last_offset) == (12345, 7, 12354)
    assert [r.offset for r in iter_records(batch)][-1] == 12354


def test_corrupted_byte_fails_crc():
    batch = bytearray(kafka_python_batch(compression.NONE))
    batch[70] ^= 0xFF
    assert not crc_ok(batch)


def test_log_append_time_rewrites_timestamps_and_crc():
    batch = bytearray(kafka_python_batch(compression.GZIP))
    set_log_append_time(batch, 99_999)
    assert crc_ok(batch)
    assert {r.timestamp for r in iter_records(batch)} == {99_999}


def test_split_stops_at_partial_batch_and_rejects_bad_length():
    a, b = kafka_python_batch(0, 3), kafka_python_batch(0, 4)
    assert [size for _, size, _ in split_batches(a + b)] == [len(a), len(b)]
    assert [size for _, size, _ in split_batches(a + b[:-5])] == [len(a)]
    bad = bytearray(a)
    struct.pack_into(">i", bad, 8, 3)
    with pytest.raises(InvalidBatch) as exc:
        list(split_batches(bad))
    assert exc.value.code_name == "CORRUPT_MESSAGE"


@pytest.mark.parametrize("value", [0, 1, -1, 63, -64, 64, 300, -300, 2**31 - 1, -2**31, 2**62])
def test_varint_roundtrip(value):
    out = bytearray()
    write_varint(out, value)
    assert read_varint(out, 0) == (value, len(out))


def test_snappy_raw_and_xerial_both_decode():
    import cramjam
    payload = b"abc" * 1000
    raw = bytes(cramjam.snappy.compress_raw(payload))
    assert compression.decompress(compression.SNAPPY, raw) == payload
    assert compression.decompress(compression.SNAPPY, compression.compress(compression.SNAPPY, payload)) == payload
    # xerial framing with two blocks, as the Java client writes large batches
    half = len(payload) // 2
    blocks = [bytes(cramjam.snappy.compress_raw(payload[:half])), bytes(cramjam.snappy.compress_raw(payload[half:]))]
    framed = b"\x82SNAPPY\x00" + struct.pack(">ii", 1, 1) + b"".join(struct.pack(">i", len(x)) + x for x in blocks)
    assert compression.decompress(compression.SNAPPY, framed) == payload
