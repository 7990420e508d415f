"""Segment files with a data directory, as Kafka's log: sparse offset and time indexes, rolls at
segment.bytes, reads across segments, retention deleting whole segments, and restarts that read
the indexes and the tail (the recovery point, producer snapshots) instead of every byte."""
import os

import pytest

from kafkaemu.storage import segment
from kafkaemu.storage.data_dir import SEGMENT
from kafkaemu.storage.log_store import LogStore
from kafkaemu.storage.offset_index import OffsetIndex, TimeIndex
from kafkaemu.storage.record_batch import build_batch, iter_records

from tests.storage.disk import open_store

NOW = 1_700_000_000_000
SMALL = {"segment.bytes": "1000", "index.interval.bytes": "100"}


def values(plog):
    return [(r.offset, r.value) for b in plog.batches() for r in iter_records(b)]


def fill(plog, n, ts=NOW, size=40):
    for i in range(n):
        plog.append(build_batch([(b"k%d" % i, b"v%d-" % i + b"x" * size, [], ts + i)]), NOW)


def segment_files(path, suffix=".log"):
    return sorted(f for f in os.listdir(path) if f.endswith(suffix))


def test_offset_and_time_index_lookups_and_files(tmp_path):
    idx = OffsetIndex(str(tmp_path / "a.index"), 100)
    for off, pos in [(103, 0), (110, 500), (120, 1000)]:
        idx.append(off, pos)
    assert [idx.lookup(o) for o in (99, 103, 109, 110, 150)] == [0, 0, 0, 500, 1000]
    again = OffsetIndex(idx.path, 100)
    assert again.load() and list(again.keys) == [3, 10, 20] and list(again.values) == [0, 500, 1000]
    assert (tmp_path / "a.index").read_bytes()[:8] == (3).to_bytes(4, "big") + (0).to_bytes(4, "big")
    tidx = TimeIndex(str(tmp_path / "a.timeindex"), 100)
    tidx.maybe_append(NOW, 103)
    tidx.maybe_append(NOW, 105)            # not a larger timestamp: no entry
    tidx.maybe_append(NOW + 50, 110)
    assert len(tidx) == 2 and tidx.lookup(NOW - 1) == 100 and tidx.lookup(NOW + 10) == 103
    t2 = TimeIndex(tidx.path, 100)
    assert t2.load() and t2.last() == (NOW + 50, 110)


def test_appends_roll_segments_and_reads_cross_them(tmp_path):
    store = open_store(tmp_path)
    plog = store.create_topic("t", 1, SMALL).partitions[0]
    fill(plog, 60)
    files = segment_files(tmp_path / "t-0")
    assert len(files) > 3 and files[0] == SEGMENT
    assert all(os.path.getsize(tmp_path / "t-0" / f) <= 1000 for f in files)
    bases = [int(f[:20]) for f in files]
    assert bases == sorted(bases) and len(segment_files(tmp_path / "t-0", ".index")) == len(files)
    assert values(plog) == [(i, b"v%d-" % i + b"x" * 40) for i in range(60)]
    # a read from the middle of a segment, across the next ones, whole batches within max_bytes
    got = plog.read(bases[1] + 1, 700)
    offsets = [r.offset for b in got for r in iter_records(bytes(b))]
    assert offsets[0] == bases[1] + 1 and offsets == list(range(offsets[0], offsets[0] + len(offsets)))
    assert sum(len(b) for b in got) <= 700 and len(got) > 1
    assert plog.read(59, 1)[0] and plog.read(60, 1000) == []
    assert plog.offset_for_timestamp(NOW + 33)[:2] == (NOW + 33, 33)
    assert plog.max_timestamp_offset()[:2] == (NOW + 59, 59)


