"""The optional data directory: a store reloaded from disk holds the same topics, ids, configs,
batches, offsets and idempotent-producer state; every change to a topic (CreateTopics, DeleteTopics,
CreatePartitions, AlterConfigs, IncrementalAlterConfigs, a topic made again) is in topics.json when
it is answered, so a restart after a kill finds it, and the changes of one request are one write;
a write cut short by a kill, a damaged tail or a batch failing its CRC is truncated away (logged,
the bytes kept aside), as Kafka's recovery does."""
import os
import random
import struct

import crc32c
import pytest
from structlog.testing import capture_logs

from kafkaemu.protocol.api_keys import ApiKey
from kafkaemu.storage.data_dir import SEGMENT
from kafkaemu.storage.record_batch import build_batch, iter_records, parse_header

from tests.conftest import T0, call, new_broker
from tests.storage.disk import open_store

NOW = 1_700_000_000_000


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


def _topics(broker) -> dict:
    """Each topic of the broker's store: (id, partitions, configs, internal)."""
    return {t.name: (t.topic_id, len(t.partitions), t.configs, t.internal) for t in broker.store.topics.values()}


def _answered(reply) -> list:
    entries = getattr(reply, "topics", None) or getattr(reply, "responses", None) or reply.results
    return [(e.error_code, getattr(e, "error_message", None)) for e in entries]


@pytest.mark.parametrize("shutdown", ["clean", "kill"])
def test_every_topic_change_a_client_makes_survives_a_restart(tmp_path, shutdown):
    """Each change through its request, then a second broker on the same directory: after a clean
    shutdown, or with the first one left as a kill leaves it (no close, no tick after the changes:
    each change is on disk when it is answered)."""
    broker = new_broker(T0, data_dir=str(tmp_path))

    def create(name, partitions, configs=()):
        return call(broker, ApiKey.CREATE_TOPICS, 7, {"topics": [
            {"name": name, "num_partitions": partitions, "replication_factor": -1, "assignments": [],
             "configs": [{"name": k, "value": v} for k, v in configs]}], "timeout_ms": 1000, "validate_only": False})

    def delete(name):
        return call(broker, ApiKey.DELETE_TOPICS, 6, {"topics": [{"name": name, "topic_id": bytes(16)}],
                                                      "timeout_ms": 1000})

    assert _answered(create("grown", 1)) == [(0, None)]
    assert _answered(create("altered", 2, [("retention.ms", "1000"), ("segment.bytes", "1048576")])) == [(0, None)]
    assert _answered(create("replaced", 1, [("retention.ms", "1000")])) == [(0, None)]
    assert _answered(create("gone", 1)) == [(0, None)]
    assert _answered(create("again", 1, [("cleanup.policy", "compact")])) == [(0, None)]
    broker.store.get("again").partitions[0].append(build_batch([(b"k", b"old", [], T0)]), T0)
    old_id = broker.store.get("again").topic_id
    assert _answered(call(broker, ApiKey.CREATE_PARTITIONS, 3, {
        "topics": [{"name": "grown", "count": 3, "assignments": None}], "timeout_ms": 1000,
        "validate_only": False})) == [(0, None)]
    assert _answered(delete("gone")) == [(0, None)]
    assert _answered(delete("again")) == [(0, None)]
    assert _answered(create("again", 2)) == [(0, None)]
    new_id = broker.store.get("again").topic_id
    assert new_id != old_id
    # last, so that no later change writes the file for them
    assert _answered(call(broker, ApiKey.INCREMENTAL_ALTER_CONFIGS, 1, {"resources": [
        {"resource_type": 2, "resource_name": "altered", "configs": [
            {"name": "retention.ms", "config_operation": 0, "value": "5000"},           # SET
            {"name": "segment.bytes", "config_operation": 1, "value": None},            # DELETE
            {"name": "cleanup.policy", "config_operation": 2, "value": "compact"}]}],   # APPEND
        "validate_only": False})) == [(0, None)]
    assert _answered(call(broker, ApiKey.ALTER_CONFIGS, 2, {"resources": [   # replaces every config
        {"resource_type": 2, "resource_name": "replaced", "configs": [{"name": "max.message.bytes", "value": "2048"}]}],
        "validate_only": False})) == [(0, None)]
    before = _topics(broker)
    assert before["altered"][2] == {"retention.ms": "5000", "cleanup.policy": "delete,compact"}
    assert before["replaced"][2] == {"max.message.bytes": "2048"}
    if shutdown == "clean":
        broker.close()

    again = new_broker(T0, data_dir=str(tmp_path))
    assert _topics(again) == before
    assert "gone" not in before and not os.path.exists(tmp_path / "gone-0")
    assert again.store.by_id(new_id) is again.store.get("again") and again.store.by_id(old_id) is None
    assert [values(p) for p in again.store.get("again").partitions] == [[], []]   # the old topic's records went
    described = call(again, ApiKey.DESCRIBE_CONFIGS, 4, {"resources": [
        {"resource_type": 2, "resource_name": "altered", "configuration_keys": ["retention.ms", "cleanup.policy"]}],
        "include_synonyms": False, "include_documentation": False}).results[0]
    assert {c.name: c.value for c in described.configs} == {"retention.ms": "5000", "cleanup.policy": "delete,compact"}


