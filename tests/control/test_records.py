"""The record operations (control/operations/records.py) on a broker with a manual clock: where
records go, what reading answers, what is refused with nothing appended, and commits as a group."""
import pytest
from hypothesis import given, strategies as st
from kafka.partitioner import murmur2 as kafka_python_murmur2

from kafkaemu.control.operations.records import murmur2, partition_for_key
from kafkaemu.control.params import ControlError

from .harness import Env


@given(st.binary(max_size=64))
def test_murmur2_is_kafkas(data):
    assert murmur2(data) & 0xFFFFFFFF == kafka_python_murmur2(data)


def test_java_murmur2_vectors():
    # Kafka's UtilsTest.testMurmur2
    for text, expected in [("21", -973932308), ("foobar", -790332482), ("a-little-bit-long-string", -985981536),
                           ("a-little-bit-longer-string", -1486304829),
                           ("lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8", -58897971), ("abc", 479470107)]:
        assert murmur2(text.encode()) == expected


def test_keyed_records_go_where_kafkas_partitioner_puts_them_and_read_back_in_order():
    env = Env()
    env.broker.topics.create("t", 4, {})
    keys = [f"k{i}" for i in range(40)]
    placed = env.op("records_produce", topic="t", records=[{"key": k, "value": f"v-{k}"} for k in keys],
                    headers={"h": "1"})["records"]
    assert [r["partition"] for r in placed] == [partition_for_key(k.encode(), 4) for k in keys]
    read = env.op("records_read", topic="t", limit=1000)
    assert sorted((r["key"], r["value"], r["headers"]) for r in read["records"]) == \
        sorted((k, f"v-{k}", [["h", "1"]]) for k in keys)
    assert sum(n["offset"] for n in read["next_offsets"]) == 40
    for n in read["next_offsets"]:
        assert n["offset"] == n["high_watermark"]


def test_unkeyed_records_of_one_call_share_a_partition_and_calls_take_turns():
    env = Env()
    env.broker.topics.create("t", 3, {})
    first = {r["partition"] for r in env.op("records_produce", topic="t", records=["a", "b"])["records"]}
    second = {r["partition"] for r in env.op("records_produce", topic="t", records=["c"])["records"]}
    assert len(first) == 1 and len(second) == 1 and first != second


def test_reading_from_an_offset_the_end_or_back_from_the_end_with_a_limit():
    env = Env()
    env.op("records_produce", topic="t", records=[str(i) for i in range(10)], partition=0)
    values = lambda **kw: [r["value"] for r in env.op("records_read", topic="t", partition=0, **kw)["records"]]
    assert values(offset=7) == ["7", "8", "9"]
    assert values(offset=-2) == ["8", "9"]
    assert values(offset="end") == []
    assert values(offset="beginning", limit=3) == ["0", "1", "2"]
    assert env.op("records_read", topic="t", partition=0, limit=3)["next_offsets"][0]["offset"] == 3


def test_large_calls_are_split_into_batches_under_max_message_bytes():
    env = Env()
    env.broker.topics.create("t", 1, {"max.message.bytes": "2000"})
    placed = env.op("records_produce", topic="t", records=["x" * 300] * 20)["records"]
    assert [r["offset"] for r in placed] == list(range(20))
    assert env.broker.store.get("t").partitions[0].batch_count > 1
    with pytest.raises(ControlError, match="larger than t's max.message.bytes"):
        env.op("records_produce", topic="t", records=["ok", "y" * 3000])
    assert env.broker.store.get("t").partitions[0].high_watermark == 20   # nothing of the refused call


@pytest.mark.parametrize("records, params, message", [
    (["x"], {"partition": 5}, "t has no partition 5"),
    ([{"value": "x", "color": "red"}], {}, "unknown field"),
    ([{"value": 1}], {}, "must be a string or null"),
    (["x"], {"encoding": "base64"}, "is not base64"),
    ("x", {}, "must be a list of records"),
])
def test_bad_records_are_refused_with_nothing_appended(records, params, message):
    env = Env()
    env.broker.topics.create("t", 2, {})
    with pytest.raises(ControlError, match=message) as info:
        env.op("records_produce", topic="t", records=records, **params)
    assert info.value.status == 400
    assert all(p.high_watermark == 0 for p in env.broker.store.get("t").partitions)


def test_a_compacted_topic_needs_keys_and_internal_topics_are_refused():
    env = Env()
    env.broker.topics.create("c", 1, {"cleanup.policy": "compact"})
    with pytest.raises(ControlError, match="has no key"):
        env.op("records_produce", topic="c", records=["x"])
    assert env.op("records_produce", topic="c", records=[{"key": "k", "value": None}])["records"][0]["offset"] == 0
    env.op("records_consume", group="g", topic="c")          # makes __consumer_offsets
    with pytest.raises(ControlError) as info:
        env.op("records_produce", topic="__consumer_offsets", records=[{"key": "k", "value": "v"}])
    assert info.value.status == 409


def test_topics_are_created_as_a_producer_creates_them_unless_auto_creation_is_off():
    env = Env(num_partitions=3)
    env.op("records_produce", topic="fresh", records=["x"])
    assert len(env.broker.store.get("fresh").partitions) == 3
    off = Env(auto_create_topics=False)
    with pytest.raises(ControlError) as info:
        off.op("records_produce", topic="fresh", records=["x"])
    assert info.value.status == 404 and off.broker.store.get("fresh") is None


def test_a_partition_whose_leader_is_stopped_is_refused():
    env = Env(nodes=2)
    env.broker.topics.create("t", 2, {})
    leaders = {p.index: env.broker.placement.partition_leader(p) for p in env.broker.store.get("t").partitions}
    env.op("node_stop", node=leaders[1], leaders="offline")
    with pytest.raises(ControlError, match="have no leader") as info:
        env.op("records_produce", topic="t", records=["x"], partition=1)
    assert info.value.status == 409


def test_consuming_as_a_group_commits_and_a_group_with_members_refuses():
    env = Env()
    env.op("records_produce", topic="t", records=[str(i) for i in range(5)], partition=0)
    assert [r["value"] for r in env.op("records_consume", group="g", topic="t", limit=2)["records"]] == ["0", "1"]
    assert [r["value"] for r in env.op("records_consume", group="g", topic="t")["records"]] == ["2", "3", "4"]
    assert env.op("records_consume", group="g", topic="t")["records"] == []
    assert env.broker.coordinator.offsets.store.get("g", "t", 0).offset == 5
    # reading with a group starts where it committed, and commits nothing
    assert env.op("records_read", topic="t", group="g", offset="beginning")["records"] == []

    env.two_member_group("busy", topic="t2", partitions=2)
    env.op("records_produce", topic="t2", records=["x"], partition=0)
    with pytest.raises(ControlError, match="did not take the commit") as info:
        env.op("records_consume", group="busy", topic="t2")
    assert info.value.status == 409


def test_binary_keys_values_and_headers_in_base64():
    env = Env()
    env.op("records_produce", topic="t", records=[{"key": "AP8=", "value": "AQI=", "headers": [["b", "/g=="]]}],
           encoding="base64")
    record = env.op("records_read", topic="t", encoding="base64")["records"][0]
    assert (record["key"], record["value"], record["headers"]) == ("AP8=", "AQI=", [["b", "/g=="]])
    assert env.broker.store.get("t").partitions[0].high_watermark == 1
