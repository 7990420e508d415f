"""What real clients see, against Apache Kafka 4.4.0 and against kafkaemu: the same kafka-python and
confluent-kafka scenarios run against both, and their observations (offsets, partitions, records,
group assignment, committed offsets, errors) compared field by field (integration/differential/)."""
from __future__ import annotations

import time

import pytest

NAMES = iter(range(1, 1000))


def _confluent_observe(topic: str, group: str):
    confluent_kafka = pytest.importorskip("confluent_kafka")
    from confluent_kafka.admin import AdminClient, NewTopic

    def observe(bootstrap: str) -> dict:
        seen: dict = {}
        admin = AdminClient({"bootstrap.servers": bootstrap})
        futures = admin.create_topics([NewTopic(topic, 3, 1)])
        futures[topic].result(30)
        try:
            admin.create_topics([NewTopic(topic, 3, 1)])[topic].result(30)
        except confluent_kafka.KafkaException as exc:
            seen["create again"] = exc.args[0].name()
        producer = confluent_kafka.Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True,
                                             "linger.ms": 0})
        delivered = []
        for i in range(12):
            producer.produce(topic, key=b"k%d" % (i % 4), value=b"v%d" % i, partition=i % 3,
                             on_delivery=lambda err, msg: delivered.append(
                                 (err and err.name(), msg.partition(), msg.offset())))
        producer.flush(30)
        seen["delivered"] = sorted(delivered)
        consumer = confluent_kafka.Consumer({"bootstrap.servers": bootstrap, "group.id": group,
                                             "auto.offset.reset": "earliest", "enable.auto.commit": False,
                                             "group.protocol": "consumer"})
        consumer.subscribe([topic])
        records, deadline = [], time.monotonic() + 60
        while len(records) < 12 and time.monotonic() < deadline:
            msg = consumer.poll(0.5)
            if msg is not None and not msg.error():
                records.append((msg.partition(), msg.offset(), msg.key(), msg.value()))
        seen["consumed"] = sorted(records)
        seen["assignment"] = sorted((tp.topic, tp.partition) for tp in consumer.assignment())
        consumer.commit(asynchronous=False)
        seen["committed"] = sorted((tp.partition, tp.offset) for tp in consumer.committed(
            [confluent_kafka.TopicPartition(topic, p) for p in range(3)], 30))
        seen["watermarks"] = [consumer.get_watermark_offsets(confluent_kafka.TopicPartition(topic, p), 30)
                              for p in range(3)]
        consumer.close()
        described = admin.describe_consumer_groups([group])[group].result(30)
        seen["group"] = {"state": str(described.state), "type": str(described.type), "members": len(described.members)}
        return seen
    return observe


def _kafka_python_observe(topic: str, group: str):
    kafka = pytest.importorskip("kafka")
    from kafka.admin import KafkaAdminClient, NewTopic
    from kafka.errors import TopicAlreadyExistsError

    def observe(bootstrap: str) -> dict:
        seen: dict = {}
        admin = KafkaAdminClient(bootstrap_servers=bootstrap)
        admin.create_topics([NewTopic(topic, 3, 1)])
        try:
            admin.create_topics([NewTopic(topic, 3, 1)])
        except TopicAlreadyExistsError as exc:
            seen["create again"] = type(exc).__name__
        producer = kafka.KafkaProducer(bootstrap_servers=bootstrap, acks="all")
        futures = [producer.send(topic, key=b"k%d" % (i % 4), value=b"v%d" % i, partition=i % 3) for i in range(12)]
        producer.flush(30)
        seen["delivered"] = sorted((f.get(30).partition, f.get(30).offset) for f in futures)
        producer.close()
        consumer = kafka.KafkaConsumer(topic, bootstrap_servers=bootstrap, group_id=group,
                                       auto_offset_reset="earliest", enable_auto_commit=False)
        records, deadline = [], time.monotonic() + 60
        while len(records) < 12 and time.monotonic() < deadline:
            for batch in consumer.poll(500).values():
                records += [(r.partition, r.offset, r.key, r.value) for r in batch]
        seen["consumed"] = sorted(records)
        seen["assignment"] = sorted((tp.topic, tp.partition) for tp in consumer.assignment())
        consumer.commit()
        seen["committed"] = [(p, consumer.committed(kafka.TopicPartition(topic, p))) for p in range(3)]
        seen["end offsets"] = sorted((tp.partition, o) for tp, o in consumer.end_offsets(list(consumer.assignment())).items())
        consumer.close()
        seen["group"] = admin.describe_groups([group])
        admin.close()
        return seen
    return observe


def test_confluent_kafka_produce_consume_commit(differential):
    n = next(NAMES)
    differential.check_observed(_confluent_observe(f"client-ck-{n}", f"client-ck-group-{n}"),
                                "confluent-kafka: produce, consume (consumer group), commit", "client: confluent-kafka")


def test_kafka_python_produce_consume_commit(differential):
    n = next(NAMES)
    differential.check_observed(_kafka_python_observe(f"client-kp-{n}", f"client-kp-group-{n}"),
                                "kafka-python: produce, consume (classic group), commit", "client: kafka-python")
