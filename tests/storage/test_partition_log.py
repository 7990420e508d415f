"""PartitionLog: offset assignment, validation errors, reads, timestamps, log start, retention,
idempotent producers, compaction and the fetch purgatory. Pure: time is an argument."""
import struct

import pytest
from kafka.record.legacy_records import LegacyRecordBatchBuilder

from kafkaemu.storage import compression
from kafkaemu.storage.fetch_purgatory import FetchPurgatory, FetchWaiter
from kafkaemu.storage.log_store import LogStore
from kafkaemu.storage.record_batch import InvalidBatch, build_batch, crc_ok, iter_records, parse_header

NOW = 1_700_000_000_000


def batch(n=3, ts=NOW, codec=0, key=b"k", size=10, **kw):
    return build_batch([(key + b"%d" % i, b"v" * size, [], ts + i) for i in range(n)], codec=codec, **kw)


@pytest.fixture
def store():
    return LogStore()


@pytest.fixture
def log(store):
    return store.create_topic("t", 1).partitions[0]


def offsets(plog):
    return [r.offset for b in plog.batches() for r in iter_records(b)]


def test_offsets_are_assigned_by_rewriting_the_header(log):
    r1 = log.append(batch(3), NOW)
    r2 = log.append(batch(2, codec=compression.GZIP), NOW)
    assert (r1.error, r1.base_offset, r2.base_offset) == ("NONE", 0, 3)
    assert log.high_watermark == 5 and log.log_start_offset == 0
    assert offsets(log) == [0, 1, 2, 3, 4]
    stored = log.batches()[1]
    assert crc_ok(stored) and parse_header(stored).base_offset == 3 and parse_header(stored).partition_leader_epoch == 0


def test_bad_crc_is_corrupt_message_and_nothing_is_appended(log):
    data = bytearray(batch())
    data[-1] ^= 1
    r = log.append(bytes(data), NOW)
    assert r.error == "CORRUPT_MESSAGE" and log.high_watermark == 0


def test_truncated_batch_is_invalid_record_on_v3_plus(log):
    data = batch()
    assert log.append(data[:-4], NOW).error == "INVALID_RECORD"
    assert log.append(data + data, NOW).error == "INVALID_RECORD"  # v3+ allows exactly one batch
    assert log.high_watermark == 0


def test_batch_over_max_message_bytes(store):
    plog = store.create_topic("small", 1, {"max.message.bytes": "200"}).partitions[0]
    r = plog.append(batch(1, size=300), NOW)
    assert r.error == "MESSAGE_TOO_LARGE" and plog.high_watermark == 0
    assert plog.append(batch(1, size=10), NOW).error == "NONE"


def test_nonzero_base_offset_and_control_batches_are_invalid(log):
    assert log.append(batch(base_offset=5), NOW).error == "INVALID_RECORD"
    assert log.append(batch(control=True), NOW).error == "INVALID_RECORD"


def test_zstd_needs_produce_v7(log):
    assert log.append(batch(codec=compression.ZSTD), NOW, produce_version=6).error == "UNSUPPORTED_COMPRESSION_TYPE"
    assert log.append(batch(codec=compression.ZSTD), NOW, produce_version=7).error == "NONE"


@pytest.mark.parametrize("magic", [0, 1])
def test_legacy_message_sets_are_invalid_records(log, magic):
    """ProduceRequest.validateRecords: magic 2 only (Produce v0-2, which sent message sets, are gone)."""
    lb = LegacyRecordBatchBuilder(magic=magic, compression_type=0, batch_size=1 << 20)
    for i in range(4):
        lb.append(i, NOW + i if magic else None, b"k", b"v%d" % i)
    r = log.append(bytes(lb.build()), NOW, produce_version=3)
    assert r.error == "INVALID_RECORD" and "magic version 2" in r.message and log.high_watermark == 0


def test_reads_return_whole_batches_within_limits(log):
    for _ in range(5):
        log.append(batch(2, size=100), NOW)
    size = len(log.batches()[0])
    assert len(log.read(0, 10 * size)) == 5
    assert len(log.read(0, 2 * size)) == 2
    assert len(log.read(0, 2 * size + 1)) == 2
    # offset 3 sits inside the second batch: the read starts at that batch
    assert parse_header(log.read(3, size)[0]).base_offset == 2
    # the first batch is returned even when larger than the limit, unless min_one is off
    assert len(log.read(0, 1)) == 1
    assert log.read(0, 1, min_one=False) == []
    assert log.read(10, 1000) == []


