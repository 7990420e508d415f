"""What a start imports before it answers its first request, read from the process's own
``-X importtime`` report (the set of modules, never their times), for ``kafkaemu serve`` and for
``KafkaEmulator()`` in a fresh interpreter; and each part imported later working on first use, each
in a fresh process: the control API, SASL, transactions, a data dir (its groups and transactions
loaded at start), the schema registry, share and KIP-848 consumer groups, the metadata quorum,
``KafkaEmulator``'s control methods.
docs/architecture.md "What runs at start" says why each waits."""
from __future__ import annotations

import json
import os
import re
import select
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from kafkaemu.handlers.index import HANDLERS
from kafkaemu.protocol.api_keys import ApiKey
from kafkaemu.protocol.envelope import decode_response, encode_request
from kafkaemu.wire.framing import FrameDecoder

# Not needed to answer ApiVersions on a default start (logging at warning); each is imported when
# its feature is first used.
HEAVY = ("aiohttp", "multidict", "yarl", "fastavro", "avro", "jsonschema", "google.protobuf", "pyspark",
         "crc32c", "importlib.metadata", "construct", "structlog", "cramjam", "lz4", "zstandard", "secrets",
         "kafkaemu.control.operations", "kafkaemu.control.http", "kafkaemu.control.web", "kafkaemu.control.table",
         "kafkaemu.control.cli", "kafkaemu.control.python_api", "kafkaemu.schema_registry", "kafkaemu.spark",
         "kafkaemu.protocol.constructs",
         # argparse's parser: a plain serve line is read without it (cli_args.py)
         "argparse", "kafkaemu.cli_parser", "kafkaemu.cli_help",
         # the idna codec: the listeners' ASCII host is given to uvloop as bytes (server.listen_hosts)
         "encodings.idna", "stringprep",
         # what KafkaEmulator.group_transitions() returns, made with its first call
         "kafkaemu.testing.transitions",
         # subprocess mode's watchdog
         "kafkaemu.testing.parent_watch",
         # an UpdateFeatures request's FeatureUpdate (a frozen dataclass), with that API's first request
         "kafkaemu.core.feature_update",
         # the coordinators (built on first use) and what only they use
         "kafkaemu.core.coordinator", "kafkaemu.core.classic", "kafkaemu.core.consumer", "kafkaemu.core.share",
         "kafkaemu.core.offsets", "kafkaemu.core.transactions", "kafkaemu.core.streams", "kafkaemu.core.modern",
         "kafkaemu.core.record_format", "kafkaemu.core.quorum",
         # SASL, ACLs, delegation tokens
         "kafkaemu.auth.credentials", "kafkaemu.auth.scram", "kafkaemu.auth.authorizer", "kafkaemu.auth.tokens",
         "kafkaemu.auth.authenticator", "kafkaemu.auth.acl",
         "kafkaemu.core.runtime", "kafkaemu.core.coordinator_settings", "kafkaemu.core.group_configs",
         # the log store beyond a partition's appends: fetch sessions, segments, the coordinators'
         # batches; telemetry subscriptions
         "kafkaemu.storage.fetch_sessions", "kafkaemu.storage.segment", "kafkaemu.storage.coordinator_log",
         "kafkaemu.telemetry.subscriptions",
         # fault rules and quota enforcement, with the first rule or quota
         "kafkaemu.faults", "kafkaemu.broker.quotas", "kafkaemu.core.quotas.manager")
# The coordinators' settings classes are read at start (BrokerConfig composes them), each a small
# module of the standard library's dataclasses in its kind's (empty) package: nothing else of the kinds.
SETTINGS_AT_START = frozenset(f"kafkaemu.core.{kind}{module}" for kind in
                              ("classic", "consumer", "offsets", "share", "streams", "transactions")
                              for module in ("", ".settings"))
# every handler but ApiVersions' is imported by its API's first request
HANDLER_MODULES = tuple(f"kafkaemu.handlers.{module}" for module, _, _ in HANDLERS.values()
                        if module != "api_versions")

# KafkaEmulator in a fresh interpreter, answering one ApiVersions (the report is on stderr)
_EMULATOR = """
import json, socket, sys
from kafkaemu.testing import KafkaEmulator
from kafkaemu.protocol.envelope import encode_request
from kafkaemu.wire.framing import FrameDecoder
emu = KafkaEmulator().start()
host, port = emu.bootstrap_server.rsplit(":", 1)
with socket.create_connection((host.encode(), int(port))) as sock:   # bytes: a str host imports the idna codec
    sock.sendall(encode_request(18, 3, {"client_software_name": "t", "client_software_version": "1"}))
    decoder = FrameDecoder(1 << 20)
    while not decoder.feed(sock.recv(65536)):
        pass
print(json.dumps(sorted(sys.modules)), flush=True)   # what answering it took
print(emu.now_ms() > 0, flush=True)   # a control method, added to the class on this first use
emu.stop()
"""


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


