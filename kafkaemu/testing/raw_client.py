"""A bare-bones Kafka connection for tests that must send exact (or broken) bytes and read
the decoded answer: `request(sock, api_key, version, body)`."""
from __future__ import annotations

import socket
import struct

from kafkaemu.protocol.catalog import catalog
from kafkaemu.wire.framing import FrameDecoder, frame


def connect(emulator, timeout: float = 5) -> socket.socket:
    host, port = emulator.bootstrap_server.split(":")
    return socket.create_connection((host, int(port)), timeout=timeout)


def encode_request(api_key: int, version: int, body: dict, correlation_id: int = 1, client_id: str = "test") -> bytes:
    cat = catalog()
    flexible = cat.is_flexible_request(api_key, version)
    header = cat.data("RequestHeader", 2 if flexible else 1).encode(
        {"request_api_key": api_key, "request_api_version": version,
         "correlation_id": correlation_id, "client_id": client_id})
    return frame(header, cat.request(api_key, version).encode(body))


def api_versions_frame(version: int = 0, correlation_id: int = 1) -> bytes:
    return encode_request(18, version, {"client_software_name": "t", "client_software_version": "1"},
                          correlation_id)


def read_reply(sock: socket.socket) -> bytes:
    """The next whole response frame (correlation id first)."""
    decoder = FrameDecoder(1 << 30)
    while True:
        chunk = sock.recv(65536)
        if not chunk:
            raise ConnectionError("closed by the server")
        frames = decoder.feed(chunk)
        if frames:
            return frames[0]


def request(sock: socket.socket, api_key: int, version: int, body: dict, correlation_id: int = 1):
    """Send one request and decode its response."""
    sock.sendall(encode_request(api_key, version, body, correlation_id))
    reply = read_reply(sock)
    assert struct.unpack(">i", reply[:4])[0] == correlation_id
    flexible = catalog().is_flexible_request(api_key, version) and api_key != 18
    return catalog().response(api_key, version).decode(reply[5 if flexible else 4:])


def is_closed(sock: socket.socket) -> bool:
    try:
        return sock.recv(1) == b""
    except ConnectionResetError:
        return True
