"""Bad bytes close only the offending connection; the server keeps serving everyone else. No
input crashes, wedges or exhausts the broker: unread replies, idle sockets, huge partition
counts and odd Metadata or Produce requests are each answered as Kafka answers them."""
import socket
import struct
import threading
import time
import uuid

import pytest
from confluent_kafka.admin import AdminClient

from kafkaemu.protocol.api_keys import ApiKey
from kafkaemu.protocol.catalog import catalog
from kafkaemu.protocol.errors import ErrorCode
from kafkaemu.storage.record_batch import build_batch
from kafkaemu.testing import KafkaEmulator
from kafkaemu.wire.framing import FrameDecoder, frame

from kafkaemu.testing.raw_client import api_versions_frame, connect, encode_request, is_closed, read_reply, request


@pytest.mark.parametrize("garbage", [
    struct.pack(">i", 200 * 1024 * 1024),        # over socket.request.max.bytes (100 MiB)
    struct.pack(">i", -5),                       # negative size
    frame(b"\x00\x12\x00"),                      # shorter than a request header
    frame(struct.pack(">hhih", 3, 12, 1, -1) + b"\xff\xff\xff"),  # undecodable metadata body
    frame(struct.pack(">hhih", 32000, 0, 1, -1)),  # unknown api key
])
def test_bad_input_closes_that_connection_and_others_keep_working(kafka_emulator, garbage):
    healthy = connect(kafka_emulator)
    bad = connect(kafka_emulator)
    try:
        bad.sendall(garbage)
        assert is_closed(bad)
        healthy.sendall(api_versions_frame(correlation_id=9))
        reply = read_reply(healthy)
        assert struct.unpack(">i", reply[:4])[0] == 9
        md = AdminClient({"bootstrap.servers": kafka_emulator.bootstrap_server}).list_topics(timeout=10)
        assert md.brokers
    finally:
        healthy.close()
        bad.close()


def test_newer_api_versions_request_is_negotiated_down(kafka_emulator):
    sock = connect(kafka_emulator)
    try:
        sock.sendall(frame(struct.pack(">hhih", 18, 9, 77, 4) + b"test\x00", b"\x05hello\x021\x00"))
        reply = read_reply(sock)
        assert struct.unpack(">i", reply[:4])[0] == 77
        body = catalog().response(ApiKey.API_VERSIONS, 0).decode(reply[4:])
        assert body.error_code == 35  # UNSUPPORTED_VERSION, answered in v0
        ranges = {k.api_key: (k.min_version, k.max_version) for k in body.api_keys}
        assert ranges[18] == (0, 5)   # ApiVersions v0-v5, as Kafka 4.4
        sock.sendall(api_versions_frame(version=ranges[18][1], correlation_id=78))  # the client retries
        assert struct.unpack(">i", read_reply(sock)[:4])[0] == 78
    finally:
        sock.close()


def test_pipelined_requests_are_answered_in_order(kafka_emulator):
    sock = connect(kafka_emulator)
    try:
        sock.sendall(b"".join(api_versions_frame(correlation_id=i) for i in range(50)))
        decoder, got = FrameDecoder(1 << 20), []
        while len(got) < 50:
            got += decoder.feed(sock.recv(65536))
        assert [struct.unpack(">i", f[:4])[0] for f in got] == list(range(50))
    finally:
        sock.close()


def test_subprocess_mode_serves_and_stops_cleanly():
    emulator = KafkaEmulator(subprocess_mode=True).start()
    try:
        md = AdminClient({"bootstrap.servers": emulator.get_bootstrap_server()}).list_topics(timeout=10)
        assert 0 in md.brokers
        proc = emulator._proc
    finally:
        emulator.stop()
    assert proc.returncode == 0  # SIGTERM is a clean shutdown


