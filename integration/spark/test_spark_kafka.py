"""Spark's own Kafka source and sink against kafkaemu: batch reads, structured streaming with
subscribe and subscribePattern (availableNow and processingTime triggers), the driver's
deprecated consumer-group offset fetching, and a streaming write read back exactly once."""
from __future__ import annotations

import time

import pytest
from kafka import KafkaProducer
from kafka.admin import KafkaAdminClient, NewTopic

STREAM_TIMEOUT_S = 90


@pytest.fixture(scope="module")
def bootstrap(spark, kafka_emulator):
    return kafka_emulator.bootstrap_server


def create(bootstrap, topic, partitions=3):
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        admin.create_topics([NewTopic(topic, partitions, 1)])
    finally:
        admin.close()


def produce(bootstrap, topic, records, partitions=3):
    """records: (key, value, headers) tuples, spread over the partitions in order."""
    producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all")
    try:
        for i, (key, value, headers) in enumerate(records):
            producer.send(topic, key=key, value=value, headers=headers, partition=i % partitions)
        producer.flush()
    finally:
        producer.close()


def records(n, tag="r"):
    return [(f"k{i}".encode(), f"{tag}{i}".encode(), [("h", f"hv{i}".encode())]) for i in range(n)]


def kafka_reader(spark, bootstrap, **options):
    reader = spark.read.format("kafka").option("kafka.bootstrap.servers", bootstrap)
    for k, v in options.items():
        reader = reader.option(k, v)
    return reader


def kafka_stream(spark, bootstrap, **options):
    reader = spark.readStream.format("kafka").option("kafka.bootstrap.servers", bootstrap)
    for k, v in options.items():
        reader = reader.option(k, v)
    return reader.load()


def values(rows):
    return sorted(r["value"] if isinstance(r["value"], str) else bytes(r["value"]).decode() for r in rows)


def wait_for_rows(spark, table, count, query):
    deadline = time.monotonic() + STREAM_TIMEOUT_S
    while time.monotonic() < deadline:
        if query.exception() is not None:
            raise AssertionError(f"streaming query failed: {query.exception()}")
        rows = spark.table(table).collect()
        if len(rows) >= count:
            return rows
        time.sleep(0.2)
    raise AssertionError(f"{table}: {len(spark.table(table).collect())} rows after {STREAM_TIMEOUT_S}s, wanted {count}")


@pytest.fixture
def deprecated_offset_fetching(spark):
    key = "spark.sql.streaming.kafka.useDeprecatedOffsetFetching"
    old = spark.conf.get(key, "false")
    spark.conf.set(key, "true")
    yield
    spark.conf.set(key, old)


def test_batch_read_earliest_to_latest_with_keys_values_headers(spark, bootstrap, topic_name):
    topic = topic_name("batch")
    create(bootstrap, topic)
    produce(bootstrap, topic, records(30))
    df = kafka_reader(spark, bootstrap, subscribe=topic, startingOffsets="earliest", endingOffsets="latest",
                      includeHeaders="true").load()
    rows = df.collect()
    assert len(rows) == 30
    got = sorted((bytes(r["key"]).decode(), bytes(r["value"]).decode(),
                  [(h["key"], bytes(h["value"]).decode()) for h in r["headers"]]) for r in rows)
    assert got == sorted((f"k{i}", f"r{i}", [("h", f"hv{i}")]) for i in range(30))
    assert {r["topic"] for r in rows} == {topic}
    by_partition = {}
    for r in rows:
        by_partition.setdefault(r["partition"], []).append(r["offset"])
    assert {p: sorted(o) for p, o in by_partition.items()} == {p: list(range(10)) for p in range(3)}


def test_batch_read_of_an_offset_range(spark, bootstrap, topic_name):
    topic = topic_name("range")
    create(bootstrap, topic, partitions=1)
    produce(bootstrap, topic, records(20), partitions=1)
    starting = f'{{"{topic}": {{"0": 5}}}}'
    ending = f'{{"{topic}": {{"0": 12}}}}'
    rows = kafka_reader(spark, bootstrap, subscribe=topic, startingOffsets=starting, endingOffsets=ending).load().collect()
    assert sorted(r["offset"] for r in rows) == list(range(5, 12))


