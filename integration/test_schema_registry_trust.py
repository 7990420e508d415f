"""The schema registry cannot stall the broker or be driven from another site (issue 28): schemas
whose compatibility check used to grow as 2^(2·depth) are judged at once, a check past its work
budget is answered as Confluent's request timeout answers, ApiVersions is answered on another
connection while a check runs, ``$ref``s are resolved in each schema's own document, and requests a
page elsewhere could send (no Content-Type, a foreign Origin, a rebound Host) are refused. The
server is a ``kafkaemu serve`` process that keeps answering Kafka clients throughout."""
from __future__ import annotations

import http.client
import json
import select
import socket
import time

import pytest

from kafkaemu.testing import KafkaEmulator
from kafkaemu.testing.raw_client import api_versions_frame, connect, read_reply

from .schema_registry_helpers import unique

pytest.importorskip("aiohttp", reason="the schema registry is served by aiohttp")

CT = "application/vnd.schemaregistry.v1+json"


@pytest.fixture(scope="module")
def server():
    with KafkaEmulator(subprocess_mode=True, schema_registry=True) as emulator:
        yield emulator


def _address(server) -> tuple[str, int]:
    host, port = server.schema_registry_url.split("//")[1].rsplit(":", 1)
    return host, int(port)


def call(server, method: str, path: str, body=None, headers=None, timeout: float = 60) -> tuple[int, object]:
    conn = http.client.HTTPConnection(*_address(server), timeout=timeout)
    try:
        data = body if isinstance(body, bytes) or body is None else json.dumps(body).encode()
        conn.request(method, path, body=data, headers={"Content-Type": CT} if headers is None else headers)
        response = conn.getresponse()
        return response.status, json.loads(response.read())
    finally:
        conn.close()


def api_versions_answered(server) -> bool:
    with connect(server, timeout=30) as sock:
        sock.sendall(api_versions_frame(correlation_id=5))
        return read_reply(sock)[:4] == b"\x00\x00\x00\x05"


def probe(depth: int, leaf: str, name: str = "d") -> str:
    """The issue's probe: ``anyOf`` of two ``$ref``s to the level below, ``depth`` levels deep (1.3 KB
    at 16), its definitions named ``name``0, ``name``1, ..."""
    definitions = {f"{name}0": {"type": "object", "properties": {"v": {"type": leaf}}}}
    for level in range(1, depth + 1):
        below = {"$ref": f"#/definitions/{name}{level - 1}"}
        definitions[f"{name}{level}"] = {"anyOf": [below, dict(below)]}
    return json.dumps({"definitions": definitions, "$ref": f"#/definitions/{name}{depth}"})


def register(server, subject: str, schema: str, timeout: float = 60) -> tuple[int, object]:
    return call(server, "POST", f"/subjects/{subject}/versions", {"schema": schema, "schemaType": "JSON"},
                timeout=timeout)


@pytest.mark.parametrize("depth", [10, 12, 16])
def test_the_probe_is_judged_at_once_and_the_broker_keeps_answering(server, depth):
    """On the loop, 4^depth comparisons: 26 s at 10 deep, hours at 16. Memoised pairs make it
    linear; the change of the leaf from string to integer is refused as it is written inline."""
    subject = unique(f"probe{depth}")
    assert len(probe(16, "string")) < 1400
    assert register(server, subject, probe(depth, "string"))[0] == 200
    # the new version's definitions renamed: no reference of one document can land in the other
    status, body = register(server, subject, probe(depth, "integer", name="e"), timeout=20)
    assert (status, body["error_code"]) == (409, 409), body
    assert api_versions_answered(server)


def wide(count: int, leaf: str) -> str:
    """``anyOf`` of ``count`` distinct closed objects: every old branch is compared with every new
    one, count² pairs, past the check's work budget at 460."""
    return json.dumps({"anyOf": [{"type": "object", "properties": {f"f{i}": {"type": leaf}}, "required": [f"f{i}"],
                                  "additionalProperties": False} for i in range(count)]})


