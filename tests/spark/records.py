"""Real __consumer_offsets records, encoded by kafkaemu's own writers exactly as the coordinator
appends them, laid out as rows of Spark's Kafka source."""
from __future__ import annotations

import datetime as dt

from kafkaemu.core.classic import records as group_records
from kafkaemu.core.offsets import records as offset_records
from kafkaemu.core.offsets.store import CommittedOffset
from kafkaemu.protocol.catalog import catalog

EPOCH = dt.datetime(1970, 1, 1)


def commit(group, topic, partition, offset, ts_ms, metadata=""):
    return offset_records.encode_offset_key(group, topic, partition), offset_records.encode_offset_value(
        CommittedOffset(offset=offset, leader_epoch=-1, metadata=metadata, commit_timestamp_ms=ts_ms))


def commit_tombstone(group, topic, partition):
    return offset_records.encode_offset_key(group, topic, partition), None


def assignment(pairs, version=3):
    by_topic = {}
    for t, p in pairs:
        by_topic.setdefault(t, []).append(p)
    body = catalog().data("ConsumerProtocolAssignment", version).encode(
        {"assigned_partitions": [{"topic": t, "partitions": ps} for t, ps in by_topic.items()], "user_data": None})
    return version.to_bytes(2, "big") + body


def group(name, generation, members, ts_ms=1_700_000_000_000, protocol="range"):
    value = group_records.encode_group_value(group_records.StoredGroup(
        protocol_type="consumer", generation=generation, protocol=protocol, leader=members[0][0] if members else None,
        current_state_timestamp_ms=ts_ms,
        members=tuple(group_records.StoredMember(member_id=m, group_instance_id=None, client_id=m.split("-")[0],
                                       client_host="/127.0.0.1", rebalance_timeout_ms=300000,
                                       session_timeout_ms=45000, subscription=b"", assignment=assignment(a))
                      for m, a in members)))
    return group_records.encode_group_key(name), value


def group_tombstone(name):
    return group_records.encode_group_key(name), None


KAFKA_SOURCE_COLUMNS = ["key", "value", "topic", "partition", "offset", "timestamp", "timestampType"]


def kafka_rows(records, log_partition=7):
    """(key, value) pairs -> Kafka source rows, in log order on one __consumer_offsets partition."""
    return [(k, v, "__consumer_offsets", log_partition, i, EPOCH + dt.timedelta(seconds=i), 0)
            for i, (k, v) in enumerate(records)]


def kafka_frame(spark, records, log_partition=7):
    from pyspark.sql.types import (BinaryType, IntegerType, LongType, StringType, StructField, StructType,
                                   TimestampType)
    schema = StructType([
        StructField("key", BinaryType()), StructField("value", BinaryType()), StructField("topic", StringType()),
        StructField("partition", IntegerType()), StructField("offset", LongType()),
        StructField("timestamp", TimestampType()), StructField("timestampType", IntegerType())])
    return spark.createDataFrame(kafka_rows(records, log_partition), schema)