def call(address: str, api_key: int, version: int, body: dict):
    host, port = address.rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=30) as sock:
        sock.sendall(encode_request(api_key, version, body, correlation_id=7, client_id="t"))
        decoder = FrameDecoder(1 << 20)
        while not (frames := decoder.feed(sock.recv(65536))):
            pass
    return decode_response(api_key, version, frames[0])[1]


def api_versions(address: str):
    return call(address, ApiKey.API_VERSIONS, 3, {"client_software_name": "t", "client_software_version": "1"})


def stop(proc: subprocess.Popen) -> str:
    proc.terminate()
    _, err = proc.communicate(timeout=30)
    return err or ""


def imported(importtime_report: str) -> set[str]:
    return {line.rsplit("|", 1)[1].strip() for line in importtime_report.splitlines()
            if line.startswith("import time:") and "|" in line and "[us]" not in line}


def heavy(modules: set[str], names=HEAVY + HANDLER_MODULES) -> list[str]:
    return sorted(m for m in modules if m not in SETTINGS_AT_START
                  and any(m == h or m.startswith(h + ".") for h in names))


def test_only_kafkaemu_logging_imports_structlog():
    """The others log through ``kafkaemu.logging.get_logger``, so structlog waits for the first event."""
    package = Path(__file__).resolve().parents[2] / "kafkaemu"
    direct = [str(p.relative_to(package)) for p in sorted(package.rglob("*.py"))
              if p != package / "logging.py" and re.search(r"^\s*(import structlog|from structlog)", p.read_text(), re.M)]
    assert direct == [], f"use `from kafkaemu.logging import get_logger` instead of structlog in {direct}"


def test_a_default_start_imports_nothing_heavy_before_answering():
    proc, printed = start(importtime=True)
    try:
        answer = api_versions(printed["kafka"])
    finally:
        report = stop(proc)
    assert answer.error_code == 0 and len(answer.api_keys) == len(HANDLERS) - 2   # no telemetry APIs by default
    modules = imported(report)
    assert {"kafkaemu.server", "kafkaemu.broker", "kafkaemu.handlers.api_versions"} <= modules   # read right
    assert heavy(modules) == [], f"a default start imported {heavy(modules)}"


def test_serve_sets_the_allocator_thresholds_once_listening():
    """ctypes (for glibc's mallopt, kafkaemu/allocator.py) is imported by a timer once the server
    listens, not among the start's imports: after the server module's in the import report."""
    proc, printed = start(importtime=True)
    report = b""
    try:
        assert api_versions(printed["kafka"]).error_code == 0
        deadline = time.monotonic() + 60
        while not re.search(rb"\|\s*ctypes\n", report):
            assert time.monotonic() < deadline, "ctypes was never imported"
            if select.select([proc.stderr], [], [], 1)[0]:
                report += os.read(proc.stderr.fileno(), 65536)
    finally:
        proc.terminate()
        proc.wait(30)
    order = [line.rsplit("|", 1)[1].strip() for line in report.decode().splitlines()
             if line.startswith("import time:") and "|" in line]
    assert order.index("ctypes") > order.index("kafkaemu.server")


def test_a_fresh_kafka_emulator_imports_nothing_heavy_before_answering():
    run = subprocess.run([sys.executable, "-c", _EMULATOR], capture_output=True, text=True, timeout=60, check=True)
    answered, control_method_works = run.stdout.splitlines()[:2]
    modules = set(json.loads(answered))
    assert {"kafkaemu.testing.emulator", "kafkaemu.handlers.api_versions"} <= modules
    assert heavy(modules) == [], f"KafkaEmulator imported {heavy(modules)}"
    assert control_method_works == "True", run.stdout


def test_a_start_with_the_control_api_leaves_its_server_to_its_first_client():
    """Its port is bound and printed at start (as KafkaEmulator(subprocess_mode=True) starts), and
    the broker answers, without aiohttp or the operations table; FIRST_USES shows the first
    client is served."""
    proc, printed = start("--control-port", "0", importtime=True)
    try:
        assert api_versions(printed["kafka"]).error_code == 0
    finally:
        report = stop(proc)
    assert printed["control"].startswith("http://127.0.0.1:")
    assert heavy(imported(report), ("aiohttp", "kafkaemu.control.http", "kafkaemu.control.operations")) == []


