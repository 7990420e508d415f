"""Storage faults a data directory meets, each handled as Kafka handles it: a full disk (the failed
write is cut back and answered KAFKA_STORAGE_ERROR, appends resume when space is back), a corrupt
recovery-point checkpoint or log-start file (reset, the log recovered), a topics.json that
cannot be written (written at the next checkpoint), a truncated or missing topics.json (topics
found from their directories), garbage inside an index (sanity check, rebuild), a batch
larger than segment.bytes (RECORD_LIST_TOO_LARGE) and a log start past the log end (clamped)."""
import os

import pytest
from structlog.testing import capture_logs

from kafkaemu.storage.log_store import LogStore
from kafkaemu.storage.record_batch import build_batch, iter_records

from tests.storage.disk import fill, open_store, small_tmpfs

NOW = 1_700_000_000_000


def values(plog):
    return [r.value for b in plog.batches() for r in iter_records(b)]


def batch(i: int, size: int = 100):
    return build_batch([(b"k%d" % i, b"v%06d" % i + b"." * size, [], NOW)])


@pytest.fixture
def small_disk(tmp_path):
    """A 512 KiB tmpfs (root only): writes past it fail with ENOSPC."""
    with small_tmpfs(tmp_path, "512k") as mount:
        yield mount


def test_a_full_disk_answers_storage_error_keeps_the_log_whole_and_takes_writes_when_space_is_back(small_disk):
    data = small_disk / "data"
    store = open_store(data)
    plog = store.create_topic("full", 1, {"segment.bytes": "65536", "index.interval.bytes": "256"}).partitions[0]
    acked = []
    for i in range(20):
        assert plog.append(batch(i), NOW).error == "NONE"
        acked.append(i)
    fill(small_disk / "filler")
    failures = 0
    for i in range(20, 400):   # segments roll, index entries and snapshots fail too: none raises
        result = plog.append(batch(i, 700), NOW)
        if result.error == "NONE":
            acked.append(i)
        else:
            assert result.error == "KAFKA_STORAGE_ERROR" and result.message
            failures += 1
    assert failures
    store.tick(NOW)                   # the periodic checkpoint on a full disk: logged, no raise
    store.persistence.checkpoint(force=True)
    segments = sorted(f for f in os.listdir(data / "full-0") if f.endswith(".log"))
    on_disk = sum(os.path.getsize(data / "full-0" / f) for f in segments)
    assert on_disk == plog.size_bytes   # nothing of a failed write stayed in a file
    os.unlink(small_disk / "filler")
    for i in range(400, 420):
        assert plog.append(batch(i), NOW).error == "NONE"
        acked.append(i)
    expected = [b"v%06d" % i for i in acked]
    assert [v[:7] for v in values(plog)] == expected
    # a restart without a clean shutdown (as after a kill), then a clean one: every acked record
    again = open_store(data)
    assert [v[:7] for v in values(again.get("full").partitions[0])] == expected
    again.persistence.close()
    assert [v[:7] for v in values(open_store(data).get("full").partitions[0])] == expected


def written_store(path, n=30):
    store = open_store(path)
    plog = store.create_topic("t", 1, {"segment.bytes": "2048", "index.interval.bytes": "128"}).partitions[0]
    for i in range(n):
        assert plog.append(batch(i), NOW).error == "NONE"
    store.persistence.checkpoint(force=True)
    return store


@pytest.mark.parametrize("garbage", [b"\xff\xfe\x00garbage\x81\n", b"0\n7\nt 0 12\n", b"0\n1\nt zero 3\n", b"0"])
def test_a_corrupt_recovery_point_checkpoint_is_reset_and_the_log_recovered(tmp_path, garbage):
    written_store(tmp_path)
    (tmp_path / "recovery-point-offset-checkpoint").write_bytes(garbage)
    with capture_logs() as logs:
        store = open_store(tmp_path)
    assert [v[:7] for v in values(store.get("t").partitions[0])] == [b"v%06d" % i for i in range(30)]
    assert any(e["event"] == "checkpoint_unreadable" for e in logs)