# -- no input crashes, wedges or exhausts the broker ------------------------------------------
def _server_side(emulator, sock):
    """The server's protocol object for our socket (matched by the client's port), read on the
    emulator's loop: (reading?, bytes the connection and its transport hold)."""
    port = sock.getsockname()[1]
    server = emulator.server

    def look(_broker):
        for proto in server.protocols:
            peer = proto.transport.get_extra_info("peername")
            if peer and peer[1] == port:
                held = getattr(proto.conn, "buffered_bytes", 0) + proto.transport.get_write_buffer_size()
                return getattr(proto, "_reading", True), held
        return None
    return emulator.call(look)


def _fetch_frame(topic_id, correlation_id):
    return encode_request(ApiKey.FETCH, 13, {
        "max_wait_ms": 0, "min_bytes": 1, "max_bytes": 1 << 20, "isolation_level": 0, "session_id": 0,
        "session_epoch": -1, "forgotten_topics_data": [], "rack_id": "", "replica_id": -1,
        "topics": [{"topic_id": topic_id, "partitions": [
            {"partition": 0, "fetch_offset": 0, "partition_max_bytes": 1 << 20}]}]}, correlation_id)


def test_unread_pipelined_fetches_keep_the_server_memory_bounded_and_lose_nothing():
    """2,000 pipelined fetches of a 20 kB record that the client does not read: the server stops
    reading that socket instead of buffering 40 MB of replies, serves everyone else, and once the
    client reads, every reply arrives in order."""
    pipelined, bound = 2000, 4 << 20
    with KafkaEmulator() as emulator:
        setup = connect(emulator)
        created = request(setup, ApiKey.CREATE_TOPICS, 7,
                          {"topics": [{"name": "bp", "num_partitions": 1, "replication_factor": 1}]})
        topic_id = created.topics[0].topic_id
        records = build_batch([(None, b"x" * 20_000, [], 0)])
        produced = request(setup, ApiKey.PRODUCE, 9, {"transactional_id": None, "acks": 1, "timeout_ms": 5000,
                                                      "topic_data": [{"name": "bp", "partition_data": [
                                                          {"index": 0, "records": records}]}]})
        assert produced.responses[0].partition_responses[0].error_code == 0

        greedy = socket.socket()
        greedy.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        greedy.connect(("127.0.0.1", emulator.port))
        sender = threading.Thread(target=greedy.sendall,
                                  args=(b"".join(_fetch_frame(topic_id, i) for i in range(pipelined)),), daemon=True)
        sender.start()
        deadline = time.monotonic() + 60
        while True:  # until the server stops reading us, or shows it buffers past the bound
            state = _server_side(emulator, greedy)
            if state is not None and (not state[0] or state[1] > bound):
                break
            assert time.monotonic() < deadline, f"the server neither paused nor buffered: {state}"
            time.sleep(0.05)
        reading, held = state
        assert not reading and held < bound

        setup.sendall(api_versions_frame(correlation_id=9))  # everyone else is still served
        assert struct.unpack(">i", read_reply(setup)[:4])[0] == 9

        decoder, ids = FrameDecoder(1 << 30), []
        greedy.settimeout(30)
        while len(ids) < pipelined:
            chunk = greedy.recv(1 << 20)
            assert chunk, f"closed after {len(ids)} replies"
            ids += [struct.unpack(">i", f[:4])[0] for f in decoder.feed(chunk)]
        assert ids == list(range(pipelined))
        sender.join(10)
        greedy.close()
        setup.close()


def test_idle_connections_are_closed_after_connections_max_idle_ms():
    with KafkaEmulator(manual_clock=True) as emulator:
        idle, busy = connect(emulator), connect(emulator)
        for sock in (idle, busy):
            sock.sendall(api_versions_frame(correlation_id=1))
            read_reply(sock)
        emulator.advance_clock(300_000)
        busy.sendall(api_versions_frame(correlation_id=2))
        assert struct.unpack(">i", read_reply(busy)[:4])[0] == 2
        emulator.advance_clock(300_000)  # ten minutes since the idle one's last request
        assert is_closed(idle)
        busy.sendall(api_versions_frame(correlation_id=3))  # five minutes since its last: still open
        assert struct.unpack(">i", read_reply(busy)[:4])[0] == 3
        emulator.advance_clock(600_000)
        assert is_closed(busy)
        idle.close()
        busy.close()


