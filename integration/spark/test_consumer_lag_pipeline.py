"""kafkaemu.spark's consumer-lag pipeline end to end: a real consumer group commits through
kafkaemu, Spark reads __consumer_offsets through its Kafka source, the table shows the lag."""
from __future__ import annotations

import time

from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import KafkaAdminClient, NewTopic
from kafka.structs import OffsetAndMetadata

from kafkaemu.spark.consumer_lag import consumer_lag_batch, consumer_lag_stream


def setup_group(bootstrap, topic, group, produced=(10, 6), committed=(7, 6)):
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    admin.create_topics([NewTopic(topic, 2, 1)])
    admin.close()
    producer = KafkaProducer(bootstrap_servers=bootstrap)
    for p, n in enumerate(produced):
        for i in range(n):
            producer.send(topic, value=b"x", partition=p)
    producer.flush()
    producer.close()
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=group, enable_auto_commit=False)
    consumer.assign([TopicPartition(topic, 0), TopicPartition(topic, 1)])
    consumer.commit({TopicPartition(topic, p): OffsetAndMetadata(o, "", -1) for p, o in enumerate(committed)})
    consumer.close()


def test_batch_lag_table(spark, kafka_emulator, topic_name):
    bootstrap = kafka_emulator.bootstrap_server
    topic, group = topic_name("lag"), topic_name("lag-group")
    before = int(time.time() * 1000)
    setup_group(bootstrap, topic, group)
    rows = [r.asDict() for r in consumer_lag_batch(spark, bootstrap).where(f"`group` = '{group}'").collect()]
    assert [(r["topic"], r["partition"], r["committed_offset"], r["end_offset"], r["lag"]) for r in rows] == [
        (topic, 0, 7, 10, 3), (topic, 1, 6, 6, 0)]
    assert all(r["last_commit_time"].timestamp() * 1000 >= before - 1000 for r in rows)


def test_streaming_lag_view_follows_new_commits(spark, kafka_emulator, topic_name, tmp_path):
    bootstrap = kafka_emulator.bootstrap_server
    topic, group = topic_name("lagstream"), topic_name("lagstream-group")
    setup_group(bootstrap, topic, group, produced=(4, 4), committed=(1, 2))
    query, view = consumer_lag_stream(spark, bootstrap, view_name="lag_it", processing_time="500 milliseconds",
                                      checkpoint_location=str(tmp_path / "ckpt"))
    try:
        query.processAllAvailable()
        mine = [r for r in view.rows if r["group"] == group]
        assert [(r["partition"], r["lag"]) for r in mine] == [(0, 3), (1, 2)]
        consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=group, enable_auto_commit=False)
        consumer.assign([TopicPartition(topic, 0)])
        consumer.commit({TopicPartition(topic, 0): OffsetAndMetadata(4, "", -1)})
        consumer.close()
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            table = spark.table("global_temp.lag_it").where(f"`group` = '{group}'").orderBy("partition").collect()
            if table and table[0]["lag"] == 0:
                break
            time.sleep(0.3)
        assert [(r["partition"], r["committed_offset"], r["lag"]) for r in table] == [(0, 4, 0), (1, 2, 2)]
    finally:
        query.stop()
