"""What keeps the control API safe when a browser, a stray page or a stalled client reaches it:
the Host and Origin checks on every path (the web page too) and with remote peers allowed, the
warning when remote peers need no token, JSON bodies the API will not read, and connections that
never finish a request."""
import http.client
import json
import socket

import pytest

from kafkaemu.testing import KafkaEmulator


@pytest.fixture(scope="module")
def emulator():
    with KafkaEmulator(manual_clock=True, control_port=0, control_idle_timeout_ms=300) as e:
        yield e


@pytest.fixture(scope="module")
def remote():
    """Remote peers allowed, no token: the checks on Host and Origin must hold all the same."""
    with KafkaEmulator(manual_clock=True, control_port=0, control_allow_remote=True) as e:
        yield e


def address(emulator):
    host, port = emulator.control_url.split("//")[1].rsplit(":", 1)
    return host, int(port)


def call(emulator, method, path, body=None, headers=None):
    """(status, answer); a body is declared JSON unless ``headers`` are given."""
    if headers is None and body is not None:
        headers = {"Content-Type": "application/json"}
    conn = http.client.HTTPConnection(*address(emulator), timeout=10)
    try:
        conn.request(method, path, body=body, headers=headers or {})
        resp = conn.getresponse()
        data = resp.read()
        kind = resp.getheader("Content-Type", "")
        return resp.status, json.loads(data) if kind.startswith("application/json") else data
    finally:
        conn.close()


@pytest.mark.parametrize("path", ["/", "/index.html", "/ui/page.js", "/api/state", "/api/nothing"])
def test_a_foreign_host_is_refused_on_every_path_the_page_included(emulator, path):
    """A DNS-rebinding page reads the page (topic names, client ids, the request log) unless the
    Host is checked first."""
    status, answer = call(emulator, "GET", path, headers={"Host": f"evil.example:{address(emulator)[1]}"})
    assert status == 403 and "is not this machine" in answer["error"]
    assert call(emulator, "GET", path if path != "/api/nothing" else "/api")[0] == 200


@pytest.mark.parametrize("headers,reason", [
    ({"Origin": "http://evil.example", "Content-Type": "text/plain"}, "cross-origin"),
    ({"Origin": "null", "Content-Type": "text/plain"}, "cross-origin"),
    ({"Host": "rebound.evil.example"}, "is not this machine"),
])
def test_remote_access_keeps_the_origin_and_host_checks(remote, headers, reason):
    before = call(remote, "GET", "/api/clock")[1]["now_ms"]
    status, got = call(remote, "POST", "/api/clock/advance", body=b'{"ms": 60000}', headers=headers)
    assert status == 403 and reason in got["error"]
    assert call(remote, "GET", "/api/clock")[1]["now_ms"] == before


def test_remote_access_takes_ip_addresses_and_the_machines_names_as_host(remote):
    port = address(remote)[1]
    for host in ("192.0.2.10", f"[2001:db8::1]:{port}", socket.gethostname(), f"localhost:{port}"):
        assert call(remote, "GET", "/api/clock", headers={"Host": host})[0] == 200, host


def test_remote_access_without_a_token_is_warned_about_on_the_page(remote, emulator):
    status, page = call(remote, "GET", "/")
    assert status == 200 and b"accepts remote peers without a token" in page
    assert b"accepts remote peers without a token" not in call(emulator, "GET", "/")[1]


def test_remote_access_without_a_token_is_warned_about_at_start(capfd):
    with KafkaEmulator(subprocess_mode=True, control_allow_remote=True):
        pass
    assert "control_open_to_remote_peers" in capfd.readouterr().err
    with KafkaEmulator(subprocess_mode=True, control_allow_remote=True, control_token="t0ken"):
        pass
    assert "control_open_to_remote_peers" not in capfd.readouterr().err


