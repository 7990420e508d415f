"""Storage faults against a real kafkaemu process and real clients: a full disk (a small tmpfs,
root only) answers KAFKA_STORAGE_ERROR without closing connections and takes writes again once
space is back; a corrupt recovery-point checkpoint, garbage inside an index and a truncated
topics.json are recovered on start. After each case a restart serves every acknowledged record."""
import os
import signal
import time

import pytest

from kafkaemu.storage.record_batch import build_batch
from kafkaemu.testing import KafkaEmulator, raw_client

from tests.storage.disk import fill, small_tmpfs


def kill(emulator: KafkaEmulator) -> None:
    os.kill(emulator._proc.pid, signal.SIGKILL)   # no clean shutdown
    emulator._proc.wait()
    emulator._proc = None
    emulator.port = None


def read_all(bootstrap: str, topic: str, expected: int) -> list[bytes]:
    from kafka import KafkaConsumer, TopicPartition
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False, consumer_timeout_ms=3000)
    try:
        tp = TopicPartition(topic, 0)
        consumer.assign([tp])
        consumer.seek_to_beginning(tp)
        got: list[bytes] = []
        deadline = time.time() + 30
        while len(got) < expected and time.time() < deadline:
            for records in consumer.poll(1000, max_records=1000).values():
                got += [r.value for r in records]
        assert consumer.end_offsets([tp])[tp] == expected
        return got
    finally:
        consumer.close()


@pytest.fixture
def small_disk(tmp_path):
    with small_tmpfs(tmp_path, "2m") as mount:
        yield mount


def test_a_full_disk_answers_storage_error_and_every_acked_record_survives_restarts(small_disk):
    from kafka import KafkaAdminClient, KafkaProducer
    from kafka.admin import NewTopic
    from kafka.errors import KafkaStorageError
    data = str(small_disk / "data")
    first = KafkaEmulator(subprocess_mode=True, data_dir=data).start()
    acked: list[bytes] = []
    try:
        admin = KafkaAdminClient(bootstrap_servers=first.bootstrap_server)
        admin.create_topics([NewTopic("full", 1, 1, topic_configs={"segment.bytes": "65536"})])
        admin.close()
        producer = KafkaProducer(bootstrap_servers=first.bootstrap_server, acks="all", retries=0, linger_ms=0)

        def send(i: int) -> bool:
            value = b"record-%06d" % i + b"." * 1000
            try:
                producer.send("full", value, partition=0).get(timeout=10)
            except KafkaStorageError:
                return False
            acked.append(value)
            return True

        for i in range(50):
            assert send(i)
        fill(small_disk / "filler")
        refused = sum(not send(i) for i in range(50, 400))
        assert refused, "the full disk refused nothing"
        sock = raw_client.connect(first)   # one connection: answered KAFKA_STORAGE_ERROR, then served on
        for correlation_id in (1, 2):
            records = build_batch([(None, b"x" * 2000, [], 0)])
            reply = raw_client.request(sock, 0, 9, {"transactional_id": None, "acks": -1, "timeout_ms": 5000,
                                                    "topic_data": [{"name": "full", "partition_data": [
                                                        {"index": 0, "records": records}]}]}, correlation_id)
            assert reply.responses[0].partition_responses[0].error_code == 56
        assert raw_client.request(sock, 18, 0, {}, 3).error_code == 0
        sock.close()
        os.unlink(small_disk / "filler")
        for i in range(400, 450):
            assert send(i), "writes did not resume once space was back"
        producer.close()
        assert read_all(first.bootstrap_server, "full", len(acked)) == acked
    finally:
        kill(first)
    with KafkaEmulator(subprocess_mode=True, data_dir=data) as second:   # after a kill
        assert read_all(second.bootstrap_server, "full", len(acked)) == acked
    with KafkaEmulator(subprocess_mode=True, data_dir=data) as third:    # after a clean stop
        assert read_all(third.bootstrap_server, "full", len(acked)) == acked


def _corrupt_checkpoint(data):
    (data / "recovery-point-offset-checkpoint").write_bytes(b"\xff\xfe garbage \x81")


def _corrupt_index(data):
    d = data / "faulty-0"
    first = sorted(f for f in os.listdir(d) if f.endswith(".index"))[0]
    index = bytearray((d / first).read_bytes())
    index[8:16] = (1).to_bytes(4, "big") + (0xFFFFFF00).to_bytes(4, "big")   # backwards, a negative position
    (d / first).write_bytes(bytes(index))


def _truncate_topics(data):
    meta = (data / "topics.json").read_bytes()
    (data / "topics.json").write_bytes(meta[:len(meta) // 3])


@pytest.mark.parametrize("corrupt", [_corrupt_checkpoint, _corrupt_index, _truncate_topics])
def test_a_damaged_data_directory_starts_and_serves_every_acked_record(tmp_path, corrupt):
    from kafka import KafkaAdminClient, KafkaProducer
    from kafka.admin import NewTopic
    acked = [b"value-%05d" % i + b"." * 200 for i in range(2000)]
    with KafkaEmulator(subprocess_mode=True, data_dir=str(tmp_path)) as first:
        admin = KafkaAdminClient(bootstrap_servers=first.bootstrap_server)
        admin.create_topics([NewTopic("faulty", 1, 1, topic_configs={"segment.bytes": "65536",
                                                                     "index.interval.bytes": "1024"})])
        admin.close()
        producer = KafkaProducer(bootstrap_servers=first.bootstrap_server, acks="all", batch_size=4096)
        for value in acked:
            producer.send("faulty", value, partition=0)
        producer.flush(30)
        producer.close()
    corrupt(tmp_path)
    with KafkaEmulator(subprocess_mode=True, data_dir=str(tmp_path)) as second:
        assert read_all(second.bootstrap_server, "faulty", len(acked)) == acked
