"""What Kafka's append validation, bounded decompression, log recovery and fetch.max.bytes mean for
a real client on loopback: a batch whose max timestamp was -1 (older Go clients) is read past and
found by time; compression bombs are answered with an error while the broker, its other
connections and the topic stay served; a damaged data directory starts; a fetch asking for
everything gets fetch.max.bytes."""
import pytest
import struct
import zlib

import crc32c
import zstandard
from kafka.record.legacy_records import LegacyRecordBatchBuilder

from kafkaemu.protocol.api_keys import ApiKey
from kafkaemu.protocol.errors import ErrorCode
from kafkaemu.storage import compression
from kafkaemu.storage.data_dir import SEGMENT
from kafkaemu.storage.record_batch import build_batch, encode_records
from kafkaemu.testing import KafkaEmulator
from kafkaemu.testing import raw_client as raw_kafka

from .data_path_records import create_topic, unique_topic

BASE_TS = 1_600_000_000_000
_HEADER = struct.Struct(">qiibIhiqqqhii")


def _produce(sock, name, records, version=9, partition=0):
    resp = raw_kafka.request(sock, ApiKey.PRODUCE, version, {"transactional_id": None, "acks": -1, "timeout_ms": 5000,
                                                             "topic_data": [{"name": name, "partition_data": [
                                                    {"index": partition, "records": records}]}]})
    return resp.responses[0].partition_responses[0]


def _list_offsets(sock, name, timestamp, version):
    resp = raw_kafka.request(sock, ApiKey.LIST_OFFSETS, version, {
        "replica_id": -1, "isolation_level": 0, "timeout_ms": 1000, "topics": [{"name": name, "partitions": [
            {"partition_index": 0, "current_leader_epoch": -1, "timestamp": timestamp, "max_num_offsets": 1}]}]})
    p = resp.topics[0].partitions[0]
    return p.timestamp, p.offset


def _with_max_timestamp_minus_one(batch: bytes) -> bytes:
    buf = bytearray(batch)
    struct.pack_into(">q", buf, 35, -1)
    struct.pack_into(">I", buf, 17, crc32c.crc32c(bytes(buf[21:])))
    return bytes(buf)


def test_a_batch_with_max_timestamp_minus_one_is_read_past_and_found_by_time(kafka_emulator):
    from confluent_kafka import Consumer, TopicPartition
    from confluent_kafka.admin import AdminClient, OffsetSpec
    topic = unique_topic("maxts")
    create_topic(kafka_emulator, topic, partitions=1)
    sock = raw_kafka.connect(kafka_emulator)
    try:
        for n, (start, codec) in enumerate(((0, compression.NONE), (10, compression.GZIP), (20, compression.NONE))):
            batch = build_batch([(b"k%d" % i, b"v%d" % i, [], BASE_TS + 1000 * i) for i in range(start, start + 10)],
                                codec=codec)
            assert _produce(sock, topic, _with_max_timestamp_minus_one(batch) if n == 1 else batch).error_code == 0
        for version in (1, 4, 7):       # the versions the issue checked
            assert _list_offsets(sock, topic, BASE_TS + 12_500, version) == (BASE_TS + 13_000, 13)
        assert _list_offsets(sock, topic, -3, 7) == (BASE_TS + 29_000, 29)
    finally:
        sock.close()

    consumer = Consumer({"bootstrap.servers": kafka_emulator.bootstrap_server, "group.id": topic,
                         "enable.auto.commit": False})
    try:
        consumer.assign([TopicPartition(topic, 0, 0)])
        got = []
        while len(got) < 30:
            batch = consumer.consume(30, 10.0)
            assert batch, "the consumer stopped getting records"
            got += [(m.offset(), m.timestamp()[1]) for m in batch if m.error() is None]
        assert got == [(i, BASE_TS + 1000 * i) for i in range(30)]
        found = consumer.offsets_for_times([TopicPartition(topic, 0, BASE_TS + 14_200)], timeout=10)
        assert found[0].offset == 15
    finally:
        consumer.close()
    admin = AdminClient({"bootstrap.servers": kafka_emulator.bootstrap_server})
    newest = admin.list_offsets({TopicPartition(topic, 0): OffsetSpec.max_timestamp()})[TopicPartition(topic, 0)]
    info = newest.result(10)
    assert (info.offset, info.timestamp) == (29, BASE_TS + 29_000)