def test_a_data_dir_with_groups_and_transactions_is_loaded_at_start(tmp_path):
    """Their coordinators are built before any request arrives (timers, transactions caught
    mid-commit), and a client's first request sees what they hold."""
    confluent_kafka = pytest.importorskip("confluent_kafka", reason="confluent-kafka is not installed")
    proc, printed = start("--data-dir", str(tmp_path))
    try:
        producer = confluent_kafka.Producer({"bootstrap.servers": printed["kafka"], "transactional.id": "dd-t"})
        producer.init_transactions(30)
        producer.begin_transaction()
        producer.produce("dd", value=b"kept")
        producer.commit_transaction(30)
        consumer = confluent_kafka.Consumer({"bootstrap.servers": printed["kafka"], "group.id": "dd-g",
                                             "enable.auto.commit": False})
        consumer.commit(offsets=[confluent_kafka.TopicPartition("dd", 0, 1)], asynchronous=False)
        consumer.close()
    finally:
        stop(proc)
    proc, printed = start("--data-dir", str(tmp_path), importtime=True)
    report = stop(proc)   # no request reached it
    modules = imported(report)
    assert {"kafkaemu.core.coordinator", "kafkaemu.core.transactions.coordinator"} <= modules
    proc, printed = start("--data-dir", str(tmp_path))
    try:
        fetched = call(printed["kafka"], ApiKey.OFFSET_FETCH, 7,
                       {"group_id": "dd-g", "topics": [{"name": "dd", "partition_indexes": [0]}]})
        assert [(t.name, [(p.partition_index, p.committed_offset) for p in t.partitions])
                for t in fetched.topics] == [("dd", [(0, 1)])]
    finally:
        stop(proc)


def test_a_data_dir_without_coordinator_records_builds_them_on_first_use(tmp_path):
    proc, printed = start("--data-dir", str(tmp_path), importtime=True)
    try:
        api_versions(printed["kafka"])
    finally:
        report = stop(proc)
    assert heavy(imported(report), ("kafkaemu.core.coordinator", "kafkaemu.core.transactions")) == []


def _control(printed):
    with urllib.request.urlopen(f"{printed['control']}/api/clock", timeout=30) as r:
        assert "now_ms" in json.loads(r.read())
    with urllib.request.urlopen(f"{printed['control']}/api/groups", timeout=30) as r:   # the group coordinator
        assert json.loads(r.read())["groups"] == []


