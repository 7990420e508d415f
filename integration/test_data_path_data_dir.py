"""With a data directory, records and committed offsets survive a kill of the kafkaemu process:
a restarted emulator on the same directory serves the same log to a real client."""
import os
import signal
import time

from kafkaemu.testing import KafkaEmulator


def test_records_and_commits_survive_a_kill(tmp_path):
    from confluent_kafka import Consumer, Producer, TopicPartition
    first = KafkaEmulator(subprocess_mode=True, data_dir=str(tmp_path), num_partitions=2).start()
    try:
        producer = Producer({"bootstrap.servers": first.bootstrap_server, "enable.idempotence": True,
                             "compression.type": "lz4"})
        for i in range(500):
            producer.produce("durable", key=b"%d" % i, value=b"value-%d" % i, partition=i % 2)
        assert producer.flush(10) == 0
        consumer = Consumer({"bootstrap.servers": first.bootstrap_server, "group.id": "durable-g",
                             "enable.auto.commit": False})
        consumer.commit(offsets=[TopicPartition("durable", 0, 123)], asynchronous=False)
        consumer.close()
    finally:
        os.kill(first._proc.pid, signal.SIGKILL)  # no clean shutdown
        first._proc.wait()
        first._proc = None
        first.port = None

    with KafkaEmulator(subprocess_mode=True, data_dir=str(tmp_path)) as second:
        consumer = Consumer({"bootstrap.servers": second.bootstrap_server, "group.id": "durable-g",
                             "enable.auto.commit": False})
        try:
            committed = consumer.committed([TopicPartition("durable", 0)], timeout=10)
            assert committed[0].offset == 123
            assert consumer.get_watermark_offsets(TopicPartition("durable", 1), timeout=5) == (0, 250)
            consumer.assign([TopicPartition("durable", 1, 0)])
            got = []
            deadline = time.time() + 20
            while len(got) < 250 and time.time() < deadline:
                got += [m.value() for m in consumer.consume(250, 1.0) if m.error() is None]
        finally:
            consumer.close()
        assert got == [b"value-%d" % i for i in range(1, 500, 2)]