def test_huge_partition_counts_are_refused_at_once_as_kafka_does(kafka_emulator):
    """Kafka refuses requests creating more than 10,000 partitions with POLICY_VIOLATION before
    allocating anything; the counts that used to freeze or exhaust the broker get that answer."""
    from confluent_kafka import KafkaError, KafkaException
    from confluent_kafka.admin import NewPartitions, NewTopic

    name = f"huge-{uuid.uuid4().hex[:6]}"
    with connect(kafka_emulator) as sock:
        for count in (1_000_000, 2**31 - 1):
            answer = request(sock, ApiKey.CREATE_TOPICS, 7, {"topics": [{"name": name, "num_partitions": count,
                                                                         "replication_factor": 1}]})
            assert [(t.error_code, t.error_message) for t in answer.topics] == [
                (ErrorCode.POLICY_VIOLATION, "Excessively large number of partitions per request.")]
        request(sock, ApiKey.CREATE_TOPICS, 7,
                {"topics": [{"name": name, "num_partitions": 1, "replication_factor": 1}]})
        answer = request(sock, ApiKey.CREATE_PARTITIONS, 3, {
            "topics": [{"name": name, "count": 2**31 - 1, "assignments": None}], "timeout_ms": 5000})
        assert [(r.error_code, r.error_message) for r in answer.results] == [
            (ErrorCode.POLICY_VIOLATION, "Excessively large number of additional partitions per request.")]

    admin = AdminClient({"bootstrap.servers": kafka_emulator.bootstrap_server})  # as a client sees it
    with pytest.raises(KafkaException) as refused:
        admin.create_topics([NewTopic(name + "-b", 20_000, 1)])[name + "-b"].result(10)
    assert refused.value.args[0].code() == KafkaError.POLICY_VIOLATION
    with pytest.raises(KafkaException) as refused:
        admin.create_partitions([NewPartitions(name, 10_002)])[name].result(10)
    assert refused.value.args[0].code() == KafkaError.POLICY_VIOLATION
    admin.create_partitions([NewPartitions(name, 10_001)])[name].result(10)  # 10,000 more is allowed
    assert len(admin.list_topics(name, timeout=10).topics[name].partitions) == 10_001
    assert name + "-b" not in admin.list_topics(timeout=10).topics


def test_metadata_with_a_null_topic_name_is_answered_not_dropped(kafka_emulator):
    with connect(kafka_emulator) as sock:
        for version, code in ((10, ErrorCode.INVALID_REQUEST), (11, ErrorCode.INVALID_REQUEST),
                              (12, ErrorCode.UNKNOWN_SERVER_ERROR)):
            answer = request(sock, ApiKey.METADATA, version,
                             {"topics": [{"name": None, "topic_id": bytes(16)}]}, version)
            assert [(t.error_code, t.name) for t in answer.topics] == [(code, "")]
        sock.sendall(api_versions_frame(correlation_id=99))  # the connection is still served
        assert struct.unpack(">i", read_reply(sock)[:4])[0] == 99


def test_produce_to_an_illegal_topic_name_is_an_unknown_partition(kafka_emulator):
    with connect(kafka_emulator) as sock:
        records = build_batch([(None, b"v", [], 0)])
        answer = request(sock, ApiKey.PRODUCE, 9, {
            "transactional_id": None, "acks": -1, "timeout_ms": 5000,
            "topic_data": [{"name": "bad/name", "partition_data": [{"index": 0, "records": records}]}]})
        assert answer.responses[0].partition_responses[0].error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
