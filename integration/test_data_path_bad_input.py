"""Raw Produce/Fetch requests over a loopback socket: a bad CRC, a truncated batch and an
oversize batch each get Kafka's error for their partition while the other partitions of the same
request are appended, and the server keeps serving on the same connection. Also: acks=0, legacy
message sets with old Produce/Fetch versions, fetch-session and offset errors."""
import pytest
import struct

from kafka.record.legacy_records import LegacyRecordBatchBuilder
from kafka.record.memory_records import MemoryRecords

from kafkaemu.protocol.api_keys import ApiKey
from kafkaemu.protocol.errors import ErrorCode
from kafkaemu.storage.record_batch import build_batch, iter_records

from kafkaemu.testing import raw_client as raw_kafka
from .data_path_records import create_topic, unique_topic

NOW = 1_700_000_000_000


def _batch(n, size=20, tag=b"r"):
    return build_batch([(b"k%d" % i, tag * size, [("h", b"1")], NOW + i) for i in range(n)])


def _produce(sock, version, topic_data, acks=-1, correlation_id=1):
    return raw_kafka.request(sock, ApiKey.PRODUCE, version, {"transactional_id": None, "acks": acks, "timeout_ms": 5000,
                                                             "topic_data": topic_data}, correlation_id)


def _fetch(sock, version, name, topic_id, partition, offset, correlation_id=2, max_wait_ms=0, **extra):
    body = {"max_wait_ms": max_wait_ms, "min_bytes": 1, "max_bytes": 1 << 20, "isolation_level": 0,
            "session_id": 0, "session_epoch": -1, "forgotten_topics_data": [], "rack_id": "", "replica_id": -1,
            "topics": [{"topic": name, "topic_id": topic_id,
                        "partitions": [{"partition": partition, "fetch_offset": offset,
                                        "partition_max_bytes": 1 << 20}]}]}
    body.update(extra)
    return raw_kafka.request(sock, ApiKey.FETCH, version, body, correlation_id)


def test_bad_batches_fail_only_their_partition(kafka_emulator):
    good_topic, small_topic = unique_topic("bad-a"), unique_topic("bad-b")
    create_topic(kafka_emulator, good_topic, partitions=3)
    create_topic(kafka_emulator, small_topic, partitions=2, configs={"max.message.bytes": "1000"})
    bad_crc = bytearray(_batch(3))
    bad_crc[-3] ^= 0x55
    truncated = _batch(3)[:-10]
    oversize = _batch(2, size=2000)
    sock = raw_kafka.connect(kafka_emulator)
    try:
        resp = _produce(sock, 9, [
            {"name": good_topic, "partition_data": [{"index": 0, "records": _batch(5)},
                                                     {"index": 1, "records": bytes(bad_crc)},
                                                     {"index": 2, "records": truncated}]},
            {"name": small_topic, "partition_data": [{"index": 0, "records": oversize},
                                                      {"index": 1, "records": _batch(2)},
                                                      {"index": 7, "records": _batch(1)}]},
        ])
        codes = {(t.name, p.index): (p.error_code, p.base_offset) for t in resp.responses
                 for p in t.partition_responses}
        assert codes == {
            (good_topic, 0): (ErrorCode.NONE, 0),
            (good_topic, 1): (ErrorCode.CORRUPT_MESSAGE, -1),
            (good_topic, 2): (ErrorCode.INVALID_RECORD, -1),
            (small_topic, 0): (ErrorCode.MESSAGE_TOO_LARGE, -1),
            (small_topic, 1): (ErrorCode.NONE, 0),
            (small_topic, 7): (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, -1),
        }
        # the same connection keeps working: the good partition reads back
        topic_id = kafka_emulator.call(lambda b: b.store.get(good_topic).topic_id)
        fetched = _fetch(sock, 13, None, topic_id, 0, 0)
        part = fetched.responses[0].partitions[0]
        assert part.error_code == 0 and part.high_watermark == 5
        assert [r.key for r in iter_records(part.records)] == [b"k%d" % i for i in range(5)]
    finally:
        sock.close()
    hws = kafka_emulator.call(lambda b: [p.high_watermark for p in b.store.get(good_topic).partitions])
    assert hws == [5, 0, 0]


