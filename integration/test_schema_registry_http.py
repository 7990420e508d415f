"""kafkaemu's schema registry over plain HTTP: content types, bad input answered with Confluent's
errors (never a traceback), subjects that look like paths, concurrency, and what survives a
restart with a data dir, a snapshot restore and a reset."""
from __future__ import annotations

import asyncio
import json
import urllib.error
import urllib.request

import pytest

from kafkaemu.testing import KafkaEmulator

from .schema_registry_helpers import unique

aiohttp = pytest.importorskip("aiohttp", reason="the schema registry is served by aiohttp")

CT = "application/vnd.schemaregistry.v1+json"


def call(url: str, method: str = "GET", body=None, raw: bytes | None = None) -> tuple[int, object, str]:
    data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
    request = urllib.request.Request(url, data=data, method=method, headers={"Content-Type": CT})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            text = response.read().decode()
            return response.status, json.loads(text), response.headers["Content-Type"]
    except urllib.error.HTTPError as exc:
        text = exc.read().decode()
        return exc.code, json.loads(text), exc.headers["Content-Type"]


@pytest.fixture
def url(kafka_emulator_with_schema_registry):
    return kafka_emulator_with_schema_registry.get_schema_registry_url()


def test_content_type_and_answers(url):
    subject = unique("http")
    status, body, ctype = call(f"{url}/subjects/{subject}/versions", "POST", {"schema": '"string"'})
    assert status == 200 and set(body) == {"id"} and ctype.startswith(CT)
    status, body, _ = call(f"{url}/subjects/{subject}/versions/latest")
    assert body == {"subject": subject, "version": 1, "id": body["id"], "schema": '"string"'}
    status, body, _ = call(f"{url}/subjects/{subject}/versions/1/schema")
    assert body == "string"
    schema_id = call(f"{url}/subjects/{subject}/versions/1")[1]["id"]
    assert call(f"{url}/schemas/ids/{schema_id}")[1] == {"schema": '"string"'}
    status, body, _ = call(f"{url}/compatibility/subjects/{subject}/versions/latest?verbose=true", "POST",
                           {"schema": '"int"'})
    assert status == 200 and body["is_compatible"] is False and body["messages"]
    assert call(f"{url}/schemas/types")[1] == sorted(call(f"{url}/schemas/types")[1])


@pytest.mark.parametrize("path,method,raw,status,code", [
    ("/subjects/{s}/versions", "POST", b"{not json", 400, 400),
    ("/subjects/{s}/versions", "POST", b'["a list"]', 422, 422),
    ("/subjects/{s}/versions", "POST", b'{"schema": "{\\"type\\": \\"nope\\"}"}', 422, 42201),
    ("/subjects/{s}/versions", "POST", b'{"schema": "\\"int\\"", "schemaType": "XML"}', 422, 42201),
    ("/subjects/{s}/versions/zero", "GET", None, 422, 42202),
    ("/subjects/{s}/versions/0", "GET", None, 422, 42202),
    ("/subjects/{s}/versions/1", "GET", None, 404, 40401),
    ("/schemas/ids/424242", "GET", None, 404, 40403),
    ("/schemas/ids/abc", "GET", None, 404, 404),
    ("/config/{s}", "PUT", b'{"compatibility": "SIDEWAYS"}', 422, 42203),
    ("/mode/{s}", "PUT", b'{"mode": "WHATEVER"}', 422, 42204),
    ("/no/such/route", "GET", None, 404, 404),
    ("/subjects", "POST", b"{}", 405, 405),
])
def test_bad_requests(url, path, method, raw, status, code):
    got_status, body, _ = call(url + path.format(s=unique("bad")), method, raw=raw)
    assert (got_status, body["error_code"]) == (status, code), body
    assert "Traceback" not in body["message"]


def test_content_types_of_bodies(url):
    subject = unique("ctype")
    for ctype, status in (("application/json", 200), ("application/vnd.schemaregistry+json", 200),
                          ("application/x-www-form-urlencoded", 415), ("text/plain", 415)):
        request = urllib.request.Request(f"{url}/subjects/{subject}/versions", data=b'{"schema": "\\"int\\""}',
                                         method="POST", headers={"Content-Type": ctype})
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                assert (ctype, response.status) == (ctype, status)
        except urllib.error.HTTPError as exc:
            assert (ctype, exc.code, json.loads(exc.read())["error_code"]) == (ctype, status, status)


def test_deeply_nested_schemas_are_refused_cleanly(url):
    subject = unique("deep")
    inner = {"type": "string"}
    for _ in range(400):
        inner = {"type": "object", "properties": {"x": inner}}
    status, body, _ = call(f"{url}/subjects/{subject}/versions", "POST", {"schema": '{"type": "object"}',
                                                                         "schemaType": "JSON"})
    assert status == 200
    call(f"{url}/config/{subject}", "PUT", {"compatibility": "NONE"})
    status, body, _ = call(f"{url}/subjects/{subject}/versions", "POST", {"schema": json.dumps(inner),
                                                                         "schemaType": "JSON"})
    assert status in (200, 422), body
    status, body, _ = call(f"{url}/compatibility/subjects/{subject}/versions/latest", "POST",
                           {"schema": json.dumps(inner), "schemaType": "JSON"})
    assert (status == 200) or (status, body["error_code"]) == (422, 42201), body
    deep = "[" * 100_000 + "]" * 100_000
    status, body, _ = call(f"{url}/subjects/{subject}/versions", "POST", {"schema": deep})
    assert (status, body["error_code"]) == (422, 42201)