@pytest.mark.parametrize("body,message", [
    (b'{"ms": ' + b"[" * 100_000 + b"]" * 100_000 + b"}", "nested"),
    (b'{"ms": ' + b"[" * 40 + b"]" * 40 + b"}", "nested more than 32 levels"),
    (b'{"ms": NaN}', "NaN is not a JSON number"),
    (b'{"ms": Infinity}', "Infinity is not a JSON number"),
    (b'{"ms": -Infinity}', "-Infinity is not a JSON number"),
    (b'{"ms": 1e999}', "out of range"),
    (b'{"ms": ' + b"9" * 5000 + b"}", "5000 digits"),
    (b'{"ms": 1e308}', "at most 3155760000000 ms"),
    (b'{"ms": 99999999999999999999}', "at most 3155760000000 ms"),
])
def test_json_the_api_will_not_read_is_a_400_and_the_clock_stays(emulator, body, message):
    before = call(emulator, "GET", "/api/clock")[1]["now_ms"]
    status, answer = call(emulator, "POST", "/api/clock/advance", body=body,
                          headers={"Content-Type": "application/json"})
    assert status == 400 and message in answer["error"], answer
    assert call(emulator, "GET", "/api/clock")[1]["now_ms"] == before


@pytest.mark.parametrize("query", ["ms=" + "9" * 5000, "ms=1e400s", "ms=nan", "ms=" + "9" * 30 + "h"])
def test_numbers_in_the_query_string_are_bounded_too(emulator, query):
    status, answer = call(emulator, "POST", f"/api/clock/advance?{query}")
    assert status == 400, answer


def test_a_config_value_that_is_an_object_is_a_400(emulator):
    status, answer = call(emulator, "POST", "/api/topics", body=json.dumps(
        {"name": "nested", "configs": {"retention.ms": {"a": [1]}}}))
    assert status == 400 and "string or a number" in answer["error"]


def _closed_by_server(sock: socket.socket) -> bool:
    """Read until the server closes (b"" or a reset); a socket timeout means it never did."""
    sock.settimeout(30)
    try:
        while sock.recv(4096):
            pass
    except ConnectionResetError:
        pass
    return True


STALLED_POST = b"POST /api/clock/advance HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 10\r\n\r\n{"


@pytest.mark.parametrize("sent", [b"", b"GET /api/clock HTTP/1.1\r\nHost: 127.0.0.1\r\n", STALLED_POST])
def test_connections_that_never_finish_a_request_are_closed(emulator, sent):
    stalled = []
    for _ in range(20):
        sock = socket.create_connection(address(emulator), timeout=5)
        sock.sendall(sent)
        stalled.append(sock)
    try:
        assert call(emulator, "GET", "/api/clock")[0] == 200   # the others are served meanwhile
        assert all(_closed_by_server(s) for s in stalled)
    finally:
        for s in stalled:
            s.close()


def test_an_idle_keep_alive_connection_is_closed(emulator):
    with socket.create_connection(address(emulator), timeout=5) as sock:
        sock.sendall(b"GET /api/clock HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        assert sock.recv(65536).startswith(b"HTTP/1.1 200")
        assert _closed_by_server(sock)


def test_a_year_long_advance_answers_and_the_broker_keeps_serving(emulator):
    """1e11 ms used to hold the loop for more than 20 s (the 10 s transaction check replayed ten
    million times); each periodic check now runs once."""
    from kafkaemu.testing.raw_client import api_versions_frame, connect, read_reply
    before = call(emulator, "GET", "/api/clock")[1]["now_ms"]
    status, clock = call(emulator, "POST", "/api/clock/advance", body=b'{"ms": 1e11}')
    assert status == 200 and clock["now_ms"] == before + 10**11
    with connect(emulator) as sock:
        sock.sendall(api_versions_frame(correlation_id=7))
        assert read_reply(sock)[:4] == b"\x00\x00\x00\x07"


@pytest.mark.parametrize("kind", ["text/plain", "application/x-www-form-urlencoded", None])
def test_a_body_declared_as_a_form_or_text_is_refused_without_an_origin_too(emulator, kind):
    """What a page elsewhere sends without a preflight, from a browser that sends no Origin: the
    guard the schema registry shares (kafkaemu/http_guard.py) refuses it by its Content-Type, and a
    body that declares none (a page's fetch of a Blob with no type) as the schema registry does."""
    before = call(emulator, "GET", "/api/clock")[1]["now_ms"]
    headers = {} if kind is None else {"Content-Type": kind}
    status, got = call(emulator, "POST", "/api/clock/advance", body=b'{"ms": 60000}', headers=headers)
    assert status == 415 and "must be JSON" in got["error"]
    assert call(emulator, "GET", "/api/clock")[1]["now_ms"] == before