def test_timestamp_lookup_finds_first_record_inside_compressed_batches(log):
    log.append(batch(5, ts=1000, codec=compression.LZ4), NOW)   # 1000..1004 at offsets 0..4
    log.append(batch(5, ts=2000, codec=compression.SNAPPY), NOW)  # 2000..2004 at offsets 5..9
    assert log.offset_for_timestamp(1003)[:2] == (1003, 3)
    assert log.offset_for_timestamp(1500)[:2] == (2000, 5)
    assert log.offset_for_timestamp(2004)[:2] == (2004, 9)
    assert log.offset_for_timestamp(5000) is None
    assert log.offset_for_timestamp(0)[:2] == (1000, 0)
    assert log.max_timestamp_offset()[:2] == (2004, 9)


def test_timestamp_lookup_respects_log_start(log):
    log.append(batch(5, ts=1000), NOW)
    log.delete_records(3)
    assert log.offset_for_timestamp(0)[:2] == (1003, 3)


def test_delete_records_moves_log_start(log):
    for _ in range(3):
        log.append(batch(4), NOW)
    assert log.delete_records(5) == ("NONE", 5)
    assert log.log_start_offset == 5 and log.high_watermark == 12
    assert parse_header(log.batches()[0]).base_offset == 4  # the batch holding offset 5 stays
    assert log.delete_records(2) == ("NONE", 5)  # never moves backwards
    assert log.delete_records(13) == ("OFFSET_OUT_OF_RANGE", -1)
    assert log.delete_records(-1) == ("NONE", 12)
    assert log.batches() == [] and log.size_bytes == 0


def test_retention_ms_drops_old_batches(store):
    plog = store.create_topic("r", 1, {"retention.ms": "1000"}).partitions[0]
    plog.append(batch(2, ts=NOW), NOW)
    plog.append(batch(2, ts=NOW + 5000), NOW)
    # the first batch's newest record is NOW + 1
    assert plog.apply_retention(NOW + 1001) == 0
    assert plog.apply_retention(NOW + 1002) == 1
    assert plog.log_start_offset == 2 and plog.high_watermark == 4
    assert plog.apply_retention(NOW + 7000) == 1
    assert plog.log_start_offset == 4 and plog.batches() == []


def test_retention_bytes_keeps_the_newest(store):
    plog = store.create_topic("rb", 1, {"retention.bytes": "250"}).partitions[0]
    for _ in range(4):
        plog.append(batch(1, size=50), NOW)
    one = len(plog.batches()[0])
    assert one < 250 < 3 * one
    plog.apply_retention(NOW)
    # as Kafka: delete the oldest while what remains stays at least retention.bytes
    assert plog.size_bytes >= 250 > plog.size_bytes - one
    assert plog.log_start_offset == 4 - plog.batch_count


def test_store_tick_runs_retention_on_schedule():
    store = LogStore(retention_check_interval_ms=100)
    plog = store.create_topic("r", 1, {"retention.ms": "10"}).partitions[0]
    store.tick(NOW)
    plog.append(batch(1, ts=NOW), NOW)
    assert store.next_deadline_ms() == NOW + 100
    store.tick(NOW + 50)
    assert plog.log_start_offset == 0
    store.tick(NOW + 100)
    assert plog.log_start_offset == 1


def test_idempotent_duplicates_get_original_offsets(log):
    first = batch(3, producer_id=9, producer_epoch=0, base_sequence=0)
    second = batch(2, producer_id=9, producer_epoch=0, base_sequence=3)
    assert log.append(first, NOW).base_offset == 0
    assert log.append(second, NOW).base_offset == 3
    dup = log.append(first, NOW)
    assert (dup.error, dup.base_offset) == ("NONE", 0)
    assert log.append(second, NOW).base_offset == 3
    assert log.high_watermark == 5