def test_stream_subscribe_available_now(spark, bootstrap, topic_name, tmp_path):
    topic = topic_name("avail")
    create(bootstrap, topic)
    produce(bootstrap, topic, records(40))
    query = (kafka_stream(spark, bootstrap, subscribe=topic, startingOffsets="earliest")
             .selectExpr("CAST(value AS STRING) AS value")
             .writeStream.format("memory").queryName("avail_now")
             .option("checkpointLocation", str(tmp_path / "ckpt"))
             .trigger(availableNow=True).start())
    assert query.awaitTermination(STREAM_TIMEOUT_S), "availableNow query did not finish"
    assert query.exception() is None
    assert sorted(r["value"] for r in spark.table("avail_now").collect()) == sorted(f"r{i}" for i in range(40))


def test_stream_subscribe_pattern_processing_time_sees_new_records_and_topics(spark, bootstrap, topic_name, tmp_path):
    prefix = topic_name("pattern")
    first, second = f"{prefix}-a", f"{prefix}-b"
    create(bootstrap, first)
    produce(bootstrap, first, records(10, "a"))
    query = (kafka_stream(spark, bootstrap, subscribePattern=f"{prefix}-.*", startingOffsets="earliest")
             .selectExpr("topic", "CAST(value AS STRING) AS value")
             .writeStream.format("memory").queryName("pattern_pt")
             .option("checkpointLocation", str(tmp_path / "ckpt"))
             .trigger(processingTime="500 milliseconds").start())
    try:
        wait_for_rows(spark, "pattern_pt", 10, query)
        produce(bootstrap, first, records(5, "late"))           # produced while the query runs
        create(bootstrap, second)                               # a topic that appears later and matches
        produce(bootstrap, second, records(7, "b"))
        rows = wait_for_rows(spark, "pattern_pt", 22, query)
    finally:
        query.stop()
    assert len(rows) == 22
    assert sorted(r["value"] for r in rows if r["topic"] == first) == sorted(
        [f"a{i}" for i in range(10)] + [f"late{i}" for i in range(5)])
    assert sorted(r["value"] for r in rows if r["topic"] == second) == sorted(f"b{i}" for i in range(7))


def test_stream_subscribe_processing_time_receives_records_produced_while_running(spark, bootstrap, topic_name, tmp_path):
    topic = topic_name("live")
    create(bootstrap, topic)
    query = (kafka_stream(spark, bootstrap, subscribe=topic, startingOffsets="latest")
             .selectExpr("CAST(value AS STRING) AS value")
             .writeStream.format("memory").queryName("live_pt")
             .option("checkpointLocation", str(tmp_path / "ckpt"))
             .trigger(processingTime="500 milliseconds").start())
    try:
        deadline = time.monotonic() + STREAM_TIMEOUT_S
        while query.lastProgress is None and time.monotonic() < deadline:  # the start offsets are fixed
            time.sleep(0.1)
        produce(bootstrap, topic, records(25, "live"))
        rows = wait_for_rows(spark, "live_pt", 25, query)
    finally:
        query.stop()
    assert values(rows) == sorted(f"live{i}" for i in range(25))


