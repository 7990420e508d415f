"""The recording listener used to capture golden frames (loopback only)."""
from __future__ import annotations

import socket
import struct

import pytest

from kafkaemu.protocol import envelope
from kafkaemu.protocol.api_keys import ApiKey
from kafkaemu.protocol.catalog import catalog
from tests.protocol.recorder import Recorder

pytestmark = pytest.mark.timeout(30)


def _request(api_key: int, version: int, correlation_id: int, body: dict) -> bytes:
    return envelope.encode_request(api_key, version, body, correlation_id, client_id="rec-test")


def _read_frame(sock: socket.socket) -> bytes:
    data = b""
    while len(data) < 4 or len(data) < 4 + struct.unpack_from(">i", data)[0]:
        chunk = sock.recv(65536)
        if not chunk:
            raise ConnectionError("closed")
        data += chunk
    return data[4:]


def test_standalone_recorder_answers_api_versions_in_v0_and_closes_on_anything_else():
    with Recorder() as rec, socket.create_connection(("127.0.0.1", rec.port), timeout=5) as sock:
        sock.sendall(_request(18, 3, 7, {"client_software_name": "t", "client_software_version": "1"}))
        reply = _read_frame(sock)
        assert struct.unpack_from(">i", reply)[0] == 7
        body = catalog().response(ApiKey.API_VERSIONS, 0).decode(reply[4:])
        assert body.error_code == 35  # UNSUPPORTED_VERSION, answered in v0 as Kafka does
        assert (ApiKey.API_VERSIONS, 0, 3) in [(a.api_key, a.min_version, a.max_version) for a in body.api_keys]

        sock.sendall(_request(18, 0, 8, {}))
        body = catalog().response(ApiKey.API_VERSIONS, 0).decode(_read_frame(sock)[4:])
        assert body.error_code == 0

        sock.sendall(_request(3, 1, 9, {"topics": None}))
        with pytest.raises(ConnectionError):
            _read_frame(sock)
    assert [(f.api_key, f.api_version) for f in rec.frames] == [(18, 3), (18, 0), (3, 1)]
    assert rec.frames[2].data == _request(3, 1, 9, {"topics": None})[4:]


def test_proxy_recorder_forwards_both_ways_and_records_requests():
    with socket.create_server(("127.0.0.1", 0)) as upstream:
        with Recorder(upstream=upstream.getsockname()) as rec, \
                socket.create_connection(("127.0.0.1", rec.port), timeout=5) as client:
            frame = _request(12, 0, 1, {"group_id": "g", "generation_id": 1, "member_id": "m"})
            client.sendall(frame)
            server_side, _ = upstream.accept()
            with server_side:
                server_side.settimeout(5)
                assert _read_frame(server_side) == frame[4:]
                server_side.sendall(struct.pack(">ii", 6, 1) + b"\x00\x00")
                assert _read_frame(client) == struct.pack(">i", 1) + b"\x00\x00"
    assert [(f.api_key, f.data) for f in rec.frames] == [(12, frame[4:])]