def test_out_of_order_sequence_and_old_epoch(log):
    assert log.append(batch(2, producer_id=9, producer_epoch=1, base_sequence=0), NOW).error == "NONE"
    assert log.append(batch(2, producer_id=9, producer_epoch=1, base_sequence=5), NOW).error == \
        "OUT_OF_ORDER_SEQUENCE_NUMBER"
    assert log.append(batch(2, producer_id=9, producer_epoch=0, base_sequence=2), NOW).error == \
        "INVALID_PRODUCER_EPOCH"
    assert log.append(batch(2, producer_id=9, producer_epoch=2, base_sequence=4), NOW).error == \
        "OUT_OF_ORDER_SEQUENCE_NUMBER"
    assert log.append(batch(2, producer_id=9, producer_epoch=2, base_sequence=0), NOW).error == "NONE"
    assert log.high_watermark == 4


def test_unknown_producer_may_start_anywhere_and_only_five_batches_are_remembered(log):
    seq = 100
    for _ in range(6):
        assert log.append(batch(1, producer_id=4, producer_epoch=0, base_sequence=seq), NOW).error == "NONE"
        seq += 1
    # the oldest of six is no longer cached: re-sending it is out of order, not a duplicate
    assert log.append(batch(1, producer_id=4, producer_epoch=0, base_sequence=100), NOW).error == \
        "OUT_OF_ORDER_SEQUENCE_NUMBER"
    assert log.append(batch(1, producer_id=4, producer_epoch=0, base_sequence=101), NOW).base_offset == 1


def test_sequence_wraps_at_int32_max(log):
    assert log.append(batch(1, producer_id=1, producer_epoch=0, base_sequence=2**31 - 1), NOW).error == "NONE"
    assert log.append(batch(1, producer_id=1, producer_epoch=0, base_sequence=0), NOW).error == "NONE"


def test_log_append_time_topic(store):
    plog = store.create_topic("lat", 1, {"message.timestamp.type": "LogAppendTime"}).partitions[0]
    r = plog.append(batch(2, ts=5), NOW)
    assert r.log_append_time == NOW
    assert {x.timestamp for x in iter_records(plog.batches()[0])} == {NOW}


def test_leader_epoch_end_offsets(log):
    log.append(batch(3), NOW)
    assert log.end_offset_for_epoch(0) == (0, 3)
    log.bump_leader_epoch()
    log.append(batch(2), NOW)
    assert log.end_offset_for_epoch(0) == (0, 3)
    assert log.end_offset_for_epoch(1) == (1, 5)
    assert log.end_offset_for_epoch(2) == (-1, -1)
    assert log.end_offset_for_epoch(-1) == (-1, -1)


def test_compacted_topic_requires_keys_and_keeps_latest_per_key(store):
    plog = store.create_topic("c", 1, {"cleanup.policy": "compact"}).partitions[0]
    r = plog.append(build_batch([(None, b"x", [], NOW)]), NOW)
    assert r.error == "INVALID_RECORD" and r.record_errors[0][0] == 0
    plog.append(build_batch([(b"a", b"1", [], NOW), (b"b", b"1", [], NOW)], codec=compression.GZIP), NOW)
    plog.append(build_batch([(b"a", b"2", [], NOW)]), NOW)
    plog.append(build_batch([(b"c", b"1", [], NOW)]), NOW)
    assert plog.compact() == 1
    recs = [(r.offset, r.key, r.value) for b in plog.batches() for r in iter_records(b)]
    assert recs == [(1, b"b", b"1"), (2, b"a", b"2"), (3, b"c", b"1")]
    assert plog.high_watermark == 4 and all(crc_ok(b) for b in plog.batches())


def test_compaction_drops_whole_batches_whose_records_are_all_superseded(store):
    plog = store.create_topic("c", 1, {"cleanup.policy": "compact"}).partitions[0]
    plog.append(build_batch([(b"a", b"1", [], NOW), (b"b", b"1", [], NOW)]), NOW)   # 0-1: both superseded
    plog.append(build_batch([(b"a", b"2", [], NOW)]), NOW)                          # 2: superseded
    plog.append(build_batch([(b"b", b"2", [], NOW), (b"a", b"3", [], NOW)], codec=compression.GZIP), NOW)
    plog.append(build_batch([(b"c", b"1", [], NOW)]), NOW)                          # the last: never cleaned
    assert plog.compact() == 3
    assert [(r.offset, r.key, r.value) for b in plog.batches() for r in iter_records(b)] == [
        (3, b"b", b"2"), (4, b"a", b"3"), (5, b"c", b"1")]
    assert plog.high_watermark == 6 and plog.batch_store.batch_count == 2


