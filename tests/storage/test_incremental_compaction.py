"""The log cleaner a budget of batches per tick: a compaction split over many ticks leaves exactly
the log one whole pass does, whatever happens to the log meanwhile (appends, DeleteRecords,
retention, its topic deleted and made again, a snapshot restore). Pure: a manual clock, counted
batches, no timing."""
import random

import pytest

from kafkaemu.storage import compression
from kafkaemu.storage.compaction import Budget
from kafkaemu.storage.data_dir import DataDir
from kafkaemu.storage.log_store import LogStore
from kafkaemu.storage.record_batch import build_batch, iter_records, parse_header

NOW = 1_700_000_000_000
RETENTION = 60_000   # delete.retention.ms
COMPACT = {"cleanup.policy": "compact", "delete.retention.ms": str(RETENTION)}
SMALL_SEGMENTS = {"segment.bytes": "2000", "index.interval.bytes": "100"}


def fill(plog, seed: int, n: int = 120) -> None:
    """A varied log: keys overwritten in batches of one to four records (some compressed),
    tombstones older and younger than delete.retention.ms, committed and aborted transactions with
    their markers, and (from ``seed`` 2 on) a transaction left open near the end, which bounds the
    cleaning at the last stable offset."""
    rnd = random.Random(seed)
    seqs: dict[int, int] = {}
    open_pid = None
    for i in range(n):
        pick = rnd.random()
        pid = 1000 + i
        if pick < 0.15:    # a transaction: committed or aborted
            seqs[pid] = 0
            for _ in range(rnd.randint(1, 3)):
                b = _batch(rnd, i, producer_id=pid, base_sequence=seqs[pid], transactional=True)
                assert plog.append(b, NOW).error == "NONE"
                seqs[pid] += parse_header(b).records_count
            plog.append_control_batch(pid, 0, rnd.random() < 0.5, 0, NOW)
        elif pick < 0.18 and seed >= 2 and open_pid is None and i > n * 2 // 3:
            open_pid = pid
            plog.append(_batch(rnd, i, producer_id=pid, base_sequence=0, transactional=True), NOW)
        else:
            plog.append(_batch(rnd, i), NOW)


def _batch(rnd, i: int, **kw):
    old = NOW - 10 * RETENTION
    records = []
    for j in range(rnd.randint(1, 4)):
        key = b"k%d" % rnd.randrange(12)
        value = None if rnd.random() < 0.2 else b"v%d.%d" % (i, j)
        ts = old + i if rnd.random() < 0.5 else NOW + i
        records.append((key, value, [], ts))
    codec = compression.GZIP if rnd.random() < 0.2 else 0
    return build_batch(records, codec=codec, **kw)


def contents(plog) -> list:
    """Every batch: its offsets, kind and records (offset, key, value); and the log start."""
    out = []
    for b in plog.batches():
        b = bytes(b)
        h = parse_header(b)
        out.append((h.base_offset, h.last_offset, h.is_control, h.is_transactional,
                    [(r.offset, r.key, r.value) for r in iter_records(b)]))
    return [plog.log_start_offset, plog.high_watermark, out]


def compacted_at_once(seed: int, after=lambda plog: None):
    """The log of ``fill(seed)`` after ``after`` and one whole cleaning at NOW."""
    plog = LogStore().create_topic("c", 1, COMPACT).partitions[0]
    fill(plog, seed)
    after(plog)
    plog.compact(NOW)
    return plog


def started(budget_batches: int, configs=COMPACT, store=None):
    """A store whose cleaner is due at NOW (its schedule started a backoff earlier)."""
    store = store or LogStore(cleaner_backoff_ms=1000, cleaner_budget=Budget(budget_batches, 1 << 40))
    store.tick(NOW - 1000)
    plog = store.create_topic("c", 1, configs).partitions[0]
    return store, plog


def run_cleaner(store, now=NOW, during=None, budget=None) -> int:
    """Tick at ``now`` until the cleaner's pass ends (``during(tick number)`` before each tick);
    checks the next tick is asked for at once while the pass has work left and that no tick reads
    more batches than ``budget``. Returns the ticks taken."""
    ticks = 0
    while True:
        if during is not None:
            during(ticks)
        read = store.cleaner_batches_read
        store.tick(now)
        ticks += 1
        if budget is not None:
            assert store.cleaner_batches_read - read <= budget
        if store.next_deadline_ms() != now:
            assert store.next_deadline_ms() == now + store.cleaner_backoff_ms
            return ticks
        assert ticks < 10_000


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("budget", [1, 2, 7, 50])
def test_a_cleaning_split_over_ticks_leaves_the_log_of_one_whole_pass(seed, budget):
    store, plog = started(budget)
    fill(plog, seed)
    before = contents(plog)
    ticks = run_cleaner(store, budget=budget)
    expected = compacted_at_once(seed)
    assert contents(plog) == contents(expected) != before
    for ts in (NOW - 10 * RETENTION, NOW - 10 * RETENTION + 50, NOW, NOW + 60, NOW + 119, NOW + 500):
        assert plog.offset_for_timestamp(ts) == expected.offset_for_timestamp(ts)
    assert plog.tombstones_due_ms == expected.tombstones_due_ms
    assert plog._clean_bytes == expected._clean_bytes == plog.size_bytes
    # every batch below the bound is read twice (keys, then cleaning), a budget's worth a tick
    assert ticks >= store.cleaner_batches_read // budget > 1