def _zstd_bomb() -> bytes:
    """~128 KiB of zstd behind one valid record that inflates to 4 GiB of zeros."""
    c = zstandard.ZstdCompressor(level=1).compressobj()
    out = bytearray(c.compress(encode_records([(b"k", b"v", [], BASE_TS)], BASE_TS)))
    zeros = bytes(1 << 20)
    for _ in range(4096):
        out += c.compress(zeros)
    return bytes(out + c.flush())


def _raw_batch(payload: bytes, count: int, codec: int) -> bytes:
    buf = bytearray(_HEADER.pack(0, 49 + len(payload), -1, 2, 0, codec, count - 1, BASE_TS, BASE_TS, -1, -1, -1,
                                 count))
    buf += payload
    struct.pack_into(">I", buf, 17, crc32c.crc32c(bytes(buf[21:])))
    return bytes(buf)


def _legacy_gzip_bomb() -> bytes:
    """A gzip message set for Produce v2 of ~3 million empty messages (~80 MiB inflated); the
    issue's 954 KiB one holds ~37 million and stalled every client for 68 s."""
    one = LegacyRecordBatchBuilder(magic=1, compression_type=0, batch_size=1 << 20)
    one.append(0, BASE_TS, None, None)
    message = bytes(one.build())
    c = zlib.compressobj(9, zlib.DEFLATED, 31)
    block = message * 40_000
    inner = b"".join(c.compress(block) for _ in range(80)) + c.flush()
    wrapper = LegacyRecordBatchBuilder(magic=1, compression_type=0, batch_size=1 << 30)
    wrapper.append(0, BASE_TS, None, inner)
    data = bytearray(wrapper.build())
    data[17] |= compression.GZIP
    struct.pack_into(">I", data, 12, zlib.crc32(bytes(data[16:])))
    return bytes(data)


def test_compression_bombs_are_refused_and_the_broker_keeps_serving():
    from confluent_kafka import Consumer, Producer, TopicPartition
    from confluent_kafka.admin import AdminClient, NewTopic
    with KafkaEmulator(subprocess_mode=True) as emu:
        admin = AdminClient({"bootstrap.servers": emu.bootstrap_server})
        futures = admin.create_topics([NewTopic("plain", 1, 1), NewTopic("compacted", 1, 1,
                                                                          config={"cleanup.policy": "compact"})])
        for f in futures.values():
            f.result(10)
        bystander = raw_kafka.connect(emu, timeout=60)
        attacker = raw_kafka.connect(emu, timeout=60)
        try:
            bomb = _raw_batch(_zstd_bomb(), 1, compression.ZSTD)
            assert len(bomb) < 200_000
            for topic in ("plain", "compacted"):
                assert _produce(attacker, topic, bomb).error_code == ErrorCode.INVALID_RECORD
            legacy = _legacy_gzip_bomb()
            assert len(legacy) < 400_000
            # Produce v3+ takes magic 2 batches only: refused before anything is inflated
            assert _produce(attacker, "plain", legacy, version=3).error_code == ErrorCode.INVALID_RECORD
            # Produce v0-v2, removed in Kafka 4 (KIP-896), closes the connection, as Kafka 4.4 does
            legacy_client = raw_kafka.connect(emu, timeout=60)
            try:
                with pytest.raises(ConnectionError):
                    _produce(legacy_client, "plain", legacy, version=2)
            finally:
                legacy_client.close()
            # the same connection and another one are still served; nothing was appended
            assert _list_offsets(attacker, "compacted", -3, 7) == (-1, -1)
            assert _list_offsets(bystander, "plain", -1, 7)[1] == 0
        finally:
            attacker.close()
            bystander.close()
        producer = Producer({"bootstrap.servers": emu.bootstrap_server, "compression.type": "zstd"})
        for i in range(100):
            producer.produce("compacted", key=b"k%d" % (i % 10), value=b"v%d" % i, partition=0)
        assert producer.flush(10) == 0
        consumer = Consumer({"bootstrap.servers": emu.bootstrap_server, "group.id": "bomb"})
        try:
            consumer.assign([TopicPartition("compacted", 0, 0)])
            got = []
            while len(got) < 100:
                batch = consumer.consume(100, 10.0)
                assert batch, "no records after the bombs"
                got += [m.value() for m in batch if m.error() is None]
            assert got == [b"v%d" % i for i in range(100)]
        finally:
            consumer.close()
        assert emu._proc.poll() is None


