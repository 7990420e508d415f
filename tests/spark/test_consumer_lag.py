"""kafkaemu.spark: decoding __consumer_offsets and the consumer-lag table, on local DataFrames."""
from __future__ import annotations

import datetime as dt
import json

import pytest

from kafkaemu.spark import consumer_lag as lag

from .records import commit, commit_tombstone, group, group_tombstone, kafka_frame


def ends(table):
    asked = []

    def end_offsets(partitions):
        asked.append(list(partitions))
        return {tp: table[tp] for tp in partitions if tp in table}
    end_offsets.asked = asked
    return end_offsets


def as_dicts(df):
    return [r.asDict() for r in df.collect()]


def test_decoded_rows_carry_commits_and_group_metadata(spark):
    df = kafka_frame(spark, [
        commit("g1", "orders", 0, 42, 1_700_000_000_500, metadata="m"),
        group("g1", 3, [("C1-a", [("orders", 0), ("orders", 1)]), ("C2-b", [("orders", 2)])]),
        commit_tombstone("g1", "orders", 1),
        (b"\x00\x09garbage", b"\x00\x00"),
    ])
    rows = as_dicts(lag.decode_offsets(df).orderBy("log_offset"))
    assert [r["kind"] for r in rows] == ["offset_commit", "group_metadata", "offset_commit", "unknown"]
    c = rows[0]
    assert (c["group"], c["topic"], c["partition"], c["committed_offset"], c["metadata"], c["commit_timestamp_ms"]) == \
        ("g1", "orders", 0, 42, "m", 1_700_000_000_500)
    g = rows[1]
    assert (g["group"], g["generation"], g["protocol"], g["leader"]) == ("g1", 3, "range", "C1-a")
    assert [(m["member_id"], m["client_id"], [(a["topic"], a["partition"]) for a in m["assignment"]])
            for m in g["members"]] == [("C1-a", "C1", [("orders", 0), ("orders", 1)]), ("C2-b", "C2", [("orders", 2)])]
    assert rows[2]["tombstone"] is True and rows[2]["committed_offset"] is None
    assert rows[3]["group"] is None


def test_lag_table_uses_the_newest_commit_and_drops_deleted_ones(spark):
    df = kafka_frame(spark, [
        commit("g1", "orders", 0, 10, 1_700_000_000_000),
        commit("g1", "orders", 1, 5, 1_700_000_000_000),
        group("g1", 1, [("C1-a", [("orders", 0), ("orders", 1)])]),
        commit("g1", "orders", 0, 25, 1_700_000_060_000),      # newer commit wins
        commit("g2", "orders", 0, 3, 1_700_000_001_000),
        commit("g2", "gone", 0, 7, 1_700_000_002_000),         # topic without an end offset
        commit_tombstone("g1", "orders", 1),                    # offset deleted
        group("g1", 2, [("C1-a", [("orders", 0)]), ("C2-b", [("orders", 1)])]),
    ])
    end_offsets = ends({("orders", 0): 30, ("orders", 1): 9})
    rows = as_dicts(lag.consumer_lag_from_records(df, end_offsets))
    assert rows == [
        {"group": "g1", "topic": "orders", "partition": 0, "committed_offset": 25, "end_offset": 30, "lag": 5,
         "last_commit_time": dt.datetime(2023, 11, 14, 22, 14, 20), "generation": 2, "members": 2},
        {"group": "g2", "topic": "gone", "partition": 0, "committed_offset": 7, "end_offset": None, "lag": None,
         "last_commit_time": dt.datetime(2023, 11, 14, 22, 13, 22), "generation": None, "members": None},
        {"group": "g2", "topic": "orders", "partition": 0, "committed_offset": 3, "end_offset": 30, "lag": 27,
         "last_commit_time": dt.datetime(2023, 11, 14, 22, 13, 21), "generation": None, "members": None},
    ]
    # end offsets are asked once, only for partitions that still have a commit
    assert end_offsets.asked == [[("gone", 0), ("orders", 0)]]


def test_deleted_group_keeps_no_generation(spark):
    df = kafka_frame(spark, [
        group("g1", 4, [("C1-a", [("t", 0)])]),
        commit("g1", "t", 0, 1, 1_700_000_000_000),
        group_tombstone("g1"),
    ])
    rows = as_dicts(lag.consumer_lag_from_records(df, ends({("t", 0): 1})))
    assert [(r["group"], r["lag"], r["generation"]) for r in rows] == [("g1", 0, None)]


def test_no_commits_gives_an_empty_table_without_asking_for_offsets(spark):
    df = kafka_frame(spark, [group("g1", 1, [])])
    end_offsets = ends({})
    assert lag.consumer_lag_from_records(df, end_offsets).count() == 0
    assert end_offsets.asked == []


def test_streaming_query_keeps_the_view_current(spark, tmp_path):
    """The streaming plan on a file source shaped like the Kafka source (the connector is not needed)."""
    source = tmp_path / "records"
    source.mkdir()
    batch1 = kafka_frame(spark, [commit("g1", "t", 0, 4, 1_700_000_000_000), group("g1", 1, [("C1-a", [("t", 0)])])])
    batch1.write.parquet(str(source / "1"))
    stream = spark.readStream.schema(batch1.schema).parquet(str(source / "*"))
    seen = []
    query, view = lag.start_lag_query(stream, ends({("t", 0): 10}), view_name="lag_unit", processing_time=None,
                                      checkpoint_location=str(tmp_path / "ckpt"),
                                      on_batch=lambda rows, batch_id: seen.append(batch_id))
    try:
        query.processAllAvailable()
        assert [(r["group"], r["committed_offset"], r["lag"]) for r in view.rows] == [("g1", 4, 6)]
        # the next records continue the same log partition
        later = kafka_frame(spark, [(b"", b"")] * 2 + [commit("g1", "t", 0, 9, 1_700_000_005_000)])
        later.where("offset = 2").write.parquet(str(source / "2"))
        query.processAllAvailable()
        table = as_dicts(spark.table("global_temp.lag_unit"))
        assert [(r["group"], r["committed_offset"], r["end_offset"], r["lag"]) for r in table] == [("g1", 9, 10, 1)]
        assert len(seen) >= 2
    finally:
        query.stop()


def test_kafka_source_options_read_the_offsets_topic():
    opts = lag.kafka_source_options("127.0.0.1:9092", {"maxOffsetsPerTrigger": "100"}, partitions=3)
    assert json.loads(opts["assign"]) == {"__consumer_offsets": [0, 1, 2]}
    assert opts["kafka.bootstrap.servers"] == "127.0.0.1:9092"
    assert opts["startingOffsets"] == "earliest" and opts["maxOffsetsPerTrigger"] == "100"
