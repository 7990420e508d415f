"""The consumer-lag pipeline: ``__consumer_offsets`` through Spark's Kafka source -> decoded commits
and group metadata -> one row per (group, topic, partition) with committed offset, end offset, lag
and last commit time, as a batch DataFrame or a streaming query that keeps a view up to date.

Every stage below takes and returns DataFrames, so the decoding and the table are tested on local
DataFrames shaped like the Kafka source's rows without the connector. End offsets come from a
callable ``[(topic, partition)] -> {(topic, partition): end offset}``; by default the Java admin
client that Spark's Kafka connector ships asks the broker (``ListOffsets`` latest).
"""
from __future__ import annotations

import json
import tempfile
from contextlib import contextmanager
from typing import Callable, Iterable, Iterator

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.streaming import StreamingQuery
from pyspark.sql.types import (ArrayType, BooleanType, IntegerType, LongType, StringType, StructField,
                               StructType, TimestampType)

from .decoding import GROUP_METADATA, OFFSET_COMMIT, decode_record
from .session import require_connector

OFFSETS_TOPIC = "__consumer_offsets"
DEFAULT_OFFSETS_PARTITIONS = 50
# Spark's default (AdminClient) offset reader drops internal topics from subscribe and assign, so
# __consumer_offsets is only readable with the consumer-based reader. It is read with "assign"
# (every partition named) rather than "subscribe": assign() is immediate, while a subscribing
# driver consumer has one short poll to join its group and a cold JVM can miss it.
DEPRECATED_OFFSET_FETCHING = "spark.sql.streaming.kafka.useDeprecatedOffsetFetching"

TopicPartitions = list[tuple[str, int]]
EndOffsets = Callable[[TopicPartitions], dict[tuple[str, int], int]]

MEMBER_SCHEMA = StructType([
    StructField("member_id", StringType()),
    StructField("group_instance_id", StringType()),
    StructField("client_id", StringType()),
    StructField("client_host", StringType()),
    StructField("assignment", ArrayType(StructType([
        StructField("topic", StringType()), StructField("partition", IntegerType())]))),
])

# Field order matches DecodedRecord.as_tuple().
DECODED_SCHEMA = StructType([
    StructField("kind", StringType()),
    StructField("group", StringType()),
    StructField("topic", StringType()),
    StructField("partition", IntegerType()),
    StructField("tombstone", BooleanType()),
    StructField("committed_offset", LongType()),
    StructField("leader_epoch", IntegerType()),
    StructField("metadata", StringType()),
    StructField("commit_timestamp_ms", LongType()),
    StructField("expire_timestamp_ms", LongType()),
    StructField("protocol_type", StringType()),
    StructField("protocol", StringType()),
    StructField("generation", IntegerType()),
    StructField("leader", StringType()),
    StructField("members", ArrayType(MEMBER_SCHEMA)),
])

END_OFFSETS_SCHEMA = StructType([
    StructField("topic", StringType()),
    StructField("partition", IntegerType()),
    StructField("end_offset", LongType()),
])

LAG_SCHEMA = StructType([
    StructField("group", StringType()),
    StructField("topic", StringType()),
    StructField("partition", IntegerType()),
    StructField("committed_offset", LongType()),
    StructField("end_offset", LongType()),
    StructField("lag", LongType()),
    StructField("last_commit_time", TimestampType()),
    StructField("generation", IntegerType()),
    StructField("members", IntegerType()),
])


def _decode_udf():
    return F.udf(lambda key, value: decode_record(key, value).as_tuple(), DECODED_SCHEMA, useArrow=False)


def decode_offsets(raw: DataFrame) -> DataFrame:
    """Kafka-source rows of ``__consumer_offsets`` -> one decoded row per record, plus where it sits in the log."""
    return raw.select(
        F.col("partition").alias("log_partition"),
        F.col("offset").alias("log_offset"),
        _decode_udf()(F.col("key"), F.col("value")).alias("r"),
    ).select("log_partition", "log_offset", "r.*")


def latest_per_key(decoded: DataFrame) -> DataFrame:
    """The last record per commit key (group, topic, partition) and per group-metadata key (group).

    One aggregation for both kinds, so the same plan runs as a streaming query (Spark allows one
    streaming aggregation per query). The log offset leads the struct, so max() picks the newest
    record; every key of one group lives in one log partition, so offsets compare within it.
    """
    last = F.max(F.struct(
        F.col("log_offset"),
        F.col("tombstone"),
        F.col("committed_offset"),
        F.col("commit_timestamp_ms"),
        F.col("generation"),
        F.col("protocol"),
        F.when(F.col("members").isNull(), F.lit(None).cast(IntegerType()))
         .otherwise(F.size("members")).alias("member_count"),
    )).alias("last")
    return (decoded.where(F.col("kind").isin(OFFSET_COMMIT, GROUP_METADATA))
            .groupBy("kind", "group", "topic", "partition").agg(last)
            .select("kind", "group", "topic", "partition", "last.*"))


