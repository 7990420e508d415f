"""The compiled codecs kept between runs (kafkaemu/protocol/codec_cache.py) serve real clients: a
`kafkaemu serve` writes them, a second one reads them (and compiles nothing it already has), and a
kafka-python producer and group consumer get their records through both."""
from __future__ import annotations

import os
import time
import uuid

from kafka import KafkaConsumer, KafkaProducer

from .test_cli_process import start_serve, stop


def _round_trip(port: int) -> list[bytes]:
    topic = f"codec-cache-{uuid.uuid4().hex[:8]}"
    producer = KafkaProducer(bootstrap_servers=f"127.0.0.1:{port}")
    for i in range(5):
        producer.send(topic, f"m{i}".encode())
    producer.flush()
    producer.close()
    consumer = KafkaConsumer(topic, bootstrap_servers=f"127.0.0.1:{port}", group_id=topic,
                             auto_offset_reset="earliest")
    got: list[bytes] = []
    deadline = time.monotonic() + 30
    try:
        while len(got) < 5 and time.monotonic() < deadline:
            for records in consumer.poll(timeout_ms=500).values():
                got += [r.value for r in records]
        return sorted(got)
    finally:
        consumer.close()


def _kept(directory) -> dict[str, int]:
    return {name: os.stat(os.path.join(directory, name)).st_mtime_ns for name in os.listdir(directory)}


def test_a_second_server_serves_clients_from_the_first_ones_compiled_codecs(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["KAFKAEMU_CODEC_CACHE"] = str(tmp_path)
    expected = [f"m{i}".encode() for i in range(5)]

    proc, port = start_serve("--port", "0", env=env)
    try:
        assert _round_trip(port) == expected
    finally:
        stop(proc)
    first = _kept(tmp_path)
    # ApiVersions, Metadata, Produce, FindCoordinator, JoinGroup, SyncGroup, Fetch, OffsetCommit, ...
    assert len(first) >= 10, sorted(first)

    proc, port = start_serve("--port", "0", env=env)
    try:
        assert _round_trip(port) == expected
    finally:
        stop(proc)
    second = _kept(tmp_path)
    # the same requests again: every codec came from the files, none was compiled and written anew
    assert {name: second[name] for name in first} == first
