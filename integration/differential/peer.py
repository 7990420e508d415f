"""One broker's side of a scenario: its connections, and the exchanges the scenario records.

A scenario is a function ``scenario(peer)``; it is run once against Kafka and once against
kafkaemu, each time with a fresh ``Peer``, and must send the same requests given the same answers.
Names it makes (``peer.name("t")``) are the same on both brokers, so topic and group names are
compared as sent."""
from __future__ import annotations

import socket
import time
from dataclasses import dataclass
from typing import Any, Callable

from kafkaemu.protocol.api_keys import ApiKey
from kafkaemu.protocol.envelope import api_name
from kafkaemu.testing.raw_client import decode_reply, encode_request, read_reply

CLOSED = "<connection closed>"


@dataclass
class Exchange:
    label: str
    api_key: int
    version: int
    answer: Any    # the decoded body (a dict), or CLOSED

    @property
    def api(self) -> str:
        return api_name(self.api_key)


class Peer:
    """``users`` (name -> password) when the broker's listener is SASL_PLAINTEXT: every connection then
    logs in with SASL/PLAIN, as ``user`` (``connect(user)``) or else as ``default_user``."""

    def __init__(self, broker: str, bootstrap: str, scenario: str, timeout_s: float = 60,
                 users: dict[str, str] | None = None, default_user: str | None = None) -> None:
        self.broker = broker            # "kafka" or "kafkaemu"
        self.bootstrap = bootstrap
        self.scenario = scenario
        self.timeout_s = timeout_s
        self.users = users or {}
        self.default_user = default_user
        self.exchanges: list[Exchange] = []
        self._sockets: list[socket.socket] = []
        self._correlation = 0
        self.default = self.connect()

    def name(self, suffix: str = "") -> str:
        return f"{self.scenario}-{suffix}" if suffix else self.scenario

    def connect(self, user: str | None = None) -> socket.socket:
        host, port = self.bootstrap.rsplit(":", 1)
        sock = socket.create_connection((host, int(port)), timeout=self.timeout_s)
        self._sockets.append(sock)
        user = user or self.default_user
        if self.users and user is not None:
            self._login(sock, user)
        return sock

    def _login(self, sock: socket.socket, user: str) -> None:
        self._correlation += 1
        sock.sendall(encode_request(ApiKey.SASL_HANDSHAKE, 1, {"mechanism": "PLAIN"}, self._correlation))
        handshake = decode_reply(ApiKey.SASL_HANDSHAKE, 1, read_reply(sock), self._correlation)
        assert handshake.error_code == 0, f"{self.broker}: SASL handshake refused: {handshake}"
        self._correlation += 1
        sock.sendall(encode_request(ApiKey.SASL_AUTHENTICATE, 2, {
            "auth_bytes": b"\0" + user.encode() + b"\0" + self.users[user].encode()}, self._correlation))
        login = decode_reply(ApiKey.SASL_AUTHENTICATE, 2, read_reply(sock), self._correlation)
        assert login.error_code == 0, f"{self.broker}: {user} could not log in: {login}"

    def close(self) -> None:
        for sock in self._sockets:
            sock.close()

    def send(self, api_key: int, version: int, body: dict, sock: socket.socket | None = None) -> Any:
        """The answer, unrecorded (setup, waiting); CLOSED when the broker closed the connection (the
        default connection is then opened again for the next request)."""
        sock = sock or self.default
        self._correlation += 1
        try:
            sock.sendall(encode_request(api_key, version, body, self._correlation, client_id="differential"))
            return decode_reply(api_key, version, read_reply(sock), self._correlation)
        except (ConnectionError, OSError):
            if sock is self.default:
                self.default = self.connect()
            return CLOSED

    def call(self, label: str, api_key: int, version: int, body: dict, sock: socket.socket | None = None) -> Any:
        """Send, record and return the answer."""
        answer = self.send(api_key, version, body, sock)
        self.exchanges.append(Exchange(label, api_key, version, answer))
        return answer

    def raw(self, label: str, api_key: int, version: int, frame: bytes) -> Any:
        """Send bytes as they are (a malformed request) on a new connection and record the answer."""
        sock = self.connect()
        try:
            sock.sendall(frame)
            answer = decode_reply(api_key, version, read_reply(sock))
        except (ConnectionError, OSError):
            answer = CLOSED
        except Exception as exc:  # an answer that does not decode as the API's response
            answer = f"<undecodable answer: {type(exc).__name__}>"
        self.exchanges.append(Exchange(label, api_key, version, answer))
        return answer

    def until(self, api_key: int, version: int, body: dict, done: Callable[[Any], bool],
              sock: socket.socket | None = None, timeout_s: float = 30, label: str | None = None) -> Any:
        """Send until ``done(answer)`` (a coordinator still loading, a rebalance delay), then record
        the last answer under ``label`` when given."""
        deadline = time.monotonic() + timeout_s
        while True:
            answer = self.send(api_key, version, body, sock)
            if done(answer) or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        if label is not None:
            self.exchanges.append(Exchange(label, api_key, version, answer))
        return answer
