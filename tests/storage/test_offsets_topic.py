"""__consumer_offsets is the internal topic from the broker's start; a data directory holding it as
an ordinary topic (left by kafkaemu versions that auto-created it on a Metadata lookup) is repaired
or refused; records that do not load are skipped."""
import struct

import pytest

from kafkaemu.core.classic import records as group_records
from kafkaemu.core.offsets import records as offset_records
from kafkaemu.core.offsets.store import CommittedOffset
from kafkaemu.protocol.api_keys import ApiKey
from kafkaemu.storage import offsets_topic
from kafkaemu.storage.offsets_topic import OFFSETS_TOPIC_CONFIGS
from kafkaemu.core.placement import partition_for
from kafkaemu.core.offsets.requests import CommitPartition, OffsetCommit
from kafkaemu.protocol.errors import ErrorCode as E
from kafkaemu.storage.data_dir import DataDir
from kafkaemu.storage.log_store import OFFSETS_TOPIC, LogStore
from kafkaemu.storage.record_batch import build_batch
from tests.conftest import T0, call, new_broker

def groups_on_partition(partition: int, count: int, n: int = 50) -> list[str]:
    found, i = [], 0
    while len(found) < count:
        if partition_for(f"group-{i}", n) == partition:
            found.append(f"group-{i}")
        i += 1
    return found


def commit(broker, group, topic="t", partition=0, offset=5) -> set[E]:
    req = OffsetCommit(group, [(topic, [CommitPartition(partition, offset)])])
    resp = broker.coordinator.commit_offsets(broker.now_ms, req)
    return {E(p["error_code"]) for t in resp["topics"] for p in t["partitions"]}


def test_the_offsets_topic_exists_as_the_internal_topic_from_the_start():
    broker = new_broker(T0)
    topic = broker.store.get(OFFSETS_TOPIC)
    assert topic.internal and len(topic.partitions) == 50 and topic.configs == OFFSETS_TOPIC_CONFIGS


@pytest.mark.parametrize("version", [1, 4, 12])
def test_looking_the_offsets_topic_up_before_any_group_leaves_it_internal(version):
    broker = new_broker(T0, num_partitions=1)
    md = call(broker, ApiKey.METADATA, version,
              {"topics": [{"name": OFFSETS_TOPIC}], "allow_auto_topic_creation": True})
    [t] = md.topics
    assert t.error_code == 0 and t.is_internal and len(t.partitions) == 50
    groups = [f"g{i}" for i in range(5)]
    assert len({partition_for(g, 50) for g in groups}) > 1
    for g in groups:                       # every group's partition exists (no IndexError)
        assert commit(broker, g) == {E.NONE}
        hb = call(broker, ApiKey.HEARTBEAT, 0, {"group_id": g, "generation_id": 1, "member_id": "m"})
        assert hb.error_code == E.UNKNOWN_MEMBER_ID


def test_create_topics_cannot_make_an_ordinary_offsets_topic():
    broker = new_broker(T0)
    resp = call(broker, ApiKey.CREATE_TOPICS, 4, {"topics": [{"name": OFFSETS_TOPIC, "num_partitions": 1,
                                                              "replication_factor": 1, "assignments": [], "configs": []}],
                                                  "timeout_ms": 1000})
    assert resp.topics[0].error_code == E.TOPIC_ALREADY_EXISTS
    assert len(broker.store.get(OFFSETS_TOPIC).partitions) == 50


def _old_data_dir(path, partitions=1, records=()):
    """What kafkaemu left when a client looked __consumer_offsets up before any group existed: an
    ordinary topic; the coordinator wrote each group's records to partition_for(group, 50)."""
    store = LogStore()
    data_dir = DataDir(str(path))
    data_dir.attach(store)
    topic = store.create_topic(OFFSETS_TOPIC, partitions, {})
    for partition, key, value in records:
        topic.partitions[partition].append_batch(build_batch([(key, value, (), T0)]), T0)
    data_dir.close()


