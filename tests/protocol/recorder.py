"""A tiny recording listener on 127.0.0.1 that keeps the request frames clients send.

Two modes:

* standalone (``upstream=None``): answers ApiVersions with a minimal v0 response (first
  UNSUPPORTED_VERSION for any version above 0, as Kafka does, so the client retries with v0,
  then a list of API ranges) and closes the connection on any other request;
* proxy (``upstream=(host, port)``): forwards both ways to a real server (kafkaemu) and records
  the client's frames on the way. Point the server's advertised port at the recorder so clients
  keep talking through it after bootstrap.

Frames are recorded whole (without the size prefix) with the api key and version from the
header, in the order they arrive. Used by ``capture_golden.py``; a test helper, not product code.
"""
from __future__ import annotations

import socket
import struct
import threading
from dataclasses import dataclass

from kafkaemu.protocol.api_keys import ApiKey

# What the standalone mode advertises in its v0 ApiVersions answer: enough for clients to go on
# to Metadata (after which they get their connection closed).
ADVERTISED = {ApiKey.API_VERSIONS: (0, 3), ApiKey.METADATA: (0, 12), ApiKey.FIND_COORDINATOR: (0, 4)}
UNSUPPORTED_VERSION = 35


@dataclass
class Frame:
    api_key: int
    api_version: int
    data: bytes  # header + body, without the 4-byte size prefix


def api_versions_v0_response(correlation_id: int, error_code: int = 0) -> bytes:
    body = struct.pack(">hi", error_code, len(ADVERTISED))
    body += b"".join(struct.pack(">hhh", k, lo, hi) for k, (lo, hi) in sorted(ADVERTISED.items()))
    payload = struct.pack(">i", correlation_id) + body  # ApiVersions answers with header v0
    return struct.pack(">i", len(payload)) + payload


def _read_frame(sock: socket.socket, buf: bytearray) -> bytes | None:
    while True:
        if len(buf) >= 4:
            (size,) = struct.unpack_from(">i", buf)
            if size < 0 or size > 64 << 20:
                return None
            if len(buf) >= 4 + size:
                data = bytes(buf[4:4 + size])
                del buf[:4 + size]
                return data
        try:
            chunk = sock.recv(65536)
        except OSError:
            return None
        if not chunk:
            return None
        buf += chunk


class Recorder:
    def __init__(self, upstream: tuple[str, int] | None = None, max_frames: int = 1000) -> None:
        self.upstream = upstream
        self.max_frames = max_frames
        self.frames: list[Frame] = []
        self._lock = threading.Lock()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._listener.settimeout(0.2)
        self.port = self._listener.getsockname()[1]
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._sockets: list[socket.socket] = []

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def __enter__(self) -> "Recorder":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def start(self) -> "Recorder":
        self._spawn(self._accept_loop)
        return self

    def stop(self) -> None:
        self._stop.set()
        with self._lock:
            for s in self._sockets:
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                s.close()
        for t in self._threads:
            t.join(5)
        self._listener.close()

    def _spawn(self, target, *args) -> None:
        t = threading.Thread(target=target, args=args, daemon=True)
        self._threads.append(t)
        t.start()

    def _track(self, sock: socket.socket) -> socket.socket:
        with self._lock:
            self._sockets.append(sock)
        return sock

    def _record(self, data: bytes) -> Frame:
        api_key, api_version = struct.unpack_from(">hh", data)
        frame = Frame(api_key, api_version, data)
        with self._lock:
            if len(self.frames) < self.max_frames:
                self.frames.append(frame)
        return frame

    def _accept_loop(self) -> None:
        while not self._stop.is_set():
            try:
                client, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            self._track(client)
            if self.upstream is None:
                self._spawn(self._answer, client)
            else:
                try:
                    server = self._track(socket.create_connection(self.upstream, timeout=5))
                    server.settimeout(None)
                except OSError:
                    client.close()
                    continue
                self._spawn(self._forward_requests, client, server)
                self._spawn(self._pump, server, client)

    def _answer(self, client: socket.socket) -> None:
        buf = bytearray()
        with client:
            while (data := _read_frame(client, buf)) is not None:
                frame = self._record(data)
                if frame.api_key != ApiKey.API_VERSIONS:
                    return  # only ApiVersions is answered: close, as a broker without the API
                (correlation_id,) = struct.unpack_from(">i", data, 4)
                error = UNSUPPORTED_VERSION if frame.api_version > 0 else 0
                client.sendall(api_versions_v0_response(correlation_id, error))

    def _forward_requests(self, client: socket.socket, server: socket.socket) -> None:
        buf = bytearray()
        try:
            while (data := _read_frame(client, buf)) is not None:
                self._record(data)
                server.sendall(struct.pack(">i", len(data)) + data)
        except OSError:
            pass
        finally:
            for s in (client, server):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    @staticmethod
    def _pump(src: socket.socket, dst: socket.socket) -> None:
        try:
            while chunk := src.recv(65536):
                dst.sendall(chunk)
        except OSError:
            pass
        finally:
            try:
                dst.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
