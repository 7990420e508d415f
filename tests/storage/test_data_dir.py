"""The optional data directory: a store reloaded from disk holds the same topics, ids, configs,
batches, offsets and idempotent-producer state; a write cut short by a kill is truncated away."""
import os

from kafkaemu.storage.data_dir import SEGMENT, DataDir
from kafkaemu.storage.log_store import LogStore
from kafkaemu.storage.record_batch import build_batch, iter_records

NOW = 1_700_000_000_000


def open_store(path):
    store = LogStore()
    DataDir(str(path)).attach(store)
    return store


def values(plog):
    return [(r.offset, r.value) for b in plog.batches() for r in iter_records(b)]


def test_topics_and_records_survive_a_restart(tmp_path):
    store = open_store(tmp_path)
    topic = store.create_topic("orders", 2, {"retention.ms": "1000000"})
    p0 = topic.partitions[0]
    p0.append(build_batch([(b"k", b"a", [], NOW), (b"k", b"b", [], NOW + 1)]), NOW)
    p0.append(build_batch([(None, b"c", [("h", b"1")], NOW + 2)], producer_id=5, producer_epoch=0,
                          base_sequence=0), NOW)
    topic.partitions[1].append(build_batch([(None, b"z", [], NOW)]), NOW)
    store.add_partitions("orders", 3)
    store.create_topic("gone", 1)
    store.delete_topic("gone")

    again = open_store(tmp_path)
    t = again.get("orders")
    assert t.topic_id == topic.topic_id and again.by_id(topic.topic_id) is t
    assert t.configs == {"retention.ms": "1000000"} and len(t.partitions) == 3
    assert again.get("gone") is None and not os.path.exists(tmp_path / "gone-0")
    q0 = t.partitions[0]
    assert values(q0) == [(0, b"a"), (1, b"b"), (2, b"c")] and q0.high_watermark == 3
    assert q0.offset_for_timestamp(NOW + 1)[:2] == (NOW + 1, 1)
    # the idempotent producer's last batch is still known: a retry is a duplicate, not a new record
    dup = q0.append(build_batch([(None, b"c", [("h", b"1")], NOW + 2)], producer_id=5, producer_epoch=0,
                                base_sequence=0), NOW)
    assert dup.base_offset == 2 and q0.high_watermark == 3
    q0.append(build_batch([(None, b"d", [], NOW)]), NOW)
    assert values(open_store(tmp_path).get("orders").partitions[0])[-1] == (3, b"d")


def test_log_start_and_compaction_survive_a_restart(tmp_path):
    store = open_store(tmp_path)
    plog = store.create_topic("t", 1).partitions[0]
    for i in range(4):
        plog.append(build_batch([(None, b"%d" % i, [], NOW)]), NOW)
    plog.delete_records(4)  # everything
    store.get("t").configs["cleanup.policy"] = "compact"
    store.tick(NOW)
    store.tick(NOW + 1)  # configs are persisted at ticks
    c = store.create_topic("c", 1, {"cleanup.policy": "compact"}).partitions[0]
    for v in (b"1", b"2", b"3"):
        c.append(build_batch([(b"k", v, [], NOW)]), NOW)
    assert c.compact(NOW) == 2

    again = open_store(tmp_path)
    t = again.get("t").partitions[0]
    assert (t.log_start_offset, t.high_watermark, t.batches()) == (4, 4, [])
    assert again.get("t").configs == {"cleanup.policy": "compact"}
    assert values(again.get("c").partitions[0]) == [(2, b"3")]
    assert again.get("c").partitions[0].high_watermark == 3


def test_a_partial_write_is_truncated_on_load(tmp_path):
    store = open_store(tmp_path)
    plog = store.create_topic("t", 1).partitions[0]
    plog.append(build_batch([(None, b"ok", [], NOW)]), NOW)
    seg = tmp_path / "t-0" / SEGMENT
    good = seg.stat().st_size
    with open(seg, "ab") as f:
        f.write(build_batch([(None, b"cut", [], NOW)])[:30])
    again = open_store(tmp_path)
    assert values(again.get("t").partitions[0]) == [(0, b"ok")]
    assert seg.stat().st_size == good