def _create_topics_body(names, partitions=2, validate_only=False) -> dict:
    return {"topics": [{"name": n, "num_partitions": partitions, "replication_factor": -1, "assignments": [],
                        "configs": []} for n in names], "timeout_ms": 1000, "validate_only": validate_only}


@pytest.fixture
def meta_writes(monkeypatch) -> list:
    """Each write of a topics.json the data directories make, in order: its topics' names (not
    the internal ones, made at the broker's start)."""
    import json
    from kafkaemu.storage import data_dir
    writes = []

    def write_atomically(path, data):
        data_dir_write(path, data)
        if os.path.basename(path) == "topics.json":
            writes.append(sorted(t["name"] for t in json.loads(data)["topics"] if not t["internal"]))
    data_dir_write = data_dir.write_atomically
    monkeypatch.setattr(data_dir, "write_atomically", write_atomically)
    return writes


def test_each_request_changing_many_topics_writes_topics_json_once(tmp_path, meta_writes):
    """A request's topic changes reach topics.json as one write, made before it is answered, as
    Kafka's controller appends the records of one request as one batch: CreateTopics, DeleteTopics,
    CreatePartitions, AlterConfigs, IncrementalAlterConfigs and auto-creation by Metadata and
    Produce, each naming many topics; a request that changes nothing writes nothing."""
    broker = new_broker(T0, data_dir=str(tmp_path), auto_create_topics=True)
    on_disk = lambda: meta_writes[-1]   # noqa: E731
    meta_writes.clear()
    created = [f"t{i:02d}" for i in range(40)]
    answered = call(broker, ApiKey.CREATE_TOPICS, 7, _create_topics_body(created))
    assert [t.error_code for t in answered.topics] == [0] * 40
    assert meta_writes == [created]

    meta_writes.clear()
    assert [t.error_code for t in call(broker, ApiKey.CREATE_TOPICS, 7, _create_topics_body(
        ["t00", "new-a", "new-b"], validate_only=True)).topics] == [36, 0, 0]
    assert [t.error_code for t in call(broker, ApiKey.CREATE_TOPICS, 7, _create_topics_body(
        ["t00", "t01"])).topics] == [36, 36]   # TOPIC_ALREADY_EXISTS
    assert meta_writes == []

    answered = call(broker, ApiKey.DELETE_TOPICS, 6, {"topics": [{"name": n, "topic_id": bytes(16)} for n in
                                                                 created[:15] + ["missing"]], "timeout_ms": 1000})
    assert [r.error_code for r in answered.responses] == [0] * 15 + [3]
    assert meta_writes == [created[15:]]

    meta_writes.clear()
    answered = call(broker, ApiKey.CREATE_PARTITIONS, 3, {"topics": [
        {"name": n, "count": 5, "assignments": None} for n in created[15:]], "timeout_ms": 1000,
        "validate_only": False})
    assert [r.error_code for r in answered.results] == [0] * 25 and len(meta_writes) == 1
    answered = call(broker, ApiKey.INCREMENTAL_ALTER_CONFIGS, 1, {"resources": [
        {"resource_type": 2, "resource_name": n, "configs": [
            {"name": "retention.ms", "config_operation": 0, "value": "5000"}]} for n in created[15:]],
        "validate_only": False})
    assert [r.error_code for r in answered.responses] == [0] * 25 and len(meta_writes) == 2
    answered = call(broker, ApiKey.ALTER_CONFIGS, 2, {"resources": [
        {"resource_type": 2, "resource_name": n, "configs": [{"name": "max.message.bytes", "value": "2048"}]}
        for n in created[15:]], "validate_only": False})
    assert [r.error_code for r in answered.responses] == [0] * 25 and len(meta_writes) == 3

    meta_writes.clear()
    auto = [f"auto-{i}" for i in range(20)]
    answered = call(broker, ApiKey.METADATA, 12, {"topics": [{"name": n, "topic_id": bytes(16)} for n in auto],
                                                  "allow_auto_topic_creation": True})
    assert [t.error_code for t in answered.topics] == [0] * 20
    assert meta_writes == [sorted(created[15:] + auto)]
    produced = [f"produced-{i}" for i in range(20)]
    records = build_batch([(None, b"v", [], T0)])
    answered = call(broker, ApiKey.PRODUCE, 9, {"transactional_id": None, "acks": -1, "timeout_ms": 1000,
                                                "topic_data": [{"name": n, "partition_data": [
                                                    {"index": 0, "records": records}]} for n in produced]})
    assert [t.partition_responses[0].error_code for t in answered.responses] == [0] * 20
    assert len(meta_writes) == 2 and on_disk() == sorted(created[15:] + auto + produced)

    again = new_broker(T0, data_dir=str(tmp_path))   # as after a kill: no close, no tick
    assert {n: (len(t.partitions), t.configs) for n, t in again.store.topics.items()} == {
        n: (len(t.partitions), t.configs) for n, t in broker.store.topics.items()}
    assert again.store.get("t20").configs == {"max.message.bytes": "2048"}   # AlterConfigs replaces them all