def test_an_ordinary_one_partition_offsets_topic_is_repaired_in_place(tmp_path):
    [g0, other] = groups_on_partition(0, 1) + groups_on_partition(7, 1)
    committed = CommittedOffset(42, -1, "meta", T0)
    _old_data_dir(tmp_path, 1, [(0, offset_records.encode_offset_key(g0, "t", 0), offset_records.encode_offset_value(committed))])
    broker = new_broker(T0, data_dir=str(tmp_path))
    topic = broker.store.get(OFFSETS_TOPIC)
    assert topic.internal and len(topic.partitions) == 50 and topic.configs == OFFSETS_TOPIC_CONFIGS
    assert broker.coordinator.offsets.store.get(g0, "t", 0) == committed
    assert commit(broker, other, offset=9) == {E.NONE}       # a group on partition 7 works now
    assert topic.partitions[7].high_watermark == 1
    broker.store.persistence.close()

    again = new_broker(T0, data_dir=str(tmp_path))  # and the repair survives a restart
    topic = again.store.get(OFFSETS_TOPIC)
    assert topic.internal and len(topic.partitions) == 50
    assert again.coordinator.offsets.store.get(g0, "t", 0) == committed
    assert again.coordinator.offsets.store.get(other, "t", 0).offset == 9
    again.store.persistence.close()


def test_an_ordinary_offsets_topic_with_too_many_partitions_is_refused_naming_the_dir(tmp_path):
    _old_data_dir(tmp_path, 60)
    with pytest.raises(offsets_topic.OffsetsTopicError, match=f"data directory {tmp_path}.*60 partitions"):
        new_broker(T0, data_dir=str(tmp_path))


def test_an_ordinary_offsets_topic_with_misplaced_group_records_is_refused(tmp_path):
    [g7] = groups_on_partition(7, 1)
    _old_data_dir(tmp_path, 10, [(3, group_records.encode_group_key(g7), None)])
    with pytest.raises(offsets_topic.OffsetsTopicError, match=f"data directory {tmp_path}.*{g7}"):
        new_broker(T0, data_dir=str(tmp_path))


def test_an_internal_offsets_topic_keeps_its_partition_count_as_in_kafka(tmp_path):
    first = new_broker(T0, data_dir=str(tmp_path), offsets_topic_num_partitions=10)
    groups = [f"g{i}" for i in range(6)]
    for g in groups:
        assert commit(first, g, offset=len(g)) == {E.NONE}
    first.store.persistence.close()
    second = new_broker(T0, data_dir=str(tmp_path))   # the setting is back to 50
    assert len(second.store.get(OFFSETS_TOPIC).partitions) == 10
    assert second.coordinator.settings.offsets.topic_num_partitions == 10
    for g in groups:
        assert second.coordinator.offsets.store.get(g, "t", 0).offset == len(g)
    second.store.persistence.close()


def test_records_an_admin_client_wrote_that_do_not_load_are_skipped_on_restart(tmp_path):
    first = new_broker(T0, data_dir=str(tmp_path))
    [g] = groups_on_partition(0, 1)
    assert commit(first, g, offset=11) == {E.NONE}
    junk = build_batch([(struct.pack(">h", 99) + b"future record type", b"\x00\x00value", (), T0),
                        (offset_records.encode_offset_key(g, "t", 1), b"\x00\x03not an offset", (), T0)])
    body = {"acks": -1, "timeout_ms": 1000, "topic_data": [
        {"name": OFFSETS_TOPIC, "partition_data": [{"index": 0, "records": junk}]}]}
    resp = call(first, ApiKey.PRODUCE, 9, body, client_id="__admin_client")
    assert resp.responses[0].partition_responses[0].error_code == 0
    assert commit(first, g, offset=12, partition=2) == {E.NONE}
    first.store.persistence.close()
    second = new_broker(T0, data_dir=str(tmp_path))
    assert second.coordinator.offsets.store.get(g, "t", 0).offset == 11
    assert second.coordinator.offsets.store.get(g, "t", 1) is None
    assert second.coordinator.offsets.store.get(g, "t", 2).offset == 12
    second.store.persistence.close()


def test_kafkaemu_serve_refuses_such_a_directory_in_one_line(tmp_path, capsys, monkeypatch):
    from kafkaemu.cli import main
    monkeypatch.setattr("kafkaemu.cli.configure_logging", lambda *args, **kwargs: None)   # keep the tests' logging
    _old_data_dir(tmp_path, 60)
    assert main(["serve", "--port", "0", "--data-dir", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"kafkaemu: data directory {tmp_path} holds an ordinary topic")