def test_purgatory_completes_on_enough_bytes_or_deadline(store):
    plog = store.create_topic("w", 1).partitions[0]
    purgatory = FetchPurgatory()
    done = []
    waiter = FetchWaiter([plog], min_bytes=200, deadline_ms=NOW + 500, accumulated=0,
                         complete=lambda: done.append("data"))
    purgatory.park(waiter)
    assert purgatory.next_deadline_ms() == NOW + 500
    plog.append(batch(1, size=10), NOW)
    assert done == []
    plog.append(batch(1, size=300), NOW)
    assert done == ["data"] and not plog.waiters and purgatory.next_deadline_ms() is None
    late = FetchWaiter([plog], min_bytes=1, deadline_ms=NOW + 500, accumulated=0, complete=lambda: done.append("late"))
    purgatory.park(late)
    assert purgatory.expire(NOW + 499) == 0
    assert purgatory.expire(NOW + 500) == 1 and done[-1] == "late"
    plog.append(batch(1), NOW)
    assert done.count("late") == 1


def test_trusted_batches_from_the_broker_append(store):
    plog = store.create_topic("__consumer_offsets", 1, internal=True).partitions[0]
    r = plog.append_batch(build_batch([(b"k", b"v", [], NOW)]), NOW)
    assert r.base_offset == 0 and plog.high_watermark == 1


def test_a_coordinators_keyed_batch_is_stored_as_append_batch_would_store_it(store):
    records = [(b"k%d" % i, None if i == 2 else b"v" * (i * 40)) for i in range(4)] + [(None, b"x")]
    built = store.create_topic("__consumer_offsets", 2, internal=True).partitions
    built[0].append_batch(build_batch([(b"first", b"1", [], NOW)]), NOW)
    built[1].append_batch(build_batch([(b"first", b"1", [], NOW)]), NOW)
    built[0].bump_leader_epoch()
    built[1].bump_leader_epoch()
    built[0].append_batch(build_batch([(k, v, [], NOW + 5) for k, v in records]), NOW + 5)
    assert built[1].append_keyed(records, NOW + 5) == 1 and built[1].high_watermark == 6
    assert [bytes(b) for b in built[1].batches()] == [bytes(b) for b in built[0].batches()]
    stored = built[1].batches()[1]
    assert crc_ok(stored) and parse_header(stored).partition_leader_epoch == built[1].leader_epoch


@pytest.mark.parametrize("record", [(b"k", b"v"), (b"key" * 30, b"v" * 300), (b"k", None), (None, b"x" * 9000)])
def test_a_one_record_keyed_batch_is_stored_as_append_batch_would_store_it(store, record):
    built = store.create_topic("__consumer_offsets", 2, internal=True).partitions
    built[0].append_batch(build_batch([(record[0], record[1], [], NOW)]), NOW)
    assert built[1].append_keyed([record], NOW) == 0
    assert [bytes(b) for b in built[1].batches()] == [bytes(b) for b in built[0].batches()]
    assert [(r.key, r.value) for r in iter_records(built[1].batches()[0])] == [record]


def test_a_keyed_batch_of_a_stale_producer_epoch_is_refused_and_not_appended(log):
    log.append_keyed([(b"key", b"offset")], NOW, producer_id=9, producer_epoch=1)
    assert log.open_transactions() == {9: 0} and log.last_stable_offset == 0
    with pytest.raises(InvalidBatch) as refused:
        log.append_keyed([(b"key", b"offset")], NOW, producer_id=9, producer_epoch=0)
    assert refused.value.code_name == "INVALID_PRODUCER_EPOCH" and log.high_watermark == 1


def test_a_keyed_append_wakes_a_long_poll(log):
    purgatory, done = FetchPurgatory(), []
    purgatory.park(FetchWaiter([log], min_bytes=1, deadline_ms=NOW + 500, accumulated=0,
                               complete=lambda: done.append("data")))
    log.append_keyed([(b"k", b"v")], NOW)
    assert done == ["data"]


def test_corrupt_length_field(log):
    data = bytearray(batch())
    struct.pack_into(">i", data, 8, 2)
    assert log.append(bytes(data), NOW).error == "CORRUPT_MESSAGE"


