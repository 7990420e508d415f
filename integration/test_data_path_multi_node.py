"""Several emulated nodes: real clients produce to and fetch from each partition's leader, and
keep going when a leader moves (NOT_LEADER_OR_FOLLOWER / FENCED_LEADER_EPOCH, then new metadata)."""
import time

from kafkaemu.testing import KafkaEmulator


def test_confluent_kafka_follows_partition_leaders_across_a_move():
    from confluent_kafka import Consumer, Producer, TopicPartition
    with KafkaEmulator(nodes=3) as emu:
        emu.call(lambda b: b.topics.create("spread", 3, {}))
        leaders = emu.call(lambda b: [b.placement.partition_leader(p) for p in b.store.get("spread").partitions])
        assert sorted(leaders) == [0, 1, 2]
        producer = Producer({"bootstrap.servers": emu.bootstrap_server, "enable.idempotence": True,
                             "linger.ms": 1, "topic.metadata.refresh.interval.ms": 1000})
        for i in range(300):
            producer.produce("spread", value=b"%d" % i, partition=i % 3)
        assert producer.flush(10) == 0
        # partition 0 moves to another node (a new leader epoch); the producer must follow it
        new_leader = (leaders[0] + 1) % 3
        emu.call(lambda b: b.placement.move_leader("spread", 0, new_leader))
        for i in range(300, 600):
            producer.produce("spread", value=b"%d" % i, partition=i % 3)
        assert producer.flush(20) == 0

        consumer = Consumer({"bootstrap.servers": emu.bootstrap_server, "group.id": "spread",
                             "enable.auto.commit": False})
        consumer.assign([TopicPartition("spread", p, 0) for p in range(3)])
        got = {0: [], 1: [], 2: []}
        deadline = time.time() + 30
        while sum(map(len, got.values())) < 600 and time.time() < deadline:
            for m in consumer.consume(600, 1.0):
                assert m.error() is None, m.error()
                got[m.partition()].append(int(m.value()))
        consumer.close()
        for p in range(3):
            assert got[p] == list(range(p, 600, 3))
        hws = emu.call(lambda b: [p.high_watermark for p in b.store.get("spread").partitions])
        assert hws == [200, 200, 200]