def test_retention_deletes_whole_segments_by_time_and_bytes(tmp_path):
    store = open_store(tmp_path)
    plog = store.create_topic("t", 1, dict(SMALL, **{"retention.ms": "1000"})).partitions[0]
    fill(plog, 30, ts=NOW)
    fill(plog, 30, ts=NOW + 5000)
    before = segment_files(tmp_path / "t-0")
    assert plog.apply_retention(NOW + 5500) >= 1
    after = segment_files(tmp_path / "t-0")
    first = int(after[0][:20])
    assert plog.log_start_offset == first and 0 < first <= 30 and len(after) < len(before)
    assert values(plog)[0][0] == first               # whole segments go: the first one left starts the log
    # retention.bytes: keep deleting oldest segments while the log exceeds it by a segment's size
    store.get("t").configs.update({"retention.ms": "-1", "retention.bytes": "1500"})
    plog.apply_retention(NOW + 5500)
    assert plog.size_bytes <= 1500 + 1000 and plog.log_start_offset > first
    # every segment due: the active one is rolled first, the log keeps its end
    store.get("t").configs.update({"retention.ms": "0", "retention.bytes": "-1"})
    plog.apply_retention(NOW + 100_000)
    assert plog.size_bytes == 0 and plog.log_start_offset == plog.high_watermark == 60
    assert segment_files(tmp_path / "t-0") == [f"{60:020d}.log"]
    fill(plog, 1)
    assert values(open_store(tmp_path).get("t").partitions[0]) == [(60, b"v0-" + b"x" * 40)]


def test_delete_records_keeps_bytes_until_whole_segments_lie_below(tmp_path):
    store = open_store(tmp_path)
    plog = store.create_topic("t", 1, SMALL).partitions[0]
    fill(plog, 40)
    files = segment_files(tmp_path / "t-0")
    second = int(files[1][:20])
    plog.delete_records(second - 1)
    assert segment_files(tmp_path / "t-0") == files              # the first segment still holds an offset >= the start
    plog.delete_records(second + 1)
    assert segment_files(tmp_path / "t-0") == files[1:]
    assert values(plog)[0][0] == second + 1                      # from the batch holding the start
    again = open_store(tmp_path).get("t").partitions[0]
    assert again.log_start_offset == second + 1 and again.high_watermark == 40


def _checkpointed_store(tmp_path):
    store = open_store(tmp_path)
    plog = store.create_topic("t", 1, SMALL).partitions[0]
    fill(plog, 60)
    return store, plog


def _bytes_read(plog):
    return [seg.bytes_read for seg in plog.batch_store.segments]


def test_a_clean_restart_reads_no_sealed_segment_bytes(tmp_path):
    store, plog = _checkpointed_store(tmp_path)
    n = len(plog.batch_store.segments)
    store.persistence.close()
    again = open_store(tmp_path).get("t").partitions[0]
    assert _bytes_read(again)[:-1] == [0] * (n - 1)     # sealed segments: indexes only
    assert _bytes_read(again)[-1] <= 1000                # the active segment's tail after its last index entry
    assert again.high_watermark == 60 and values(again) == values(plog)


def test_an_unclean_restart_recovers_only_after_the_recovery_point(tmp_path):
    store, plog = _checkpointed_store(tmp_path)
    store.persistence.checkpoint()                 # as the periodic checkpoint does
    point = plog.high_watermark
    fill(plog, 30)                                 # then killed: no clean shutdown
    bases = [seg.base for seg in plog.batch_store.segments]
    again = open_store(tmp_path).get("t").partitions[0]
    read = dict(zip(bases, _bytes_read(again)))
    below = [b for i, b in enumerate(bases[:-1]) if bases[i + 1] <= point]
    assert below and all(read[b] == 0 for b in below)
    after = [b for b in bases if b > point]
    assert after and all(read[b] > 0 for b in after)
    assert again.high_watermark == 90 and [o for o, _ in values(again)] == list(range(90))


def test_a_corrupted_index_is_rebuilt(tmp_path):
    store, plog = _checkpointed_store(tmp_path)
    expected = values(plog)
    store.persistence.close()
    index = tmp_path / "t-0" / SEGMENT.replace(".log", ".index")
    index.write_bytes((5).to_bytes(4, "big") + (999_999).to_bytes(4, "big"))   # points past the segment
    again = open_store(tmp_path).get("t").partitions[0]
    assert values(again) == expected
    assert again.read(3, 100)[0] is not None
    assert OffsetIndex(str(index), 0).load() and os.path.getsize(index) != 8


