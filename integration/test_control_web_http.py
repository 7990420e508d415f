"""The web page over HTTP on the control port: ``GET /`` is HTML with a content security policy
(scripts and styles only from the control port itself), its files under ``/ui/`` are the ones
shipped in the package, and with a token the page opens as ``/?token=T`` while the API still
wants the header."""
import http.client
from importlib import resources

import pytest

from kafkaemu.testing import KafkaEmulator


@pytest.fixture(scope="module")
def emulator():
    with KafkaEmulator(control_port=0) as e:
        yield e


def get(emulator, path, headers=None):
    """(status, headers, body) of one GET on a fresh connection."""
    host, port = emulator.control_url.split("//")[1].rsplit(":", 1)
    conn = http.client.HTTPConnection(host, int(port), timeout=10)
    try:
        conn.request("GET", path, headers=headers or {})
        resp = conn.getresponse()
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read()
    finally:
        conn.close()


def test_the_page_is_html_whose_scripts_and_styles_come_only_from_the_control_port(emulator):
    emulator.control("topic_create", name="web-orders", partitions=3)
    status, headers, body = get(emulator, "/")
    assert status == 200 and headers["content-type"] == "text/html; charset=utf-8"
    policy = headers["content-security-policy"]
    assert "default-src 'none'" in policy and "script-src 'self'" in policy and "style-src 'self'" in policy
    assert headers["x-content-type-options"] == "nosniff" and headers["cache-control"] == "no-store"
    page = body.decode()
    assert page.startswith("<!doctype html>") and '<script src="/ui/page.js" defer></script>' in page
    assert 'data-topic="web-orders" data-partition="2"' in page            # the state, rendered on the server
    assert "http://" not in page and "https://" not in page                   # nothing from elsewhere
    assert get(emulator, "/index.html")[2].startswith(b"<!doctype html>")


@pytest.mark.parametrize("name, content_type", [("page.js", "text/javascript; charset=utf-8"),
                                                ("page.css", "text/css; charset=utf-8"),
                                                ("icon.svg", "image/svg+xml")])
def test_the_page_files_are_served_from_the_package(emulator, name, content_type):
    status, headers, body = get(emulator, f"/ui/{name}")
    assert status == 200 and headers["content-type"] == content_type
    assert body == (resources.files("kafkaemu.control") / "ui" / name).read_bytes()
    assert b"http://" not in body.replace(b"http://www.w3.org/2000/svg", b"") and b"https://" not in body


def test_an_unknown_page_file_is_a_404(emulator):
    status, headers, body = get(emulator, "/ui/nope.js")
    assert status == 404 and headers["content-type"] == "application/json" and b"no route" in body


def test_with_a_token_the_page_opens_with_it_in_the_query_and_the_api_still_wants_the_header():
    with KafkaEmulator(control_port=0, control_token="s3cret") as e:
        status, headers, body = get(e, "/")
        assert status == 401 and b"/?token=" in body and headers["content-type"].startswith("text/html")
        assert get(e, "/?token=wrong")[0] == 401
        status, _, body = get(e, "/?token=s3cret")
        assert status == 200 and b'name="token" value="s3cret"' in body       # the filters keep it
        assert get(e, "/", headers={"Authorization": "Bearer s3cret"})[0] == 200
        assert get(e, "/ui/page.js")[0] == 200                                # no state in the files
        assert get(e, "/api/state?token=s3cret")[0] == 401