def test_api_versions_is_answered_while_a_check_runs_and_the_check_ends_at_its_budget(server):
    subject = unique("wide")
    assert register(server, subject, wide(460, "string"))[0] == 200
    body = json.dumps({"schema": wide(460, "integer"), "schemaType": "JSON"}).encode()
    registry = socket.create_connection(_address(server), timeout=60)
    answered_meanwhile = 0
    try:
        registry.sendall(f"POST /subjects/{subject}/versions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: {CT}\r\n"
                         f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode() + body)
        with connect(server, timeout=30) as kafka:
            # ApiVersions after ApiVersions until the registry answers: each one answered before
            # that answer was answered while the check ran (on the loop, none would be)
            while not select.select([registry], [], [], 0)[0]:
                kafka.sendall(api_versions_frame(correlation_id=answered_meanwhile))
                assert read_reply(kafka)[:4] == answered_meanwhile.to_bytes(4, "big")
                answered_meanwhile += 1
        answer = b""
        while chunk := registry.recv(65536):
            answer += chunk
    finally:
        registry.close()
    assert answered_meanwhile >= 10, answered_meanwhile
    head, _, text = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 504"), head
    assert json.loads(text)["error_code"] == 504
    # nothing was registered, and the registry answers the next request
    assert call(server, "GET", f"/subjects/{subject}/versions")[1] == [1]


DEFINED = {"definitions": {"X": {"type": "string"}}, "type": "object", "properties": {"f": {"$ref": "#/definitions/X"}}}
CYCLE = {"definitions": {"X": {"type": "object", "properties": {"f": {"type": "string"},
                                                                 "next": {"$ref": "#/definitions/X"}}}},
         "$ref": "#/definitions/X"}


def _changed(schema: dict) -> dict:
    changed = json.loads(json.dumps(schema))
    target = changed["definitions"]["X"]
    (target.get("properties", {}).get("f") or target)["type"] = "integer"
    return changed


@pytest.mark.parametrize("schema", [DEFINED, CYCLE], ids=["definitions", "cycle"])
def test_a_change_through_a_ref_is_refused_as_the_same_change_inline(server, schema):
    inline = unique("inline")
    assert register(server, inline, json.dumps({"type": "object", "properties": {"f": {"type": "string"}}}))[0] == 200
    status, body = register(server, inline, json.dumps({"type": "object", "properties": {"f": {"type": "integer"}}}))
    assert (status, body["error_code"]) == (409, 409)
    subject = unique("ref")
    assert register(server, subject, json.dumps(schema))[0] == 200
    status, body = register(server, subject, json.dumps(_changed(schema)))
    assert (status, body["error_code"]) == (409, 409), body
    assert "TYPE_CHANGED" in body["message"]
    assert call(server, "GET", f"/subjects/{subject}/versions")[1] == [1]


def _registered(server, subject: str) -> bool:
    return call(server, "GET", "/subjects")[1].count(subject) == 1


@pytest.mark.parametrize("headers,status", [
    ({}, 415),                                                     # no Content-Type: a page needs no preflight
    ({"Content-Type": "text/plain"}, 415),
    ({"Content-Type": "application/x-www-form-urlencoded"}, 415),
    ({"Content-Type": CT, "Origin": "http://evil.example"}, 403),
    ({"Content-Type": CT, "Origin": "null"}, 403),
    ({"Content-Type": CT, "Host": "rebound.evil.example"}, 403),
], ids=["no-content-type", "text", "form", "origin", "null-origin", "host"])
def test_requests_a_page_elsewhere_could_send_are_refused(server, headers, status):
    subject = unique("xsite")
    got, body = call(server, "POST", f"/subjects/{subject}/versions", {"schema": '"string"'}, headers=headers)
    assert (got, body["error_code"]) == (status, status), body
    assert not _registered(server, subject)
    assert api_versions_answered(server)


def test_a_rebound_page_cannot_read_or_delete(server):
    subject = unique("rebound")
    assert call(server, "POST", f"/subjects/{subject}/versions", {"schema": '"string"'})[0] == 200
    for method in ("GET", "DELETE"):
        got, body = call(server, method, f"/subjects/{subject}/versions", headers={"Host": "attacker.example:8081"})
        assert (got, body["error_code"]) == (403, 403), body
    assert _registered(server, subject)
    # the registry's own names and loopback addresses are served, an Origin of its own port too
    port = _address(server)[1]
    for host in (f"localhost:{port}", f"127.0.0.1:{port}", f"[::1]:{port}"):
        assert call(server, "GET", f"/subjects/{subject}/versions", headers={"Host": host})[0] == 200, host
    own = {"Host": f"127.0.0.1:{port}", "Origin": f"http://127.0.0.1:{port}", "Content-Type": CT}
    assert call(server, "POST", f"/subjects/{subject}", {"schema": '"string"'}, headers=own)[0] == 200