def test_topic_changes_nest_and_are_written_when_the_outermost_ends_even_by_an_exception(tmp_path, meta_writes):
    store = open_store(tmp_path)
    meta_writes.clear()
    with pytest.raises(RuntimeError):
        with store.topic_changes():
            store.create_topic("a", 1)
            with store.topic_changes():
                store.create_topic("b", 2)
            assert meta_writes == []
            raise RuntimeError("a handler's bug after its changes")
    assert meta_writes == [["a", "b"]]
    with store.topic_changes():   # nothing changed: nothing written
        pass
    assert meta_writes == [["a", "b"]] and sorted(open_store(tmp_path).topics) == ["a", "b"]


@pytest.mark.parametrize("shutdown", ["clean", "kill"])
def test_every_topic_one_request_creates_or_deletes_survives_a_restart(tmp_path, shutdown):
    """Many topics created by one CreateTopics, then many of them and others deleted by one
    DeleteTopics: a second broker on the directory, after a clean shutdown or as a kill leaves it
    (no close, no tick after the requests), holds exactly the topics the requests left."""
    broker = new_broker(T0, data_dir=str(tmp_path), topics={f"old-{i}": 1 for i in range(10)})
    created = [f"new-{i}" for i in range(60)]
    assert [t.error_code for t in call(broker, ApiKey.CREATE_TOPICS, 7, _create_topics_body(created, 3)).topics] \
        == [0] * 60
    gone = created[::3] + [f"old-{i}" for i in range(0, 10, 2)]
    answered = call(broker, ApiKey.DELETE_TOPICS, 6, {"topics": [{"name": n, "topic_id": bytes(16)} for n in gone],
                                                      "timeout_ms": 1000})
    assert [r.error_code for r in answered.responses] == [0] * len(gone)
    before = _topics(broker)
    assert sorted(n for n in before if not before[n][3]) == sorted(
        set(created + [f"old-{i}" for i in range(10)]) - set(gone))
    if shutdown == "clean":
        broker.close()

    again = new_broker(T0, data_dir=str(tmp_path))
    assert _topics(again) == before
    assert not any(os.path.exists(tmp_path / f"{n}-0") for n in gone)