def _post(url: str, body: dict) -> dict:
    request = urllib.request.Request(url, method="POST", data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as r:
        return json.loads(r.read())


def _faults_and_quotas(printed):
    """A fault rule (kafkaemu.faults) and a client quota's enforcement (broker/quotas.py), each
    imported by its first use."""
    _post(f"{printed['control']}/api/faults", {"api": "ApiVersions", "error": "NOT_CONTROLLER"})
    assert api_versions(printed["kafka"]).error_code == 41   # NOT_CONTROLLER, once
    _post(f"{printed['control']}/api/client-quotas", {"client_id": "t", "key": "request_percentage",
                                                       "value": 1000})
    assert api_versions(printed["kafka"]).error_code == 0   # measured against the quota
    with urllib.request.urlopen(f"{printed['control']}/api/client-quotas", timeout=30) as r:
        assert json.loads(r.read())["clients"]["request"], "the request was not measured"


def _schema_registry(printed):
    request = urllib.request.Request(f"{printed['registry']}/subjects/s-value/versions", method="POST",
                                     data=json.dumps({"schema": '{"type": "string"}'}).encode(),
                                     headers={"Content-Type": "application/vnd.schemaregistry.v1+json"})
    with urllib.request.urlopen(request, timeout=30) as r:                              # avro, on first schema
        assert json.loads(r.read())["id"] >= 1


def _share_group(printed):
    answer = call(printed["kafka"], ApiKey.SHARE_GROUP_HEARTBEAT, 1,
                  {"group_id": "lazy-s", "member_id": "m-1", "member_epoch": 0, "rack_id": None,
                   "subscribed_topic_names": ["lazy"]})
    assert (answer.error_code, answer.member_epoch) == (0, 2), answer   # a new group at epoch 1, joined: 2


def _consumer_group(printed):   # KIP-848
    answer = call(printed["kafka"], ApiKey.CONSUMER_GROUP_HEARTBEAT, 1,
                  {"group_id": "lazy-c", "member_id": "m-1", "member_epoch": 0, "rebalance_timeout_ms": 30000,
                   "subscribed_topic_names": ["lazy"], "topic_partitions": []})
    assert (answer.error_code, answer.member_epoch) == (0, 2), answer


def _metadata_quorum(printed):
    answer = call(printed["kafka"], ApiKey.DESCRIBE_QUORUM, 2,
                  {"topics": [{"topic_name": "__cluster_metadata", "partitions": [{"partition_index": 0}]}]})
    assert answer.error_code == 0 and answer.topics[0].partitions[0].error_code == 0, answer


def _feature_update(printed):   # FeatureUpdate (core/feature_update.py), made with the first UpdateFeatures
    answer = call(printed["kafka"], ApiKey.UPDATE_FEATURES, 1,
                  {"timeout_ms": 1000, "validate_only": False,
                   "feature_updates": [{"feature": "group.version", "max_version_level": 0, "upgrade_type": 2}]})
    assert answer.error_code == 0, answer
    versions = api_versions(printed["kafka"])
    assert "group.version" not in {f.name for f in versions.finalized_features}, versions   # downgraded to 0


def _produce_and_consume(printed, sasl: bool, transactional: bool):
    confluent_kafka = pytest.importorskip("confluent_kafka", reason="confluent-kafka is not installed")
    common = {"bootstrap.servers": printed["kafka"]}
    if sasl:
        common.update({"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "SCRAM-SHA-256",
                       "sasl.username": "alice", "sasl.password": "secret"})
    producer = confluent_kafka.Producer({**common, **({"transactional.id": "lazy-t"} if transactional else {})})
    if transactional:
        producer.init_transactions(30)
        producer.begin_transaction()
    producer.produce("lazy", value=b"written")                                              # a CRC checked
    if transactional:
        producer.commit_transaction(30)
    else:
        assert producer.flush(30) == 0
    consumer = confluent_kafka.Consumer({**common, "group.id": "lazy-g", "auto.offset.reset": "earliest",
                                         "isolation.level": "read_committed"})
    consumer.subscribe(["lazy"])
    got = None
    for _ in range(60):
        msg = consumer.poll(1.0)
        if msg is not None and msg.error() is None:
            got = msg.value()
            break
    consumer.close()
    assert got == b"written"


FIRST_USES = {
    "control API": (("--control-port", "0"), _control),
    "fault rules and client quotas": (("--control-port", "0"), _faults_and_quotas),
    "schema registry": (("--schema-registry-port", "0"), _schema_registry),
    "SASL": (("--sasl-user", "alice:secret"), lambda printed: _produce_and_consume(printed, True, False)),
    "transactions": ((), lambda printed: _produce_and_consume(printed, False, True)),
    "share groups": ((), _share_group),
    "consumer groups (KIP-848)": ((), _consumer_group),
    "the metadata quorum": ((), _metadata_quorum),
    "an UpdateFeatures request": ((), _feature_update),
}


@pytest.mark.parametrize("feature", list(FIRST_USES))
def test_each_lazily_imported_part_works_on_first_use_in_a_fresh_process(feature):
    flags, use = FIRST_USES[feature]
    if feature in ("control API", "fault rules and client quotas", "schema registry"):
        pytest.importorskip("aiohttp", reason="aiohttp (the control API's and schema registry's server) is "
                                              "not installed")
    proc, printed = start(*flags)
    try:
        use(printed)
    finally:
        stop(proc)


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost", "::1", "0.0.0.0", "Example.COM", "a-b.c."])
def test_an_ascii_host_is_given_as_the_bytes_the_idna_codec_makes(host):
    from kafkaemu.server import listen_hosts
    assert listen_hosts(host) == [host.encode("idna")]


def test_every_interface_and_a_non_ascii_name_stay_as_given():
    from kafkaemu.server import listen_hosts
    assert listen_hosts("") == "" and listen_hosts("bücher.example") == "bücher.example"


@pytest.mark.parametrize("host", ["localhost", "0.0.0.0"])
def test_a_named_or_wildcard_host_is_listened_on(host):
    proc, printed = start("--host", host)
    try:
        assert printed["kafka"] == f"{host}:{printed['kafka'].rsplit(':', 1)[1]}"
        answer = api_versions(f"127.0.0.1:{printed['kafka'].rsplit(':', 1)[1]}")
    finally:
        stop(proc)
    assert answer.error_code == 0
