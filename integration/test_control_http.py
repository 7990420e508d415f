"""The HTTP control API on its own port: routes, parameters from path, query and body, and bad
input answered with a 4xx and a clear message while the broker goes on serving."""
import http.client
import json
import socket
import struct
import urllib.request

import pytest

from kafkaemu.control.http import is_loopback
from kafkaemu.testing import KafkaEmulator
from kafkaemu.testing.raw_client import api_versions_frame, connect, read_reply


@pytest.fixture(scope="module")
def emulator():
    with KafkaEmulator(manual_clock=True, control_port=0) as e:
        yield e


def call(emulator, method, path, body=None, raw=None, headers=None):
    """(status, decoded JSON) of one request on a fresh connection."""
    host, port = emulator.control_url.split("//")[1].rsplit(":", 1)
    conn = http.client.HTTPConnection(host, int(port), timeout=10)
    try:
        data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
        if body is not None:   # a JSON body says so (the guard refuses an undeclared one, 415)
            headers = {"Content-Type": "application/json", **(headers or {})}
        conn.request(method, path, body=data, headers=headers or {})
        resp = conn.getresponse()
        return resp.status, json.loads(resp.read())
    finally:
        conn.close()


def broker_serves(emulator) -> bool:
    with connect(emulator) as sock:
        sock.sendall(api_versions_frame(correlation_id=9))
        return struct.unpack(">i", read_reply(sock)[:4])[0] == 9


def test_the_control_api_is_on_its_own_port_and_lists_its_routes(emulator):
    assert emulator.control_url.startswith("http://127.0.0.1:")
    assert int(emulator.control_url.rsplit(":", 1)[1]) != emulator.port
    status, index = call(emulator, "GET", "/api")
    assert status == 200
    routes = {(r["method"], r["path"]) for r in index["routes"]}
    assert {("GET", "/api/state"), ("POST", "/api/clock/advance"), ("POST", "/api/faults"),
            ("POST", "/api/await/group"), ("PUT", "/api/snapshots/{name}"), ("POST", "/api/reset")} <= routes


def test_parameters_come_from_body_query_and_path_alike(emulator):
    status, clock = call(emulator, "POST", "/api/clock/advance", {"ms": "2s"})
    assert status == 200 and clock["manual"]
    status, clock2 = call(emulator, "POST", "/api/clock/advance?ms=500")
    assert status == 200 and clock2["now_ms"] == clock["now_ms"] + 500
    status, rule = call(emulator, "POST", "/api/faults", {"api": "Heartbeat", "error": "NOT_COORDINATOR", "count": 3})
    assert status == 200 and rule["error_code"] == 16
    status, removed = call(emulator, "DELETE", f"/api/faults/{rule['id']}")
    assert status == 200 and removed["id"] == rule["id"]
    status, snap = call(emulator, "PUT", "/api/snapshots/with%2Fslash")
    assert status == 200 and snap["name"] == "with/slash"
    status, _ = call(emulator, "DELETE", "/api/snapshots/with%2Fslash")
    assert status == 200


@pytest.mark.parametrize("method,path,body,status,message", [
    ("GET", "/api/groups/no-such-group", None, 404, "no group 'no-such-group'"),
    ("POST", "/api/groups/no-such-group/expire", {"client_id": "c"}, 404, "no group 'no-such-group'"),
    ("POST", "/api/faults", {"api": "Hartbeat", "error": "NOT_COORDINATOR"}, 400, "did you mean Heartbeat"),
    ("POST", "/api/faults", {"api": "Heartbeat", "error": "NOT_A_THING"}, 400, "unknown error 'NOT_A_THING'"),
    ("POST", "/api/clock/advance", {"ms": -1000}, 400, "must not be negative"),
    ("POST", "/api/clock/advance", {"ms": "-1s"}, 400, "must not be negative"),
    ("POST", "/api/faults", {"api": "Fetch", "delay_ms": "-5ms"}, 400, "must not be negative"),
    ("POST", "/api/await/group", {"group": "g", "state": "Stable"}, 400, "timeout_ms is required"),
    ("POST", "/api/await/lag", {"group": "g"}, 400, "timeout_ms is required"),
    ("POST", "/api/clock/advance", {"ms": 1, "typo": 2}, 400, "unknown parameter(s) typo"),
    ("GET", "/api/nothing-here", None, 404, "no route GET /api/nothing-here"),
    ("DELETE", "/api/clock", None, 405, "takes GET, not DELETE"),
    ("POST", "/api/snapshots/none/restore", None, 404, "no snapshot 'none'"),
    ("POST", "/api/nodes/7/stop", None, 404, "no node 7"),
])
def test_bad_input_gets_a_4xx_with_a_clear_message(emulator, method, path, body, status, message):
    before = call(emulator, "GET", "/api/state")[1]
    got, answer = call(emulator, method, path, body)
    assert (got, answer["status"]) == (status, status) and message in answer["error"]
    after = call(emulator, "GET", "/api/state")[1]
    assert after["faults"] == before["faults"] and after["clock"] == before["clock"]
    assert broker_serves(emulator)


