"""What a default ``kafkaemu serve`` imports before it answers its first request, read from the
process's own ``-X importtime`` report (the set of modules, never their times); and the parts
imported later working on first use in a fresh process: the control API, SASL, produce and fetch
(the CRC checksum), transactions, a data dir, the schema registry."""
from __future__ import annotations

import json
import socket
import subprocess
import sys
import urllib.request

import pytest

from kafkaemu.protocol.envelope import decode_response, encode_request
from kafkaemu.wire.framing import FrameDecoder

# Not needed to answer a request on a default start; each is imported when its feature is first used.
HEAVY = ("aiohttp", "multidict", "yarl", "fastavro", "avro", "jsonschema", "google.protobuf", "pyspark",
         "crc32c", "importlib.metadata", "kafkaemu.control.operations", "kafkaemu.control.http",
         "kafkaemu.control.web", "kafkaemu.control.table", "kafkaemu.schema_registry", "kafkaemu.spark",
         "kafkaemu.testing", "kafkaemu.control.cli")


def start(*flags: str, importtime: bool = False) -> tuple[subprocess.Popen, dict[str, str]]:
    """``kafkaemu serve`` with ``flags``; returns it and what it printed at start (name -> address)."""
    argv = [sys.executable, *(["-X", "importtime"] if importtime else []), "-m", "kafkaemu", "serve",
            "--port", "0", "--log-level", "warning", *flags]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE if importtime else None, text=True)
    printed = {}
    line = proc.stdout.readline()
    assert "listening on" in line, line
    printed["kafka"] = line.rsplit(" ", 1)[1].strip()
    if "--control-port" in flags:
        printed["control"] = proc.stdout.readline().rsplit(" ", 1)[1].strip()
    if "--schema-registry-port" in flags:
        printed["registry"] = proc.stdout.readline().rsplit(" ", 1)[1].strip()
    return proc, printed


def api_versions(address: str) -> dict:
    host, port = address.rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=30) as sock:
        sock.sendall(encode_request(18, 3, {"client_software_name": "t", "client_software_version": "1"},
                                    correlation_id=7, client_id="t"))
        decoder = FrameDecoder(1 << 20)
        while not (frames := decoder.feed(sock.recv(65536))):
            pass
    return decode_response(18, 3, frames[0])[1]


def stop(proc: subprocess.Popen) -> str:
    proc.terminate()
    _, err = proc.communicate(timeout=30)
    return err or ""


def imported(importtime_report: str) -> set[str]:
    return {line.rsplit("|", 1)[1].strip() for line in importtime_report.splitlines()
            if line.startswith("import time:") and "|" in line and "[us]" not in line}


def test_a_default_start_imports_nothing_heavy_before_answering():
    proc, printed = start(importtime=True)
    try:
        answer = api_versions(printed["kafka"])
    finally:
        report = stop(proc)
    assert answer.error_code == 0 and len(answer.api_keys) > 40
    modules = imported(report)
    assert {"kafkaemu.server", "kafkaemu.handlers", "kafkaemu.broker"} <= modules   # the report is read right
    loaded = sorted(m for m in modules if any(m == h or m.startswith(h + ".") for h in HEAVY))
    assert loaded == [], f"a default start imported {loaded}"


def test_the_lazily_imported_parts_work_on_first_use_in_a_fresh_process(tmp_path):
    confluent_kafka = pytest.importorskip("confluent_kafka", reason="confluent-kafka is not installed")
    pytest.importorskip("aiohttp", reason="aiohttp (the control API's and schema registry's server) is not installed")
    proc, printed = start("--control-port", "0", "--schema-registry-port", "0", "--data-dir", str(tmp_path),
                          "--sasl-user", "alice:secret")
    try:
        with urllib.request.urlopen(f"{printed['control']}/api/clock", timeout=30) as r:   # control API
            assert "now_ms" in json.loads(r.read())
        request = urllib.request.Request(f"{printed['registry']}/subjects/s-value/versions", method="POST",
                                         data=json.dumps({"schema": '{"type": "string"}'}).encode(),
                                         headers={"Content-Type": "application/vnd.schemaregistry.v1+json"})
        with urllib.request.urlopen(request, timeout=30) as r:                              # schema registry (avro)
            assert json.loads(r.read())["id"] >= 1
        sasl = {"bootstrap.servers": printed["kafka"], "security.protocol": "SASL_PLAINTEXT",
                "sasl.mechanism": "SCRAM-SHA-256", "sasl.username": "alice", "sasl.password": "secret"}
        producer = confluent_kafka.Producer({**sasl, "transactional.id": "lazy-t"})          # SASL, transactions
        producer.init_transactions(30)
        producer.begin_transaction()
        producer.produce("lazy", value=b"committed")                                        # a CRC checked
        producer.commit_transaction(30)
        consumer = confluent_kafka.Consumer({**sasl, "group.id": "lazy-g", "auto.offset.reset": "earliest",
                                             "isolation.level": "read_committed"})
        consumer.subscribe(["lazy"])
        got = None
        for _ in range(60):
            msg = consumer.poll(1.0)
            if msg is not None and msg.error() is None:
                got = msg.value()
                break
        consumer.close()
        assert got == b"committed"
    finally:
        stop(proc)
    assert any(tmp_path.rglob("*.log")), "nothing was written to the data dir"
