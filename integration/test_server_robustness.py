"""Bad bytes close only the offending connection; the server keeps serving everyone else."""
import socket
import struct

import pytest
from confluent_kafka.admin import AdminClient

from kafkaemu.protocol.catalog import catalog
from kafkaemu.testing import KafkaEmulator
from kafkaemu.wire.framing import FrameDecoder, frame

from kafkaemu.testing.raw_client import api_versions_frame, connect, is_closed, read_reply


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
        body = catalog().response(18, 0).decode(reply[4:])
        assert body.error_code == 35  # UNSUPPORTED_VERSION, answered in v0
        ranges = {k.api_key: (k.min_version, k.max_version) for k in body.api_keys}
        assert ranges[18] == (0, 4)
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