def test_an_older_single_file_data_dir_loads_and_gets_indexes(tmp_path):
    store = LogStore()
    plog = store.create_topic("t", 1).partitions[0]
    fill(plog, 200)
    (tmp_path / "t-0").mkdir()
    (tmp_path / "t-0" / SEGMENT).write_bytes(b"".join(bytes(b) for b in plog.batches()))
    meta = store.get("t")
    (tmp_path / "topics.json").write_text(
        '{"topics": [{"name": "t", "id": "%s", "partitions": 1, "configs": {}, "internal": false}]}'
        % meta.topic_id.hex())
    loaded = open_store(tmp_path).get("t").partitions[0]
    assert values(loaded) == values(plog) and loaded.high_watermark == 200
    assert (tmp_path / "t-0" / SEGMENT.replace(".log", ".index")).stat().st_size > 0
    assert loaded.offset_for_timestamp(NOW + 150)[:2] == (NOW + 150, 150)


def _idempotent(seq, value=b"p"):
    return build_batch([(None, value, [], NOW)], producer_id=7, producer_epoch=0, base_sequence=seq)


def test_an_acked_idempotent_batch_is_a_duplicate_after_clean_and_unclean_restarts(tmp_path):
    store = open_store(tmp_path)
    plog = store.create_topic("t", 1, SMALL).partitions[0]
    for seq in range(40):                          # rolls write producer snapshots
        plog.append(_idempotent(seq), NOW)
    # killed (no clean shutdown, no checkpoint): the snapshot of the last roll plus a replay
    again = open_store(tmp_path).get("t").partitions[0]
    dup = again.append(_idempotent(39), NOW)
    assert dup.base_offset == 39 and again.high_watermark == 40 and again.duplicate_batches == 1
    assert again.append(_idempotent(41), NOW).error == "OUT_OF_ORDER_SEQUENCE_NUMBER"
    # a clean shutdown: the snapshot at the log end, nothing replayed
    store2 = open_store(tmp_path)
    store2.persistence.close()
    third = open_store(tmp_path).get("t").partitions[0]
    assert third.append(_idempotent(39), NOW).base_offset == 39 and third.duplicate_batches == 1
    assert third.append(_idempotent(40), NOW).base_offset == 40


def test_aborted_transactions_and_open_ones_survive_a_restart(tmp_path):
    store = open_store(tmp_path)
    plog = store.create_topic("t", 1, SMALL).partitions[0]
    txn = build_batch([(None, b"t", [], NOW)], producer_id=9, producer_epoch=0, base_sequence=0, transactional=True)
    plog.append(txn, NOW)
    fill(plog, 30)
    plog.append_control_batch(9, 0, False, 0, NOW)
    txn2 = build_batch([(None, b"u", [], NOW)], producer_id=9, producer_epoch=0, base_sequence=1, transactional=True)
    open_at = plog.append(txn2, NOW).base_offset
    again = open_store(tmp_path).get("t").partitions[0]
    assert [(a.producer_id, a.first_offset, a.last_offset) for a in again.aborted_transactions(0, 100)] == [(9, 0, 31)]
    assert again.open_transactions() == {9: open_at} and again.last_stable_offset == open_at
    store.persistence.close()
    third = open_store(tmp_path).get("t").partitions[0]
    assert len(third.aborted_transactions(0, 100)) == 1 and third.open_transactions() == {9: open_at}


@pytest.mark.parametrize("scan_chunk,tail", [(1 << 16, 0), (7, 0), (1 << 16, 3000), (1 << 16, 1 << 30)],
                         ids=["files", "headers-cut-by-reads", "a-small-tail-in-memory", "all-in-memory"])
def test_reads_from_segments_match_reads_from_memory(tmp_path, monkeypatch, scan_chunk, tail):
    import random
    monkeypatch.setattr(segment, "SCAN_CHUNK", scan_chunk)
    rnd = random.Random(5)
    memory = LogStore().create_topic("t", 1, SMALL).partitions[0]
    plog = open_store(tmp_path, tail).create_topic("t", 1, SMALL).partitions[0]
    for i in range(120):
        records = [(b"k", b"v" * rnd.randrange(1, 300), [], NOW + i) for _ in range(rnd.randrange(1, 4))]
        for log in (memory, plog):
            log.append(build_batch(records), NOW)
    for _ in range(300):
        offset = rnd.randrange(0, memory.high_watermark + 1)
        max_bytes = rnd.choice([0, 1, 100, 700, 1500, 5000, 1 << 30])
        max_offset = rnd.choice([None, rnd.randrange(0, memory.high_watermark + 1)])
        min_one = rnd.random() < 0.8
        expect = [bytes(b) for b in memory.read(offset, max_bytes, min_one, max_offset)]
        assert [bytes(b) for b in plog.read(offset, max_bytes, min_one, max_offset)] == expect


