"""Produce and consume through kafkaemu's broker with confluent-kafka's serializers, which call
kafkaemu's schema registry."""
from __future__ import annotations

import time
import uuid


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def produce(emulator, topic: str, values: list, serializer, key_serializer=None, keys=None) -> None:
    from confluent_kafka import Producer
    from confluent_kafka.serialization import MessageField, SerializationContext
    producer = Producer({"bootstrap.servers": emulator.bootstrap_server})
    for i, value in enumerate(values):
        key = keys[i] if keys else None
        producer.produce(topic, value=serializer(value, SerializationContext(topic, MessageField.VALUE)),
                         key=key_serializer(key, SerializationContext(topic, MessageField.KEY)) if key_serializer
                         else None)
    assert producer.flush(30) == 0


def consume(emulator, topic: str, count: int, deserializer, key_deserializer=None) -> list:
    from confluent_kafka import Consumer, TopicPartition
    from confluent_kafka.serialization import MessageField, SerializationContext
    consumer = Consumer({"bootstrap.servers": emulator.bootstrap_server, "group.id": topic,
                         "enable.auto.commit": False})
    consumer.assign([TopicPartition(topic, 0, 0)])
    got = []
    deadline = time.time() + 60
    try:
        while len(got) < count and time.time() < deadline:
            for m in consumer.consume(count - len(got), 1.0):
                assert m.error() is None, m.error()
                value = deserializer(m.value(), SerializationContext(topic, MessageField.VALUE))
                if key_deserializer is not None:
                    got.append((key_deserializer(m.key(), SerializationContext(topic, MessageField.KEY)), value))
                else:
                    got.append(value)
    finally:
        consumer.close()
    return got
