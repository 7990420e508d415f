"""Idempotent producers deliver exactly once across forced reconnects: the broker appends a
Produce request but its reply is lost and the connection dropped, so the client retries batches
the log already holds; kafkaemu answers those duplicates with their original offsets."""
import time

from kafkaemu.faults import FaultRule

from .data_path_records import create_topic, unique_topic

COUNT = 5000


def _read_values(emulator, topic, partitions):
    from confluent_kafka import Consumer, TopicPartition
    c = Consumer({"bootstrap.servers": emulator.bootstrap_server, "group.id": topic, "enable.auto.commit": False})
    c.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
    values = []
    deadline = time.time() + 30
    idle = 0
    while time.time() < deadline and idle < 3:
        batch = c.consume(1000, 0.5)
        idle = idle + 1 if not batch else 0
        for m in batch:
            assert m.error() is None
            values.append(m.value())
    c.close()
    return values


def test_librdkafka_idempotent_producer_exactly_once_across_dropped_connections(kafka_emulator):
    from confluent_kafka import Producer
    topic = unique_topic("idem-ck")
    create_topic(kafka_emulator, topic, partitions=2)
    producer = Producer({"bootstrap.servers": kafka_emulator.bootstrap_server, "enable.idempotence": True,
                         "client.id": topic, "linger.ms": 2, "batch.num.messages": 200,
                         "max.in.flight.requests.per.connection": 5, "retry.backoff.ms": 10})
    errors = []

    def on_delivery(err, msg):
        if err is not None:
            errors.append(err)

    for i in range(COUNT):
        if i in (1000, 3000):
            producer.flush(10)
            # the next two Produce requests are appended, then their replies are lost with the connection
            kafka_emulator.call(lambda b: b.faults.add(FaultRule(api_key=0, drop_connection=True, client_id=topic,
                                                                 times=2)))
        producer.produce(topic, value=b"%d" % i, partition=i % 2, on_delivery=on_delivery)
        producer.poll(0)
    assert producer.flush(30) == 0
    assert errors == []
    fired = kafka_emulator.call(lambda b: [r for r in b.faults.rules if r.client_id == topic])
    assert fired == []  # both fault rules were used up: connections were really dropped mid-stream
    duplicates = kafka_emulator.call(lambda b: sum(p.duplicate_batches for p in b.store.get(topic).partitions))
    assert duplicates >= 2  # the retried batches reached the log again and were recognised
    values = _read_values(kafka_emulator, topic, 2)
    assert sorted(values, key=int) == [b"%d" % i for i in range(COUNT)]  # every record, exactly once
    for p in (0, 1):
        part = [int(v) for v in values if int(v) % 2 == p]
        assert part == sorted(part)  # and in order within each partition


def test_kafka_python_idempotent_producer_gets_a_producer_id(kafka_emulator):
    from kafka import KafkaProducer
    topic = unique_topic("idem-kp")
    create_topic(kafka_emulator, topic, partitions=1)
    producer = KafkaProducer(bootstrap_servers=kafka_emulator.bootstrap_server, enable_idempotence=True)
    for i in range(100):
        producer.send(topic, value=b"%d" % i)
    producer.flush(10)
    producer.close()
    batches = kafka_emulator.call(lambda b: b.store.get(topic).partitions[0].batches())
    from kafkaemu.storage.record_batch import parse_header
    headers = [parse_header(x) for x in batches]
    assert {h.producer_id for h in headers} != {-1} and headers[0].base_sequence == 0
    assert kafka_emulator.call(lambda b: b.store.get(topic).partitions[0].high_watermark) == 100