def live_commits(latest: DataFrame) -> DataFrame:
    return (latest.where((F.col("kind") == OFFSET_COMMIT) & ~F.col("tombstone"))
            .select("group", "topic", "partition", "committed_offset", "commit_timestamp_ms"))


def live_groups(latest: DataFrame) -> DataFrame:
    return (latest.where((F.col("kind") == GROUP_METADATA) & ~F.col("tombstone"))
            .select("group", "generation", F.col("member_count").alias("members")))


def lag_table(latest: DataFrame, end_offsets: DataFrame) -> DataFrame:
    """The consumer-lag table from ``latest_per_key`` rows and (topic, partition, end_offset) rows.

    Lag is end offset minus committed offset, as kafka-consumer-groups reports it; null when the
    partition's end offset is unknown (topic deleted).
    """
    commits = live_commits(latest)
    return (commits.join(end_offsets, ["topic", "partition"], "left")
            .join(live_groups(latest), ["group"], "left")
            .select(
                "group", "topic", F.col("partition").cast(IntegerType()).alias("partition"),
                "committed_offset", "end_offset",
                (F.col("end_offset") - F.col("committed_offset")).alias("lag"),
                F.expr("timestamp_millis(commit_timestamp_ms)").alias("last_commit_time"),
                "generation", "members")
            .orderBy("group", "topic", "partition"))


def end_offsets_frame(spark: SparkSession, latest: DataFrame, end_offsets: EndOffsets) -> DataFrame:
    """Ask ``end_offsets`` for every partition some group committed to; return them as a DataFrame."""
    wanted = sorted({(r["topic"], r["partition"]) for r in live_commits(latest).select("topic", "partition").collect()})
    found = end_offsets(wanted) if wanted else {}
    rows = [(t, p, found[(t, p)]) for t, p in wanted if found.get((t, p)) is not None]
    return spark.createDataFrame(rows, END_OFFSETS_SCHEMA)


def consumer_lag_from_records(raw: DataFrame, end_offsets: EndOffsets) -> DataFrame:
    """Batch: Kafka-source rows of ``__consumer_offsets`` -> the consumer-lag table.

    The newest record per key is small (groups x partitions), so it is collected once: the
    table then no longer depends on the source (nor on the conf it had to be read with).
    """
    spark = raw.sparkSession
    latest_df = latest_per_key(decode_offsets(raw))
    latest = spark.createDataFrame(latest_df.collect(), latest_df.schema)
    return lag_table(latest, end_offsets_frame(spark, latest, end_offsets))


@contextmanager
def offsets_topic_readable(spark: SparkSession) -> Iterator[None]:
    """Switch the session to Spark's consumer-based offset reader while a read is planned and run."""
    old = spark.conf.get(DEPRECATED_OFFSET_FETCHING, "false")
    spark.conf.set(DEPRECATED_OFFSET_FETCHING, "true")
    try:
        yield
    finally:
        spark.conf.set(DEPRECATED_OFFSET_FETCHING, old)


# -- reading from a broker through Spark's Kafka connector ---------------------------------------

def kafka_source_options(bootstrap: str, extra: dict[str, str] | None = None,
                         partitions: int = DEFAULT_OFFSETS_PARTITIONS) -> dict[str, str]:
    assign = json.dumps({OFFSETS_TOPIC: list(range(partitions))})
    options = {"kafka.bootstrap.servers": bootstrap, "assign": assign,
               "startingOffsets": "earliest", "failOnDataLoss": "false"}
    options.update(extra or {})
    return options


def offsets_topic_partitions(spark: SparkSession, bootstrap: str, timeout_s: int = 30) -> int:
    """How many partitions ``__consumer_offsets`` has (offsets.topic.num.partitions), via the Java admin client."""
    jvm = spark.sparkContext._jvm
    props = jvm.java.util.Properties()
    props.put("bootstrap.servers", bootstrap)
    admin = jvm.org.apache.kafka.clients.admin.Admin.create(props)
    try:
        names = jvm.java.util.ArrayList()
        names.add(OFFSETS_TOPIC)
        described = admin.describeTopics(names).allTopicNames().get(timeout_s, jvm.java.util.concurrent.TimeUnit.SECONDS)
        return described.get(OFFSETS_TOPIC).partitions().size()
    except Exception:  # not created yet (no group has committed): nothing to read beyond the default
        return DEFAULT_OFFSETS_PARTITIONS
    finally:
        admin.close()


