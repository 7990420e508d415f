"""Spark's Kafka source reading a topic that holds committed and aborted transactions: with
``kafka.isolation.level=read_committed`` a batch and a streaming read count only the committed
records (the aborted ones and the markers leave offset gaps Spark must step over)."""
from __future__ import annotations

import pytest
from kafka import KafkaProducer
from kafka.admin import KafkaAdminClient, NewTopic

STREAM_TIMEOUT_S = 90


def create(bootstrap, topic, partitions=3):
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        admin.create_topics([NewTopic(topic, partitions, 1)])
    finally:
        admin.close()


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


@pytest.fixture(scope="module")
def bootstrap(spark, kafka_emulator):
    return kafka_emulator.bootstrap_server


def transactions(bootstrap, topic, outcomes, per_transaction=10, partitions=3):
    """One transaction per outcome (True: committed), each spreading its records over the partitions."""
    producer = KafkaProducer(bootstrap_servers=bootstrap, transactional_id=f"{topic}-tid")
    try:
        producer.init_transactions()
        for n, commit in enumerate(outcomes):
            producer.begin_transaction()
            for i in range(per_transaction):
                producer.send(topic, value=f"{'c' if commit else 'a'}{n}-{i}".encode(), partition=i % partitions)
            producer.flush()
            producer.commit_transaction() if commit else producer.abort_transaction()
    finally:
        producer.close()


def test_read_committed_batch_and_stream_count_only_committed_records(spark, bootstrap, topic_name, tmp_path):
    topic = topic_name("txn")
    create(bootstrap, topic)
    transactions(bootstrap, topic, [True, False, True, False, True])
    committed = sorted(f"c{n}-{i}" for n in (0, 2, 4) for i in range(10))

    def batch(isolation):
        return (kafka_reader(spark, bootstrap, subscribe=topic, startingOffsets="earliest", endingOffsets="latest",
                             **{"kafka.isolation.level": isolation})
                .load().selectExpr("CAST(value AS STRING) AS value").collect())

    assert sorted(r["value"] for r in batch("read_committed")) == committed
    assert len(batch("read_uncommitted")) == 50

    query = (kafka_stream(spark, bootstrap, subscribe=topic, startingOffsets="earliest",
                          **{"kafka.isolation.level": "read_committed"})
             .selectExpr("CAST(value AS STRING) AS value")
             .writeStream.format("memory").queryName("txn_read_committed")
             .option("checkpointLocation", str(tmp_path / "ckpt"))
             .trigger(availableNow=True).start())
    assert query.awaitTermination(STREAM_TIMEOUT_S), "availableNow query did not finish"
    assert query.exception() is None
    assert sorted(r["value"] for r in spark.table("txn_read_committed").collect()) == committed