def test_a_budget_reaching_the_whole_log_cleans_in_one_tick():
    store, plog = started(10_000)
    fill(plog, 3)
    assert run_cleaner(store) == 1
    assert contents(plog) == contents(compacted_at_once(3))


def test_the_cleaner_visits_every_partition_within_the_budget_per_tick():
    store = LogStore(cleaner_backoff_ms=1000, cleaner_budget=Budget(5, 1 << 40))
    store.tick(NOW - 1000)
    logs = store.create_topic("c", 3, COMPACT).partitions + store.create_topic("d", 2, COMPACT).partitions
    for seed, plog in enumerate(logs):
        fill(plog, seed, n=40)
    run_cleaner(store, budget=5)
    for seed, plog in enumerate(logs):
        reference = LogStore().create_topic("c", 1, COMPACT).partitions[0]
        fill(reference, seed, n=40)
        reference.compact(NOW)
        assert contents(plog) == contents(reference)


@pytest.mark.parametrize("at_tick", [1, 3, 40, 90])
def test_appends_during_a_cleaning_are_kept_untouched(at_tick):
    extra = [build_batch([(b"k%d" % (i % 12), b"late%d" % i, [], NOW)]) for i in range(8)]
    extra.append(build_batch([(b"k1", None, [], NOW - 10 * RETENTION)]))   # an expired tombstone, appended

    def append_extra(tick):
        if tick == at_tick:
            for b in extra:
                plog.append(b, NOW)

    store, plog = started(3)
    fill(plog, 4)
    assert run_cleaner(store, during=append_extra) > at_tick
    expected = compacted_at_once(4)
    for b in extra:
        expected.append(b, NOW)
    assert contents(plog) == contents(expected)
    # what came during the job is dirty: the next pass cleans it
    assert plog._clean_bytes == plog.size_bytes - sum(len(b) for b in extra)
    run_cleaner(store, now=NOW + 1000)
    expected.compact(NOW + 1000)
    assert contents(plog) == contents(expected)


@pytest.mark.parametrize("at_tick", [1, 20, 45, 70])
@pytest.mark.parametrize("fraction", [0.1, 0.5, 0.9, 1.0])
def test_delete_records_during_a_cleaning_leaves_the_log_of_deleting_first(at_tick, fraction):
    def delete(plog):
        plog.delete_records(int(plog.high_watermark * fraction))

    store, plog = started(3)
    fill(plog, 5)
    assert run_cleaner(store, during=lambda tick: tick == at_tick and delete(plog)) > at_tick
    assert contents(plog) == contents(compacted_at_once(5, delete))


@pytest.mark.parametrize("at_tick", [2, 30, 70])
def test_retention_during_a_cleaning_leaves_the_log_of_retention_first(at_tick):
    configs = dict(COMPACT, **{"cleanup.policy": "compact,delete", "retention.bytes": "1500"})
    store, plog = started(3, configs)
    fill(plog, 2)
    assert run_cleaner(store, during=lambda tick: tick == at_tick and plog.apply_retention(NOW)) > at_tick
    expected = LogStore().create_topic("c", 1, configs).partitions[0]
    fill(expected, 2)
    expected.apply_retention(NOW)
    expected.compact(NOW)
    assert plog.log_start_offset > 0
    assert contents(plog) == contents(expected)


def test_a_topic_deleted_and_made_again_during_a_cleaning_keeps_every_new_record():
    store, plog = started(3)
    fill(plog, 1)
    made = []

    def recreate(tick):
        if tick == 10:
            store.delete_topic("c")
            new = store.create_topic("c", 1, COMPACT).partitions[0]
            for i in range(30):   # keys overwritten: a cleaning would remove some
                new.append(build_batch([(b"k%d" % (i % 3), b"n%d" % i, [], NOW)]), NOW)
            made.append(new)

    assert run_cleaner(store, during=recreate) > 10
    new = made[0]
    assert [r.value for b in new.batches() for r in iter_records(b)] == [b"n%d" % i for i in range(30)]
    run_cleaner(store, now=NOW + 1000)   # the next pass cleans the new topic as any other
    assert [(r.offset, r.value) for b in new.batches() for r in iter_records(b)] == [
        (27, b"n27"), (28, b"n28"), (29, b"n29")]