@pytest.mark.parametrize("garbage", [b"\xff\xfe", b"five\n", b"-3\n"])
def test_an_unreadable_log_start_file_starts_the_log_at_its_first_segment(tmp_path, garbage):
    written_store(tmp_path)
    (tmp_path / "t-0" / "log-start-offset").write_bytes(garbage)
    (tmp_path / "t-0" / "leader-epoch-checkpoint").write_bytes(garbage)
    plog = open_store(tmp_path).get("t").partitions[0]
    assert plog.log_start_offset == 0 and plog.high_watermark == 30 and len(values(plog)) == 30


def test_a_truncated_topics_file_is_recovered_from_the_partition_directories(tmp_path):
    store = written_store(tmp_path)
    store.create_topic("other", 3)
    store.get("other").partitions[2].append(batch(7), NOW)
    meta = (tmp_path / "topics.json").read_bytes()
    (tmp_path / "topics.json").write_bytes(meta[:len(meta) // 2])
    with capture_logs() as logs:
        again = open_store(tmp_path)
    assert [v[:7] for v in values(again.get("t").partitions[0])] == [b"v%06d" % i for i in range(30)]
    assert len(again.get("other").partitions) == 3
    assert values(again.get("other").partitions[2])[0][:7] == b"v000007"
    assert any(e["event"] == "topics_file_unreadable" for e in logs)


def test_a_missing_topics_file_beside_partition_directories_is_rebuilt_from_them(tmp_path):
    """topics.json gone (as when its first write met a full disk and a kill followed) while the
    partition directories hold records: the topics are found from the directories, as for an
    unreadable file, rather than started without them; the rebuilt file is written at once."""
    store = written_store(tmp_path)
    store.create_topic("other", 3)
    store.get("other").partitions[2].append(batch(7), NOW)
    os.unlink(tmp_path / "topics.json")
    with capture_logs() as logs:
        again = open_store(tmp_path)
    assert [v[:7] for v in values(again.get("t").partitions[0])] == [b"v%06d" % i for i in range(30)]
    assert len(again.get("other").partitions) == 3
    assert values(again.get("other").partitions[2])[0][:7] == b"v000007"
    (missing,) = [e for e in logs if e["event"] == "topics_file_missing"]
    assert missing["topics"] == ["other", "t"]
    assert sorted(open_store(tmp_path).topics) == ["other", "t"]   # from topics.json, written again


def test_a_new_data_directory_without_topics_file_starts_empty_without_a_warning(tmp_path):
    (tmp_path / "not-a-partition").mkdir()
    (tmp_path / "notes-1").write_bytes(b"a file, not a partition directory")
    with capture_logs() as logs:
        store = open_store(tmp_path)
    assert store.topics == {} and [e for e in logs if e["log_level"] == "warning"] == []


def test_garbage_inside_an_index_fails_the_sanity_check_and_the_index_is_rebuilt(tmp_path):
    store = written_store(tmp_path, 200)
    store.persistence.close()
    d = tmp_path / "t-0"
    first = sorted(f for f in os.listdir(d) if f.endswith(".index"))[0]
    data = bytearray((d / first).read_bytes())
    assert len(data) >= 32
    # entries that go backwards and point far past the file, the last one left sane
    data[8:16] = (5).to_bytes(4, "big") + (10_000_000).to_bytes(4, "big")
    data[16:24] = (1).to_bytes(4, "big") + (0xFFFFFF00).to_bytes(4, "big")   # a negative position
    (d / first).write_bytes(bytes(data))
    plog = open_store(tmp_path).get("t").partitions[0]
    expected = [b"v%06d" % i for i in range(200)]
    for offset in range(200):   # a fetch of every range is served
        got = [r.value[:7] for b in plog.read(offset, 1 << 20) for r in iter_records(b)]
        assert got and got[0] <= expected[offset] and expected[offset] in got


def test_a_batch_larger_than_segment_bytes_is_record_list_too_large(tmp_path):
    for store in (LogStore(), open_store(tmp_path)):
        plog = store.create_topic("small", 1, {"segment.bytes": "1024"}).partitions[0]
        result = plog.append(batch(1, 2000), NOW)
        assert result.error == "RECORD_LIST_TOO_LARGE"
        assert "exceeds the maximum configured segment size of 1024" in result.message
        assert plog.high_watermark == 0 and plog.append(batch(2, 100), NOW).error == "NONE"


def test_a_log_start_past_the_log_end_is_clamped(tmp_path):
    written_store(tmp_path, 10)
    (tmp_path / "t-0" / "log-start-offset").write_bytes(b"9000000000000000000\n9000000000000000000\n")
    plog = open_store(tmp_path).get("t").partitions[0]
    assert plog.high_watermark == 10 and plog.log_start_offset == 10
    assert plog.append(batch(10), NOW).base_offset == 10


def test_an_abort_marker_whose_index_entry_waits_for_space_is_not_lost(small_disk):
    data = small_disk / "data"
    store = open_store(data)
    plog = store.create_topic("txn", 1).partitions[0]
    txn = build_batch([(b"k", b"aborted", [], NOW)], producer_id=7, producer_epoch=0, base_sequence=0,
                      transactional=True)
    assert plog.append(txn, NOW).error == "NONE"
    assert os.path.getsize(data / "txn-0" / "00000000000000000000.log") % 4096 < 3000   # room in its last page
    fill(small_disk / "filler")
    with capture_logs() as logs:
        plog.append_control_batch(7, 0, False, 0, NOW)   # the marker fits its page; a new .txnindex does not
    assert [e for e in logs if e["event"] == "txn_index_not_written"]
    assert [a.producer_id for a in plog.aborted_transactions(0, 10)] == [7]
    store.persistence.checkpoint(force=True)              # no snapshot goes past the unindexed abort
    os.unlink(small_disk / "filler")
    store.persistence.checkpoint(force=True)              # written now
    again = open_store(data).get("txn").partitions[0]
    assert [a.producer_id for a in again.aborted_transactions(0, 10)] == [7]
    assert again.high_watermark == 2 and again.last_stable_offset == 2


def test_a_topic_change_a_full_disk_refused_is_written_at_the_next_checkpoint_with_room(small_disk):
    data = small_disk / "data"
    store = open_store(data)
    store.create_topic("t", 1)
    store.tick(NOW)
    store.tick(NOW + 1)                    # the first checkpoint; the next is due 5 s later
    fill(small_disk / "filler")
    with capture_logs() as logs:
        store.alter_topic_configs("t", {"retention.ms": "1000"})
        store.tick(NOW + 5001)             # still full: tried again, logged again
    assert [e["file"] for e in logs if e["event"] == "data_dir_write_failed"] == ["topics.json"] * 2
    assert b"retention.ms" not in (data / "topics.json").read_bytes()   # the file as it was, whole
    os.unlink(small_disk / "filler")
    store.tick(NOW + 10_001)               # no other change to the topics: the checkpoint writes it
    assert open_store(data).get("t").configs == {"retention.ms": "1000"}


def test_tombstones_kept_before_a_restart_still_go_after_delete_retention(tmp_path):
    store = open_store(tmp_path)
    plog = store.create_topic("c", 1, {"cleanup.policy": "compact", "delete.retention.ms": "1000"}).partitions[0]
    plog.append(build_batch([(b"a", b"1", [], NOW), (b"b", b"1", [], NOW)]), NOW)
    plog.append(build_batch([(b"a", None, [], NOW)]), NOW)
    plog.append(build_batch([(b"c", b"1", [], NOW)]), NOW)
    assert plog.compact(NOW) == 1                  # a=1 goes, the young tombstone stays
    store.persistence.close()
    again = open_store(tmp_path).get("c").partitions[0]
    assert again.compact(NOW + 5000) == 1          # past delete.retention.ms: cleaned without new writes
    assert [(r.key, r.value) for b in again.batches() for r in iter_records(b)] == [(b"b", b"1"), (b"c", b"1")]
