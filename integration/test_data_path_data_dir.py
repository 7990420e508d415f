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


def test_a_kill_during_acked_produces_and_segment_rolls_loses_nothing_acked(tmp_path):
    """A stream of acknowledged produces (small segments: rolls all along) and offset commits,
    killed mid-stream: after a restart every acknowledged record is read back, in order, and the
    last acknowledged commit is there."""
    from confluent_kafka import Consumer, Producer, TopicPartition
    from confluent_kafka.admin import AdminClient, NewTopic
    first = KafkaEmulator(subprocess_mode=True, data_dir=str(tmp_path)).start()
    acked: list[bytes] = []
    last_commit = None
    try:
        admin = AdminClient({"bootstrap.servers": first.bootstrap_server})
        admin.create_topics([NewTopic("rolling", 1, 1, config={"segment.bytes": "4096",
                                                                "index.interval.bytes": "512"})])["rolling"].result(10)
        producer = Producer({"bootstrap.servers": first.bootstrap_server, "enable.idempotence": True,
                             "linger.ms": 1, "batch.size": 2000})   # small batches: many per segment
        consumer = Consumer({"bootstrap.servers": first.bootstrap_server, "group.id": "rolling-g",
                             "enable.auto.commit": False})

        def delivered(err, msg):
            if err is None:
                acked.append(msg.value())

        i = 0
        while len(acked) < 3000:
            producer.produce("rolling", value=b"record-%06d" % i + b"." * 100, partition=0, on_delivery=delivered)
            i += 1
            if i % 200 == 0:
                producer.poll(0)
                consumer.commit(offsets=[TopicPartition("rolling", 0, len(acked))], asynchronous=False)
                last_commit = len(acked)
            if i % 50 == 0:
                producer.poll(0.001)
        segments = [f for f in os.listdir(tmp_path / "rolling-0") if f.endswith(".log")]
        assert len(segments) > 10, "the stream did not roll segments"
        os.kill(first._proc.pid, signal.SIGKILL)   # mid-stream: produces in flight, no clean shutdown
        producer.flush(0)
        consumer.close()
    finally:
        if first._proc.poll() is None:
            os.kill(first._proc.pid, signal.SIGKILL)
        first._proc.wait()
        first._proc = None
        first.port = None
    acked_now = list(acked)

    with KafkaEmulator(subprocess_mode=True, data_dir=str(tmp_path)) as second:
        consumer = Consumer({"bootstrap.servers": second.bootstrap_server, "group.id": "rolling-g",
                             "enable.auto.commit": False})
        try:
            assert consumer.committed([TopicPartition("rolling", 0)], timeout=10)[0].offset >= last_commit
            low, high = consumer.get_watermark_offsets(TopicPartition("rolling", 0), timeout=10)
            assert low == 0 and high >= len(acked_now)
            consumer.assign([TopicPartition("rolling", 0, 0)])
            got = []
            deadline = time.time() + 30
            while len(got) < high and time.time() < deadline:
                got += [m.value() for m in consumer.consume(500, 1.0) if m.error() is None]
        finally:
            consumer.close()
    assert got[:len(acked_now)] == acked_now