@pytest.mark.parametrize("raw,message", [(b"{not json", "the body is not JSON"), (b"[1, 2]", "a JSON object"),
                                         (b"\xff\xfe", "the body is not JSON")])
def test_malformed_json_is_a_400(emulator, raw, message):
    status, answer = call(emulator, "POST", "/api/faults", raw=raw, headers={"Content-Type": "application/json"})
    assert status == 400 and message in answer["error"]
    assert broker_serves(emulator)


def test_a_malformed_request_line_and_an_oversized_body_close_the_connection_cleanly(emulator):
    host, port = emulator.control_url.split("//")[1].rsplit(":", 1)
    oversized = (b"POST /api/faults HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                 b"Content-Length: 99999999\r\n\r\n")
    for data, status in ((b"NONSENSE\r\n\r\n", b" 400 "), (oversized, b" 413 ")):
        with socket.create_connection((host, int(port)), timeout=5) as sock:
            sock.sendall(data)
            reply = b""
            while chunk := sock.recv(4096):
                reply += chunk
            assert status in reply.split(b"\r\n", 1)[0]
    assert broker_serves(emulator)


def test_an_await_times_out_with_408_and_what_it_saw(emulator):
    status, answer = call(emulator, "POST", "/api/await/offset",
                          {"topic": "never", "partition": 0, "offset": 1, "timeout_ms": 50})
    assert status == 408 and "timed out after 50 ms" in answer["error"]
    assert answer["current"]["offset"] is None


def test_keep_alive_serves_several_calls_on_one_connection(emulator):
    host, port = emulator.control_url.split("//")[1].rsplit(":", 1)
    conn = http.client.HTTPConnection(host, int(port), timeout=5)
    try:
        for _ in range(3):
            conn.request("GET", "/api/clock")
            resp = conn.getresponse()
            assert resp.status == 200 and json.loads(resp.read())["manual"]
    finally:
        conn.close()


def test_a_token_is_required_when_configured():
    with KafkaEmulator(control_port=0, control_token="s3cret") as e:
        status, answer = call(e, "GET", "/api/clock")
        assert status == 401 and "Bearer" in answer["error"]
        status, _ = call(e, "GET", "/api/clock", headers={"Authorization": "Bearer wrong"})
        assert status == 401
        status, clock = call(e, "GET", "/api/clock", headers={"Authorization": "Bearer s3cret"})
        assert status == 200 and not clock["manual"]


def test_the_system_clock_cannot_be_moved(emulator):
    with KafkaEmulator(control_port=0) as e:
        status, answer = call(e, "POST", "/api/clock/advance", {"ms": 1000})
        assert status == 409 and "--manual-clock" in answer["error"]


def test_loopback_peers_only_unless_configured():
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("::ffff:127.0.0.1")
    assert not is_loopback("10.1.2.3") and not is_loopback("192.168.0.4") and not is_loopback("?")


def _outside_address() -> str | None:
    """An address of this machine that is not loopback, if it has one."""
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.connect(("192.0.2.1", 9))   # no packet is sent; picks the outgoing interface
            address = s.getsockname()[0]
    except OSError:
        return None
    return None if is_loopback(address) else address


@pytest.mark.parametrize("allow", [False, True])
def test_a_non_loopback_peer_is_refused_unless_allowed(allow):
    address = _outside_address()
    if address is None:
        pytest.skip("needs a non-loopback address on this machine")
    with KafkaEmulator(control_port=0, control_host="0.0.0.0", control_allow_remote=allow) as e:
        port = int(e.control_url.rsplit(":", 1)[1])
        try:
            with urllib.request.urlopen(f"http://{address}:{port}/api/clock", timeout=5) as resp:
                status = resp.status
        except urllib.error.HTTPError as exc:
            status = exc.code
            assert "loopback peers only" in json.loads(exc.read())["error"]
        assert status == (200 if allow else 403)
        assert call(e, "GET", "/api/clock")[0] == 200   # loopback is always served


@pytest.mark.parametrize("headers,reason", [
    ({"Origin": "http://evil.example"}, "cross-origin"),
    ({"Origin": "null"}, "cross-origin"),
    ({"Host": "evil.example"}, "is not this machine"),
])
def test_a_page_elsewhere_cannot_drive_the_api_through_a_local_browser(emulator, headers, reason):
    """A text/plain POST from another site's page (no CORS preflight) or a DNS-rebound name: 403,
    and the clock did not move."""
    before = call(emulator, "GET", "/api/clock")[1]["now_ms"]
    status, got = call(emulator, "POST", "/api/clock/advance", raw=b'{"ms": 60000}',
                       headers={"Content-Type": "text/plain", **headers})
    assert status == 403 and reason in got["error"]
    assert call(emulator, "GET", "/api/clock")[1]["now_ms"] == before


def test_the_page_on_the_control_port_may_call_it(emulator):
    origin = emulator.control_url.rstrip("/")
    before = call(emulator, "GET", "/api/clock")[1]["now_ms"]
    status, got = call(emulator, "POST", "/api/clock/advance", {"ms": 1000}, headers={"Origin": origin})
    assert status == 200 and got["now_ms"] == before + 1000
    assert call(emulator, "GET", "/api/clock", headers={"Host": "localhost"})[0] == 200