def test_a_body_over_the_limit(url):
    huge = json.dumps({"schema": json.dumps({"type": "enum", "name": "E",
                                             "symbols": [f"S{i}" for i in range(200_000)]})}).encode()
    assert len(huge) > 1048588 + 64 * 1024
    status, body, _ = call(f"{url}/subjects/{unique('huge')}/versions", "POST", raw=huge)
    assert (status, body["error_code"]) == (422, 42209)


@pytest.mark.parametrize("name", ["../../etc/passwd", "a/b", "..", "sub ject?x=1#y", "ünïcødé"])
def test_subjects_that_look_like_paths_are_just_subjects(url, name):
    from urllib.parse import quote
    quoted = quote(name, safe="")
    status, body, _ = call(f"{url}/subjects/{quoted}/versions", "POST", {"schema": '"bytes"'})
    assert status == 200, body
    assert name in call(f"{url}/subjects")[1]
    assert call(f"{url}/subjects/{quoted}/versions")[1] == [1]
    assert call(f"{url}/subjects/{quoted}", "DELETE")[1] == [1]
    assert call(f"{url}/subjects/{quoted}?permanent=true", "DELETE")[1] == [1]


def test_a_subject_with_control_characters_is_invalid(url):
    status, body, _ = call(f"{url}/subjects/a%00b/versions", "POST", {"schema": '"bytes"'})
    assert (status, body["error_code"]) == (422, 42208)


def test_a_thousand_concurrent_registrations_get_unique_ids(url):
    prefix = unique("many")

    async def run():
        async with aiohttp.ClientSession() as session:
            async def one(i):
                schema = json.dumps({"type": "record", "name": f"R{i}", "fields": [{"name": "f", "type": "int"}]})
                async with session.post(f"{url}/subjects/{prefix}-{i % 50}/versions",
                                        json={"schema": schema}) as response:
                    return response.status, await response.json(content_type=None)
            return await asyncio.gather(*(one(i) for i in range(1000)))

    results = asyncio.run(run())
    assert {s for s, _ in results} <= {200, 409}
    ok = [body["id"] for status, body in results if status == 200]
    # each subject takes its first record; the later ones (other record names) are incompatible
    assert len(ok) == len(set(ok))
    assert sum(len(call(f"{url}/subjects/{prefix}-{n}/versions")[1]) for n in range(50)) == len(ok)


def _state(url: str) -> dict:
    subjects = call(f"{url}/subjects?deleted=true")[1]
    return {"subjects": {s: [call(f"{url}/subjects/{s}/versions/{v}?deleted=true")[1]
                             for v in call(f"{url}/subjects/{s}/versions?deleted=true")[1]] for s in subjects},
            "config": call(f"{url}/config")[1], "mode": call(f"{url}/mode")[1]}


def _fill(url: str) -> None:
    call(f"{url}/subjects/a/versions", "POST", {"schema": '"string"'})
    call(f"{url}/config/a", "PUT", {"compatibility": "NONE"})
    call(f"{url}/subjects/a/versions", "POST", {"schema": '"int"'})
    call(f"{url}/subjects/b/versions", "POST", {"schema": '"int"'})
    call(f"{url}/subjects/a/versions/1", "DELETE")
    call(f"{url}/config", "PUT", {"compatibility": "FULL"})


def test_restart_with_a_data_dir_keeps_everything(tmp_path):
    with KafkaEmulator(schema_registry=True, data_dir=str(tmp_path)) as first:
        url = first.get_schema_registry_url()
        _fill(url)
        before = _state(url)
    with KafkaEmulator(schema_registry=True, data_dir=str(tmp_path)) as second:
        url = second.get_schema_registry_url()
        assert _state(url) == before
        assert call(f"{url}/subjects/c/versions", "POST", {"schema": '"long"'})[1] == {"id": 3}
        assert call(f"{url}/config/a")[1] == {"compatibilityLevel": "NONE"}


def test_snapshot_restore_and_reset():
    with KafkaEmulator(schema_registry=True) as emulator:
        url = emulator.get_schema_registry_url()
        _fill(url)
        before = _state(url)
        emulator.snapshot("registry")
        call(f"{url}/subjects/later/versions", "POST", {"schema": '"float"'})
        call(f"{url}/subjects/b?permanent=false", "DELETE")
        emulator.restore("registry")
        assert _state(url) == before
        emulator.reset()
        assert call(f"{url}/subjects?deleted=true")[1] == []
        assert call(f"{url}/subjects/x/versions", "POST", {"schema": '"float"'})[1] == {"id": 1}


def test_subprocess_mode_prints_and_serves_the_registry():
    with KafkaEmulator(schema_registry=True, subprocess_mode=True) as emulator:
        url = emulator.get_schema_registry_url()
        assert call(f"{url}/subjects/s/versions", "POST", {"schema": '"string"'})[1] == {"id": 1}
        assert call(f"{url}/subjects")[1] == ["s"]