def test_compaction_waits_for_the_dirty_ratio_and_drops_expired_tombstones(store):
    plog = store.create_topic("c2", 1, {"cleanup.policy": "compact", "delete.retention.ms": "1000"}).partitions[0]
    plog.append(build_batch([(b"a", b"1", [], NOW), (b"b", b"1", [], NOW)]), NOW)
    plog.append(build_batch([(b"a", None, [], NOW)]), NOW)      # tombstone for a
    plog.append(build_batch([(b"c", b"1", [], NOW)]), NOW)
    assert plog.compact(NOW) == 1                                  # a=1 goes; the young tombstone stays
    assert plog.compact(NOW + 500) == 0                            # nothing new appended: not dirty enough
    assert plog.compact(NOW + 5000) == 1       # the tombstone is past delete.retention.ms: cleanable (KIP-534)
    keys = [(r.key, r.value) for b in plog.batches() for r in iter_records(b)]
    assert keys == [(b"b", b"1"), (b"c", b"1")]


def test_store_tick_runs_the_cleaner_on_its_backoff():
    store = LogStore(cleaner_backoff_ms=15_000)
    plog = store.create_topic("cc", 1, {"cleanup.policy": "compact"}).partitions[0]
    store.tick(NOW)
    for v in (b"1", b"2", b"3"):
        plog.append(build_batch([(b"k", v, [], NOW)]), NOW)
    store.tick(NOW + 14_999)
    assert plog.batch_count == 3
    store.tick(NOW + 15_000)
    assert [r.value for b in plog.batches() for r in iter_records(b)] == [b"3"]


@pytest.mark.parametrize("magic", [1, 2])
def test_mutated_input_is_answered_never_raised(store, magic):
    import random
    rng = random.Random(1234 + magic)
    if magic == 2:
        seed_bytes = build_batch([(b"k%d" % i, b"v" * 30, [("h", b"x")], NOW) for i in range(4)],
                                 codec=compression.GZIP)
    else:
        lb = LegacyRecordBatchBuilder(magic=1, compression_type=0, batch_size=1 << 20)
        for i in range(3):
            lb.append(i, NOW, b"k", b"v%d" % i)
        seed_bytes = bytes(lb.build())
    plog = store.create_topic("fuzz%d" % magic, 1, {"cleanup.policy": "compact"}).partitions[0]
    for _ in range(400):
        data = bytearray(seed_bytes)
        for _ in range(rng.randint(1, 4)):
            data[rng.randrange(len(data))] = rng.randrange(256)
        if rng.random() < 0.3:
            data = data[:rng.randrange(len(data))]
        for version in (3, 9):
            result = plog.append(bytes(data), NOW, produce_version=version)
            assert result.error in ("NONE", "CORRUPT_MESSAGE", "INVALID_RECORD", "MESSAGE_TOO_LARGE",
                                    "UNSUPPORTED_COMPRESSION_TYPE", "OUT_OF_ORDER_SEQUENCE_NUMBER",
                                    "INVALID_PRODUCER_EPOCH")


def test_records_whose_fields_do_not_decode_are_skipped_by_readers_not_fatal(log):
    import crc32c
    data = bytearray(batch(3))
    # the first record's key length (after length, attributes, timestamp and offset deltas) now
    # runs past the record; the records' framing still holds, which is what append walks
    assert data[61 + 4] == 4                        # zigzag of the key's 2 bytes
    data[61 + 4] = 0x7E
    struct.pack_into(">I", data, 17, crc32c.crc32c(bytes(data[21:])))
    assert log.append(bytes(data), NOW).error == "NONE"
    log.append(batch(2, ts=NOW + 10), NOW)
    assert log.offset_for_timestamp(NOW)[:2] == (NOW + 10, 3)


def test_purgatory_tells_the_server_about_parked_fetches(store):
    plog = store.create_topic("hook", 1).partitions[0]
    purgatory = FetchPurgatory()
    seen, done = [], []
    purgatory.on_park = lambda waiter, max_wait_ms: seen.append((waiter, max_wait_ms))
    waiter = FetchWaiter([plog], 1, NOW + 700, 0, lambda: done.append(1))
    purgatory.park(waiter, 700)
    assert seen == [(waiter, 700)]
    purgatory.complete(waiter)   # what a server's real-time timer calls
    purgatory.complete(waiter)
    assert done == [1] and purgatory.next_deadline_ms() is None