def test_log_start_and_compaction_survive_a_restart(tmp_path):
    store = open_store(tmp_path)
    plog = store.create_topic("t", 1).partitions[0]
    for i in range(4):
        plog.append(build_batch([(None, b"%d" % i, [], NOW)]), NOW)
    plog.delete_records(4)  # everything
    store.alter_topic_configs("t", {"cleanup.policy": "compact"})
    c = store.create_topic("c", 1, {"cleanup.policy": "compact"}).partitions[0]
    for v in (b"1", b"2", b"3"):
        c.append(build_batch([(b"k", v, [], NOW)]), NOW)
    assert c.compact(NOW) == 2

    again = open_store(tmp_path)
    t = again.get("t").partitions[0]
    assert (t.log_start_offset, t.high_watermark, list(t.batches())) == (4, 4, [])
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


def _segment_with(tmp_path, tail: bytes):
    """A store with records 0-2 in three batches, then ``tail`` written after them (a crash)."""
    store = open_store(tmp_path)
    plog = store.create_topic("t", 1).partitions[0]
    for i in range(3):
        plog.append(build_batch([(b"k", b"v%d" % i, [], NOW + i)]), NOW)
    seg = tmp_path / "t-0" / SEGMENT
    good = seg.read_bytes()
    with open(seg, "ab") as f:
        f.write(tail)
    return seg, good


@pytest.mark.parametrize("tail", [bytes(4096), random.Random(7).randbytes(4096)], ids=["zeros", "random"])
def test_a_damaged_tail_is_truncated_logged_and_kept_aside(tmp_path, tail):
    seg, good = _segment_with(tmp_path, tail)
    with capture_logs() as logs:
        again = open_store(tmp_path)          # used to raise: the server could not start
    plog = again.get("t").partitions[0]
    assert values(plog) == [(0, b"v0"), (1, b"v1"), (2, b"v2")] and plog.high_watermark == 3
    assert seg.read_bytes() == good
    (warning,) = [e for e in logs if e["event"] == "data_dir_truncated"]
    assert warning["log_level"] == "warning"
    assert (warning["topic"], warning["partition"], warning["offset"], warning["dropped_bytes"]) == ("t", 0, 3, 4096)
    assert (tmp_path / "t-0" / f"{SEGMENT}.corrupt-{len(good)}").read_bytes() == tail
    plog.append(build_batch([(None, b"after", [], NOW)]), NOW)
    assert values(open_store(tmp_path).get("t").partitions[0])[-1] == (3, b"after")


def test_a_flipped_bit_truncates_from_the_batch_that_fails_its_crc(tmp_path):
    seg, good = _segment_with(tmp_path, b"")
    first = len(build_batch([(b"k", b"v0", [], NOW)]))
    data = bytearray(good)
    data[first + 70] ^= 0x04                 # inside the second batch's records
    seg.write_bytes(bytes(data))
    with capture_logs() as logs:
        plog = open_store(tmp_path).get("t").partitions[0]
    assert values(plog) == [(0, b"v0")] and plog.high_watermark == 1   # not served with a bad CRC
    (warning,) = [e for e in logs if e["event"] == "data_dir_truncated"]
    assert (warning["offset"], warning["dropped_bytes"], warning["reason"]) == (1, len(good) - first, "CRC mismatch")


def test_batches_stored_with_max_timestamp_minus_one_are_repaired_on_load(tmp_path):
    store = open_store(tmp_path)
    store.create_topic("t", 1)
    seg = tmp_path / "t-0" / SEGMENT
    batch = bytearray(build_batch([(b"k", b"a", [], NOW), (b"k", b"b", [], NOW + 7)]))
    struct.pack_into(">q", batch, 35, -1)                                   # as an older kafkaemu kept it
    struct.pack_into(">I", batch, 17, crc32c.crc32c(bytes(batch[21:])))
    seg.parent.mkdir(exist_ok=True)
    seg.write_bytes(bytes(batch))
    plog = open_store(tmp_path).get("t").partitions[0]
    assert plog.offset_for_timestamp(NOW + 1)[:2] == (NOW + 7, 1)
    assert parse_header(seg.read_bytes()).max_timestamp == NOW + 7      # and stored so