def test_a_log_restored_from_a_snapshot_during_a_cleaning_is_left_as_restored():
    store, plog = started(3)
    fill(plog, 3)
    snapshot = plog.batch_store.capture()
    plog.append(build_batch([(b"k0", b"after", [], NOW)]), NOW)
    restored = []

    def restore(tick):
        if tick == 25:
            plog.batch_store.replace(snapshot, 0)
            restored.append(contents(plog))

    assert run_cleaner(store, during=restore) > 25
    assert contents(plog) == restored[0]


@pytest.mark.parametrize("seed", [1, 4])
def test_a_cleaning_split_over_ticks_rewrites_segment_files_as_one_pass(tmp_path, seed):
    store = LogStore(cleaner_backoff_ms=1000, cleaner_budget=Budget(4, 1 << 40))
    DataDir(str(tmp_path), 0).attach(store)
    store, plog = started(4, dict(COMPACT, **SMALL_SEGMENTS), store)
    fill(plog, seed)
    assert len(plog.batch_store.segments) > 3

    def delete(tick):
        if tick == 30:
            plog.delete_records(plog.high_watermark // 4)
            plog.append(build_batch([(b"k0", b"late", [], NOW)]), NOW)

    assert run_cleaner(store, during=delete) > 30   # (applying, a segment is read whole)

    def expected_steps(p):
        p.delete_records(p.high_watermark // 4)

    expected = compacted_at_once(seed, expected_steps)
    expected.append(build_batch([(b"k0", b"late", [], NOW)]), NOW)
    assert contents(plog) == contents(expected)
    reopened = LogStore()
    DataDir(str(tmp_path), 0).attach(reopened)
    assert contents(reopened.get("c").partitions[0]) == contents(expected)


def test_a_cleaning_pass_over_many_ticks_leaves_topics_json_as_it_was(tmp_path):
    """A tick changes no topic, so it writes no topic metadata: the file as this test rewrote it
    (same topics, other spacing) is still there after the pass; the next topic change writes it."""
    import json
    store = LogStore(cleaner_backoff_ms=1000, cleaner_budget=Budget(2, 1 << 40))
    DataDir(str(tmp_path), 0).attach(store)
    store, plog = started(2, dict(COMPACT, **SMALL_SEGMENTS), store)
    for i in range(20):
        store.create_topic(f"other-{i}", 2)
    fill(plog, 3)
    meta = tmp_path / "topics.json"
    spaced = json.dumps(json.loads(meta.read_bytes()), indent=2).encode()
    meta.write_bytes(spaced)
    before = contents(plog)
    assert run_cleaner(store) > 100
    assert contents(plog) != before
    run_cleaner(store, now=NOW + 10_000)   # a pass with nothing to clean, past a checkpoint
    assert meta.read_bytes() == spaced
    store.alter_topic_configs("other-0", {"retention.ms": "1000"})
    assert meta.read_bytes() != spaced
    reopened = LogStore()
    DataDir(str(tmp_path), 0).attach(reopened)
    assert reopened.get("other-0").configs == {"retention.ms": "1000"} and len(reopened.topics) == 21


def visible(plog) -> dict:
    """Each key's latest record outside aborted transactions: key -> (offset, value)."""
    aborted = [(t.producer_id, t.first_offset, t.last_offset) for t in plog.producers.aborted]
    out = {}
    for b in plog.batches():
        b = bytes(b)
        h = parse_header(b)
        if h.is_control or (h.is_transactional and any(
                pid == h.producer_id and first <= h.base_offset <= last for pid, first, last in aborted)):
            continue
        for r in iter_records(b):
            out[r.key] = (r.offset, r.value)
    return out


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("budget", [1, 5])
def test_between_any_two_ticks_every_key_reads_as_before_or_as_deleted(seed, budget, tmp_path):
    """What a reader sees halfway through: each key's latest record is the one it had, or, for a
    key whose latest record is a tombstone, nothing (never an older value coming back)."""
    store = None
    if seed % 2:
        store = LogStore(cleaner_backoff_ms=1000, cleaner_budget=Budget(budget, 1 << 40))
        DataDir(str(tmp_path), 0).attach(store)
    store, plog = started(budget, dict(COMPACT, **SMALL_SEGMENTS), store)
    fill(plog, seed)
    for key in (b"k0", b"k1", b"k2", b"k3"):   # deleted long ago: the cleaning removes every record of them
        plog.append(build_batch([(key, None, [], NOW - 10 * RETENTION)]), NOW)
    plog.append(build_batch([(b"last", b"x", [], NOW)]), NOW)
    before = visible(plog)
    seen = []

    def check(tick):
        now = visible(plog)
        assert all(before[key] == record for key, record in now.items())
        assert all(before[key][1] is None for key in before.keys() - now.keys())
        seen.append(len(now))

    run_cleaner(store, during=check)
    check(None)
    assert seen[0] == len(before)
    if plog.producers.first_unstable_offset() is None or seed < 2:   # (else the open transaction bounds the cleaning)
        assert not {b"k0", b"k1", b"k2", b"k3"} & visible(plog).keys()
