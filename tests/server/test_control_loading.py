"""The control API's server is loaded by its first client off the broker's loop: while its imports
run, the Kafka listener keeps answering."""
from __future__ import annotations

import socket
import threading

from kafkaemu.server import KafkaServer
from kafkaemu.testing import KafkaEmulator

from tests.server.test_startup_imports import api_versions


def test_the_kafka_listener_answers_while_the_control_server_loads(monkeypatch):
    loading, release = threading.Event(), threading.Event()
    real = KafkaServer._control_imports

    def held_imports(self):
        loading.set()
        assert release.wait(30), "the test never released the control server's imports"
        return real(self)

    monkeypatch.setattr(KafkaServer, "_control_imports", held_imports)
    with KafkaEmulator(control_port=0) as kafka:
        host, port = kafka.server.control_url[len("http://"):].rsplit(":", 1)
        first = socket.create_connection((host, int(port)), timeout=30)   # the control API's first client
        try:
            assert loading.wait(30)
            answer = api_versions(kafka.bootstrap_server)   # answered while the imports are held
            assert answer["error_code"] == 0 and answer["api_keys"]
            release.set()
            first.sendall(b"GET /api/state HTTP/1.0\r\nHost: " + host.encode() + b"\r\n\r\n")
            assert first.recv(12).startswith(b"HTTP/1.")
        finally:
            release.set()
            first.close()
