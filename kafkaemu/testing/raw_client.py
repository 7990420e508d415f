"""A bare-bones Kafka connection for tests that must send exact (or broken) bytes and read
the decoded answer: `request(sock, api_key, version, body)`."""
from __future__ import annotations

import socket
import weakref

from kafkaemu.protocol import envelope
from kafkaemu.protocol.api_keys import ApiKey
from kafkaemu.protocol.envelope import frame  # noqa: F401  (tests frame raw bytes)
from kafkaemu.wire.framing import FrameDecoder


# Frames already received on a socket but not read yet (several can arrive in one recv).
_pending: "weakref.WeakKeyDictionary[socket.socket, tuple[FrameDecoder, list[bytes]]]" = weakref.WeakKeyDictionary()


def encode_request(api_key: int, version: int, body: dict, correlation_id: int = 1, client_id: str = "test") -> bytes:
    return envelope.encode_request(api_key, version, body, correlation_id, client_id)


def connect(emulator, timeout: float = 5) -> socket.socket:
    host, port = emulator.bootstrap_server.split(":")
    return socket.create_connection((host, int(port)), timeout=timeout)


def api_versions_frame(version: int = 0, correlation_id: int = 1) -> bytes:
    return encode_request(ApiKey.API_VERSIONS, version, {"client_software_name": "t", "client_software_version": "1"},
                          correlation_id)


def read_reply(sock: socket.socket) -> bytes:
    """The next whole response frame (correlation id first)."""
    decoder, frames = _pending.setdefault(sock, (FrameDecoder(1 << 30), []))
    while not frames:
        chunk = sock.recv(65536)
        if not chunk:
            raise ConnectionError("closed by the server")
        frames.extend(decoder.feed(chunk))
    return frames.pop(0)


def decode_reply(api_key: int, version: int, reply: bytes, correlation_id: int | None = None):
    """The decoded body of a response frame read by ``read_reply``."""
    got, body = envelope.decode_response(api_key, version, reply)
    if correlation_id is not None and got != correlation_id:
        raise AssertionError(f"reply to correlation id {got}, expected {correlation_id}")
    return body


def request(sock: socket.socket, api_key: int, version: int, body: dict, correlation_id: int = 1):
    """Send one request and decode its response."""
    sock.sendall(encode_request(api_key, version, body, correlation_id))
    return decode_reply(api_key, version, read_reply(sock), correlation_id)


def is_closed(sock: socket.socket) -> bool:
    try:
        return sock.recv(1) == b""
    except ConnectionResetError:
        return True