def test_acks_zero_sends_no_reply(kafka_emulator):
    topic = unique_topic("acks0")
    create_topic(kafka_emulator, topic, partitions=1)
    sock = raw_kafka.connect(kafka_emulator)
    try:
        sock.sendall(raw_kafka.encode_request(ApiKey.PRODUCE, 8, {
            "transactional_id": None, "acks": 0, "timeout_ms": 100,
            "topic_data": [{"name": topic, "partition_data": [{"index": 0, "records": _batch(2)}]}]}, 41))
        sock.sendall(raw_kafka.api_versions_frame(0, 42))
        reply = raw_kafka.read_reply(sock)
        assert struct.unpack(">i", reply[:4])[0] == 42  # the produce got no reply
        bad_acks = _produce(sock, 8, [{"name": topic, "partition_data": [{"index": 0, "records": _batch(1)}]}],
                            acks=2, correlation_id=43)
        assert bad_acks.responses[0].partition_responses[0].error_code == ErrorCode.INVALID_REQUIRED_ACKS
    finally:
        sock.close()
    assert kafka_emulator.call(lambda b: b.store.get(topic).partitions[0].high_watermark) == 2


def test_legacy_produce_and_fetch_versions_are_refused_as_kafka_4_refuses_them(kafka_emulator):
    """Kafka 4 removed Produce v0-v2 and Fetch v0-v3 with message formats 0 and 1 (KIP-896, KIP-724):
    such a request closes the connection, and a magic 0/1 batch in a newer Produce is INVALID_RECORD."""
    topic = unique_topic("legacy")
    create_topic(kafka_emulator, topic, partitions=1)
    builder = LegacyRecordBatchBuilder(magic=1, compression_type=1, batch_size=1 << 20)
    for i in range(4):
        builder.append(i, NOW + i, b"k%d" % i, b"v%d" % i)
    legacy = bytes(builder.build())
    for call in (lambda sock: _produce(sock, 2, [{"name": topic, "partition_data": [{"index": 0, "records": legacy}]}]),
                 lambda sock: _fetch(sock, 3, topic, None, 0, 0)):
        sock = raw_kafka.connect(kafka_emulator)
        try:
            with pytest.raises(ConnectionError):
                call(sock)
        finally:
            sock.close()
    sock = raw_kafka.connect(kafka_emulator)
    try:
        rejected = _produce(sock, 3, [{"name": topic, "partition_data": [{"index": 0, "records": legacy}]}])
        assert rejected.responses[0].partition_responses[0].error_code == ErrorCode.INVALID_RECORD
        _produce(sock, 9, [{"name": topic, "partition_data": [{"index": 0, "records": _batch(2)}]}])
        part = _fetch(sock, 4, topic, None, 0, 0).responses[0].partitions[0]
        assert part.error_code == 0 and part.high_watermark == 2
        records = MemoryRecords(part.records)
        got = []
        while (batch := records.next_batch()) is not None:
            assert batch.magic == 2
            got += [r.offset for r in batch]
        assert got == [0, 1]
    finally:
        sock.close()


def test_fetch_errors(kafka_emulator):
    topic = unique_topic("fetch-err")
    create_topic(kafka_emulator, topic, partitions=1)
    topic_id = kafka_emulator.call(lambda b: b.store.get(topic).topic_id)
    sock = raw_kafka.connect(kafka_emulator)
    try:
        _produce(sock, 9, [{"name": topic, "partition_data": [{"index": 0, "records": _batch(3)}]}])
        out_of_range = _fetch(sock, 12, topic, None, 0, 4).responses[0].partitions[0]
        assert out_of_range.error_code == ErrorCode.OFFSET_OUT_OF_RANGE
        unknown_id = _fetch(sock, 13, None, b"\x01" * 16, 0, 0).responses[0].partitions[0]
        assert unknown_id.error_code == ErrorCode.UNKNOWN_TOPIC_ID
        future_epoch = _fetch(sock, 13, None, topic_id, 0, 0, topics=[{"topic_id": topic_id, "partitions": [
            {"partition": 0, "fetch_offset": 0, "current_leader_epoch": 3, "partition_max_bytes": 1000}]}])
        assert future_epoch.responses[0].partitions[0].error_code == ErrorCode.UNKNOWN_LEADER_EPOCH
        incremental = _fetch(sock, 13, None, topic_id, 0, 0, session_id=77, session_epoch=3)
        assert incremental.error_code == ErrorCode.FETCH_SESSION_ID_NOT_FOUND and incremental.responses == []
        new_session = _fetch(sock, 13, None, topic_id, 0, 0, session_epoch=0)
        assert new_session.error_code == 0 and new_session.session_id != 0
        assert new_session.responses[0].partitions[0].high_watermark == 3
        nothing_new = _fetch(sock, 13, None, topic_id, 0, 3, session_id=new_session.session_id, session_epoch=1)
        assert nothing_new.error_code == 0 and nothing_new.responses == []
        stale = _fetch(sock, 13, None, topic_id, 0, 3, session_id=new_session.session_id, session_epoch=1)
        assert stale.error_code == ErrorCode.INVALID_FETCH_SESSION_EPOCH
    finally:
        sock.close()