def test_deprecated_offset_fetching_stream_and_batch(spark, bootstrap, topic_name, tmp_path, deprecated_offset_fetching):
    """The driver's KafkaConsumer joins a group and polls ~500 ms; it must see the partitions at once."""
    topic = topic_name("deprecated")
    create(bootstrap, topic)
    produce(bootstrap, topic, records(30))
    query = (kafka_stream(spark, bootstrap, subscribe=topic, startingOffsets="earliest")
             .selectExpr("CAST(value AS STRING) AS value")
             .writeStream.format("memory").queryName("deprecated_stream")
             .option("checkpointLocation", str(tmp_path / "ckpt"))
             .trigger(processingTime="500 milliseconds").start())
    try:
        wait_for_rows(spark, "deprecated_stream", 30, query)
        produce(bootstrap, topic, records(6, "more"))
        rows = wait_for_rows(spark, "deprecated_stream", 36, query)
    finally:
        query.stop()
    assert values(rows) == sorted([f"r{i}" for i in range(30)] + [f"more{i}" for i in range(6)])

    # A batch read joins a fresh group for the starting offsets and another for the ending ones;
    # both must get the partitions within their one poll or Spark sees different partition sets.
    batch = kafka_reader(spark, bootstrap, subscribe=topic, startingOffsets="earliest", endingOffsets="latest").load()
    assert values(batch.collect()) == sorted([f"r{i}" for i in range(30)] + [f"more{i}" for i in range(6)])


def test_deprecated_offset_fetching_subscribe_pattern_available_now(spark, bootstrap, topic_name, tmp_path,
                                                                   deprecated_offset_fetching):
    prefix = topic_name("deppat")
    create(bootstrap, f"{prefix}-x")
    produce(bootstrap, f"{prefix}-x", records(12))
    query = (kafka_stream(spark, bootstrap, subscribePattern=f"{prefix}-.*", startingOffsets="earliest")
             .selectExpr("CAST(value AS STRING) AS value")
             .writeStream.format("memory").queryName("deprecated_pattern")
             .option("checkpointLocation", str(tmp_path / "ckpt"))
             .trigger(availableNow=True).start())
    assert query.awaitTermination(STREAM_TIMEOUT_S)
    assert query.exception() is None
    assert values(spark.table("deprecated_pattern").collect()) == sorted(f"r{i}" for i in range(12))


def test_streaming_kafka_sink_round_trip_exactly_once(spark, bootstrap, topic_name, tmp_path):
    source, sink = topic_name("sink-in"), topic_name("sink-out")
    create(bootstrap, source)
    create(bootstrap, sink, partitions=2)
    produce(bootstrap, source, records(50))
    query = (kafka_stream(spark, bootstrap, subscribe=source, startingOffsets="earliest", maxOffsetsPerTrigger="20",
                          includeHeaders="true")
             .selectExpr("key", "CONCAT('out-', CAST(value AS STRING)) AS value", "headers")
             .writeStream.format("kafka")
             .option("kafka.bootstrap.servers", bootstrap)
             .option("topic", sink)
             .option("checkpointLocation", str(tmp_path / "ckpt"))
             .trigger(availableNow=True).start())
    assert query.awaitTermination(STREAM_TIMEOUT_S), "sink query did not finish"
    assert query.exception() is None
    rows = kafka_reader(spark, bootstrap, subscribe=sink, startingOffsets="earliest", endingOffsets="latest",
                        includeHeaders="true").load().collect()
    assert values(rows) == sorted(f"out-r{i}" for i in range(50))      # every record once: no loss, no duplicate
    assert sorted(bytes(r["key"]).decode() for r in rows) == sorted(f"k{i}" for i in range(50))
    assert all([(h["key"], bytes(h["value"]).decode()) for h in r["headers"]] ==
               [("h", "hv" + bytes(r["key"]).decode()[1:])] for r in rows)


def test_batch_write_then_read(spark, bootstrap, topic_name):
    topic = topic_name("batch-write")
    create(bootstrap, topic, partitions=2)
    (spark.range(100).selectExpr("CAST(id AS STRING) AS key", "CAST(id * 2 AS STRING) AS value")
     .write.format("kafka").option("kafka.bootstrap.servers", bootstrap).option("topic", topic).save())
    rows = kafka_reader(spark, bootstrap, subscribe=topic, startingOffsets="earliest", endingOffsets="latest").load()
    got = sorted((int(bytes(r["key"])), int(bytes(r["value"]))) for r in rows.collect())
    assert got == [(i, 2 * i) for i in range(100)]