def test_registry_writes_survive_a_kill_9_of_the_server(tmp_path):
    """Every write the registry answered (registrations through the worker, a config, a soft
    delete) is in ``_schemas`` on disk before its answer: a server killed with SIGKILL right after
    serves all of it from the data dir."""
    import os
    import signal

    from .test_schema_registry_http import _fill, _state
    with KafkaEmulator(subprocess_mode=True, schema_registry=True, data_dir=str(tmp_path)) as first:
        url = first.schema_registry_url
        _fill(url)
        subject = unique("killed")
        first_id = call(first, "POST", f"/subjects/{subject}/versions",
                        {"schema": json.dumps(DEFINED), "schemaType": "JSON"})[1]["id"]
        before = _state(url)
        os.kill(first._proc.pid, signal.SIGKILL)   # no clean shutdown
    with KafkaEmulator(subprocess_mode=True, schema_registry=True, data_dir=str(tmp_path)) as second:
        assert _state(second.schema_registry_url) == before
        status, body = register(second, subject, json.dumps(_changed(DEFINED)))
        assert (status, body["error_code"]) == (409, 409)   # judged against the version that survived
        assert call(second, "GET", f"/subjects/{subject}/versions/1")[1]["id"] == first_id


def _workers() -> list[int]:
    """The pids of this process's children that are schema registry workers."""
    import os
    found = []
    for entry in os.listdir("/proc"):
        try:
            with open(f"/proc/{entry}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                command = f.read()
        except (OSError, ValueError, IndexError):
            continue
        if ppid == os.getpid() and b"kafkaemu.schema_registry.worker" in command:
            found.append(int(entry))
    return found


def _cpu_ticks(pid: int) -> int:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])   # utime + stime


@pytest.mark.skipif(not __import__("os").path.isdir("/proc"), reason="finding the worker needs /proc")
def test_a_worker_that_dies_under_a_check_is_answered_and_replaced():
    import os
    import signal
    import threading

    others = set(_workers())   # the registries of other tests' emulators in this process
    with KafkaEmulator(schema_registry=True) as emulator:
        subject = unique("died")
        assert register(emulator, subject, wide(460, "string"))[0] == 200   # the worker process is up
        [worker] = set(_workers()) - others
        idle = _cpu_ticks(worker)
        answers = []
        check = threading.Thread(target=lambda: answers.append(register(emulator, subject, wide(460, "integer"))))
        check.start()
        while _cpu_ticks(worker) < idle + 20 and check.is_alive():   # the check under way in the worker
            time.sleep(0.01)
        os.kill(worker, signal.SIGKILL)
        check.join(120)
        [(status, body)] = answers
        assert (status, body["error_code"]) == (500, 50001), body
        assert api_versions_answered(emulator)
        status, body = register(emulator, subject, probe(10, "integer", name="e"))   # a new worker judges it
        assert (status, body["error_code"]) == (409, 409), body
        [replaced] = set(_workers()) - others
        assert replaced != worker
    assert set(_workers()) - others == set()   # stopped with the registry


def test_a_script_without_a_main_guard_starts_one_emulator(tmp_path):
    """The worker runs nothing of the program that embeds the registry (multiprocessing's spawn
    would run this script again in it, and start a second emulator there)."""
    import subprocess
    import sys
    script = tmp_path / "no_guard.py"
    script.write_text("import json, urllib.request\n"
                      "from kafkaemu.testing import KafkaEmulator\n"
                      "print('started', flush=True)\n"
                      "with KafkaEmulator(schema_registry=True) as e:\n"
                      "    r = urllib.request.Request(e.schema_registry_url + '/subjects/s/versions', method='POST',\n"
                      "        data=json.dumps({'schema': '\"string\"'}).encode(), headers={'Content-Type': 'application/json'})\n"
                      "    print(urllib.request.urlopen(r, timeout=60).read().decode(), flush=True)\n")
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split("\n")[:2] == ["started", '{"id": 1}'], out.stdout