def jvm_end_offsets(spark: SparkSession, bootstrap: str, timeout_s: int = 30) -> EndOffsets:
    """End offsets through the Java AdminClient already on Spark's classpath (kafka-clients)."""
    def ask(partitions: TopicPartitions) -> dict[tuple[str, int], int]:
        jvm = spark.sparkContext._jvm
        props = jvm.java.util.Properties()
        props.put("bootstrap.servers", bootstrap)
        admin = jvm.org.apache.kafka.clients.admin.Admin.create(props)
        try:
            specs = jvm.java.util.HashMap()
            tps = {}
            for topic, partition in partitions:
                tp = jvm.org.apache.kafka.common.TopicPartition(topic, partition)
                tps[(topic, partition)] = tp
                specs.put(tp, jvm.org.apache.kafka.clients.admin.OffsetSpec.latest())
            result = admin.listOffsets(specs)
            seconds = jvm.java.util.concurrent.TimeUnit.SECONDS
            out = {}
            for key, tp in tps.items():
                try:
                    out[key] = result.partitionResult(tp).get(timeout_s, seconds).offset()
                except Exception:  # deleted topic or partition: no end offset, lag stays null
                    continue
            return out
        finally:
            admin.close()
    return ask


def consumer_lag_batch(spark: SparkSession, bootstrap: str, *, kafka_options: dict[str, str] | None = None,
                       end_offsets: EndOffsets | None = None) -> DataFrame:
    """Batch job: read all of ``__consumer_offsets`` now and return the consumer-lag table.

    ``spark`` needs Spark's Kafka connector (``kafkaemu.spark.session.local_session()`` makes such a
    session); without it this raises ``ConnectorUnavailable`` naming the package to add.
    """
    require_connector(spark)
    with offsets_topic_readable(spark):
        options = kafka_source_options(bootstrap, kafka_options, offsets_topic_partitions(spark, bootstrap))
        raw = spark.read.format("kafka").options(**options).option("endingOffsets", "latest").load()
        return consumer_lag_from_records(raw, end_offsets or jvm_end_offsets(spark, bootstrap))


class LagView:
    """Receives each micro-batch's full lag table: keeps the rows and a global temp view of them."""

    def __init__(self, view_name: str, end_offsets: EndOffsets,
                 on_batch: Callable[[list, int], None] | None = None) -> None:
        self.view_name = view_name
        self.end_offsets = end_offsets
        self.on_batch = on_batch
        self.rows: list = []
        self.batches = 0

    def __call__(self, latest: DataFrame, batch_id: int) -> None:
        spark = latest.sparkSession
        latest = latest.cache()
        rows = lag_table(latest, end_offsets_frame(spark, latest, self.end_offsets)).collect()
        latest.unpersist()
        # A view over rows, not over the batch: the batch's data is gone once this returns.
        spark.createDataFrame(rows, LAG_SCHEMA).createOrReplaceGlobalTempView(self.view_name)
        self.rows = rows
        self.batches += 1
        if self.on_batch is not None:
            self.on_batch(rows, batch_id)


def start_lag_query(raw_stream: DataFrame, end_offsets: EndOffsets, *, view_name: str = "consumer_lag",
                    processing_time: str | None = "5 seconds", checkpoint_location: str | None = None,
                    on_batch: Callable[[list, int], None] | None = None) -> tuple[StreamingQuery, LagView]:
    """Streaming: keep ``global_temp.<view_name>`` equal to the lag table as commits arrive."""
    sink = LagView(view_name, end_offsets, on_batch)
    writer = (latest_per_key(decode_offsets(raw_stream)).writeStream
              .outputMode("complete")
              .foreachBatch(sink)
              .option("checkpointLocation", checkpoint_location or tempfile.mkdtemp(prefix="kafkaemu-lag-")))
    if processing_time:
        writer = writer.trigger(processingTime=processing_time)
    return writer.queryName(view_name).start(), sink


def consumer_lag_stream(spark: SparkSession, bootstrap: str, *, view_name: str = "consumer_lag",
                        processing_time: str | None = "5 seconds", checkpoint_location: str | None = None,
                        kafka_options: dict[str, str] | None = None, end_offsets: EndOffsets | None = None,
                        on_batch: Callable[[list, int], None] | None = None) -> tuple[StreamingQuery, LagView]:
    """Streaming query over ``__consumer_offsets`` through Spark's Kafka source.

    The query takes the session's conf when it starts, so only it uses the consumer-based reader.
    ``spark`` needs Spark's Kafka connector, as for ``consumer_lag_batch``.
    """
    require_connector(spark)
    with offsets_topic_readable(spark):
        options = kafka_source_options(bootstrap, kafka_options, offsets_topic_partitions(spark, bootstrap))
        raw = spark.readStream.format("kafka").options(**options).load()
        return start_lag_query(raw, end_offsets or jvm_end_offsets(spark, bootstrap), view_name=view_name,
                               processing_time=processing_time, checkpoint_location=checkpoint_location,
                               on_batch=on_batch)


def rows_as_dicts(rows: Iterable) -> list[dict]:
    return [r.asDict() for r in rows]