def test_a_fetch_asking_for_everything_gets_fetch_max_bytes():
    from confluent_kafka import Consumer, TopicPartition
    with KafkaEmulator(fetch_max_bytes=64 * 1024) as emu:
        topic = unique_topic("cap")
        create_topic(emu, topic, partitions=2)
        sock = raw_kafka.connect(emu)
        try:
            for p in (0, 1):
                for n in range(20):
                    batch = build_batch([(None, b"%d-%d" % (p, n) * 1000, [], BASE_TS)])
                    assert _produce(sock, topic, batch, partition=p).error_code == 0
            meta = emu.call(lambda b: b.store.get(topic).topic_id)
            resp = raw_kafka.request(sock, ApiKey.FETCH, 13, {
                "max_wait_ms": 0, "min_bytes": 1, "max_bytes": 0x7FFFFFFF, "isolation_level": 0, "session_id": 0,
                "session_epoch": -1, "forgotten_topics_data": [], "rack_id": "", "replica_id": -1,
                "topics": [{"topic": topic, "topic_id": meta, "partitions": [
                    {"partition": p, "fetch_offset": 0, "partition_max_bytes": 0x7FFFFFFF} for p in (0, 1)]}]})
            sizes = [len(p.records) for p in resp.responses[0].partitions]
            assert 0 < sum(sizes) <= 64 * 1024 and sizes[1] < sizes[0]
        finally:
            sock.close()
        # a consumer asking for far more still reads everything, response by response
        consumer = Consumer({"bootstrap.servers": emu.bootstrap_server, "group.id": topic,
                             "fetch.max.bytes": 100_000_000, "max.partition.fetch.bytes": 100_000_000})
        try:
            consumer.assign([TopicPartition(topic, 0, 0), TopicPartition(topic, 1, 0)])
            got = 0
            while got < 40:
                batch = consumer.consume(40, 10.0)
                assert batch, "the consumer stopped getting records"
                got += sum(1 for m in batch if m.error() is None)
            assert got == 40
        finally:
            consumer.close()


def test_a_data_dir_with_a_damaged_tail_starts_and_serves_what_is_valid(tmp_path):
    from confluent_kafka import Consumer, Producer, TopicPartition
    with KafkaEmulator(subprocess_mode=True, data_dir=str(tmp_path)) as first:
        producer = Producer({"bootstrap.servers": first.bootstrap_server})
        for i in range(50):
            producer.produce("kept", value=b"v%d" % i, partition=0)
        assert producer.flush(10) == 0
    segment = tmp_path / "kept-0" / SEGMENT
    with open(segment, "ab") as f:
        f.write(bytes(4096))                                # a crash left zeros after the last batch
    with KafkaEmulator(subprocess_mode=True, data_dir=str(tmp_path)) as second:
        consumer = Consumer({"bootstrap.servers": second.bootstrap_server, "group.id": "kept"})
        try:
            assert consumer.get_watermark_offsets(TopicPartition("kept", 0), timeout=10) == (0, 50)
            consumer.assign([TopicPartition("kept", 0, 0)])
            got = []
            while len(got) < 50:
                batch = consumer.consume(50, 10.0)
                assert batch, "no records from the recovered log"
                got += [m.value() for m in batch if m.error() is None]
            assert got == [b"v%d" % i for i in range(50)]
        finally:
            consumer.close()
    assert (tmp_path / "kept-0" / f"{SEGMENT}.corrupt-{segment.stat().st_size}").read_bytes() == bytes(4096)