def test_compaction_rewrites_sealed_segments_and_survives_a_restart(tmp_path):
    store = open_store(tmp_path)
    plog = store.create_topic("c", 1, dict(SMALL, **{"cleanup.policy": "compact"})).partitions[0]
    for i in range(60):
        plog.append(build_batch([(b"k%d" % (i % 5), b"v%d" % i, [], NOW + i)]), NOW)
    before = segment_files(tmp_path / "c-0")
    assert len(before) > 3
    assert plog.compact(NOW, force=True) == 55
    expected = [(55 + j, b"v%d" % (55 + j)) for j in range(5)]
    assert values(plog) == expected
    assert not [f for f in os.listdir(tmp_path / "c-0") if f.endswith(".cleaned")]
    assert plog.read(0, 1 << 20) and plog.offset_for_timestamp(NOW)[:2] == (NOW + 55, 55)
    plog.append(build_batch([(b"k0", b"new", [], NOW)]), NOW)
    again = open_store(tmp_path).get("c").partitions[0]
    assert values(again) == expected + [(60, b"new")] and again.high_watermark == 61


def test_segment_ms_rolls_a_segment_whose_first_batch_is_old_enough(tmp_path):
    store = open_store(tmp_path)
    plog = store.create_topic("t", 1, {"segment.ms": "1000"}).partitions[0]
    plog.append(build_batch([(None, b"a", [], NOW)]), NOW)
    plog.append(build_batch([(None, b"b", [], NOW + 500)]), NOW + 1000)
    assert segment_files(tmp_path / "t-0") == [SEGMENT]
    plog.append(build_batch([(None, b"c", [], NOW + 1001)]), NOW + 1001)
    assert segment_files(tmp_path / "t-0") == [SEGMENT, f"{2:020d}.log"]
    again = open_store(tmp_path).get("t").partitions[0]     # the rolling time is read back from the file
    again.append(build_batch([(None, b"d", [], NOW + 1002)]), NOW + 2002)
    assert segment_files(tmp_path / "t-0")[-1] == f"{3:020d}.log"
    assert [v for _, v in values(again)] == [b"a", b"b", b"c", b"d"]


def test_open_segment_files_are_bounded_and_reopened_when_used(tmp_path, monkeypatch):
    monkeypatch.setattr(segment, "MAX_OPEN_FILES", 2)
    store = open_store(tmp_path)
    plog = store.create_topic("t", 1, SMALL).partitions[0]
    fill(plog, 60)
    again = open_store(tmp_path).get("t").partitions[0]
    assert values(again) == values(plog)            # every segment read, two files open at most
    assert sum(seg._fd is not None for seg in again.batch_store.segments) <= 2
    fill(again, 5)                                   # the active segment's file may have been closed: reopened
    assert values(again)[-1][0] == 64


def test_the_tail_in_memory_stays_within_its_budget_and_serves_recent_reads(tmp_path):
    store = open_store(tmp_path, tail_cache_bytes=4000)
    logs = store.create_topic("t", 3, SMALL).partitions
    for plog in logs:
        fill(plog, 40)
    budget = store.persistence.tail_budget
    assert 0 < budget.used <= 4000 and budget.used == sum(p.batch_store.tail.size for p in logs)
    last = logs[-1]
    before = sum(seg.bytes_read for seg in last.batch_store.segments)
    assert [r.offset for b in last.read(39, 1000) for r in iter_records(b)] == [39]
    assert sum(seg.bytes_read for seg in last.batch_store.segments) == before     # answered from memory
    last.compact(NOW, force=True)                                              # not compacted: nothing changes
    logs[0].delete_records(40)
    logs[0].apply_retention(NOW)
    assert budget.used == sum(p.batch_store.tail.size for p in logs)
