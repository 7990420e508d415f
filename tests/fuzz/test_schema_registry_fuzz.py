"""Fuzzing the schema registry's HTTP surface (issue 28): any method, path, query and body, with any
Content-Type, over the registry's aiohttp app on loopback (its own guard, routing, worker process and
registry over a broker's store). Every request is answered with Confluent's error shape and a status
below 500 (a 500 is "Error in the backend data store": an exception the registry did not expect),
or 504 for a check past its work budget; the registry then still answers and its ids stay unique."""
from __future__ import annotations

import asyncio
import json
from urllib.parse import quote

import pytest

pytest.importorskip("hypothesis", reason="the fuzz tests need hypothesis (pip install kafkaemu[test])")
pytest.importorskip("aiohttp", reason="the schema registry is served by aiohttp")

from aiohttp.test_utils import TestClient, TestServer  # noqa: E402
from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from kafkaemu.http_guard import Guard  # noqa: E402
from kafkaemu.schema_registry.http import BODY_TYPES, RegistryApi  # noqa: E402
from kafkaemu.schema_registry.worker import SchemaWorker  # noqa: E402

from ..schema_registry.helpers import Env  # noqa: E402
from .test_wire_fuzz import fuzz  # noqa: E402

CT = "application/vnd.schemaregistry.v1+json"
AVRO = json.dumps({"type": "record", "name": "R", "fields": [{"name": "a", "type": "string"}]})
JSON_SCHEMA = json.dumps({"type": "object", "properties": {"a": {"type": "string"}}})
PROTO = 'syntax = "proto3";\npackage p;\nmessage M {\n  string a = 1;\n}\n'
SUBJECTS = ["avro", "json", "proto", "refd", "fresh", "", "a/b", "..", "%00", "ünï", "x" * 300, "__GLOBAL",
            ":.ctx:s"]
SCHEMAS = [AVRO, JSON_SCHEMA, PROTO, '"string"', '"int"', "{", "[]", "null", '{"type": "nope"}', "{}",
           '{"$ref": "#/definitions/x"}', '{"$ref": "#"}', '{"anyOf": [{"$ref": "#"}, {"$ref": "#"}]}',
           '{"type": "enum", "name": "E", "symbols": []}', 'syntax = "proto3"; message {',
           '{"type":"record","name":"R","fields":[{"name":"a","type":"int","default":"x"}]}',
           "[" * 3000 + "]" * 3000, '{"properties": {"a": {"$ref": "other.json"}}}']

scalars = st.one_of(st.none(), st.booleans(), st.integers(min_value=-2**70, max_value=2**70), st.floats(),
                    st.text(max_size=20), st.sampled_from(["AVRO", "JSON", "PROTOBUF", "latest", "-1", "BACKWARD",
                                                            "IMPORT", "READONLY", "FULL_TRANSITIVE"]))
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner,
                                                                                           max_size=3), max_leaves=10)
references = st.lists(st.one_of(values, st.fixed_dictionaries(
    {"name": st.sampled_from(["other.json", "r.proto", "R", ""]), "subject": st.sampled_from(SUBJECTS),
     "version": st.one_of(st.integers(-2, 3), st.just(2**31), st.text(max_size=3))})), max_size=3)
schema_bodies = st.fixed_dictionaries(
    {"schema": st.one_of(st.sampled_from(SCHEMAS), st.text(max_size=40), values.map(json.dumps))},
    optional={"schemaType": st.one_of(st.sampled_from(["AVRO", "JSON", "PROTOBUF", "json", "XML", ""]), values),
              "references": st.one_of(references, values), "metadata": values, "ruleSet": values,
              "id": st.one_of(st.integers(-2, 5), values), "version": st.one_of(st.integers(-2, 5), values),
              "compatibility": st.sampled_from(["NONE", "BACKWARD", "FULL_TRANSITIVE", "sideways", 7]),
              "mode": st.sampled_from(["READWRITE", "IMPORT", "READONLY", "nope", None])})


def _segment(draw, name: str) -> str:
    if name == "subject":
        return quote(draw(st.one_of(st.sampled_from(SUBJECTS), st.text(min_size=1, max_size=12))), safe="")
    if name == "version":
        return quote(str(draw(st.one_of(st.sampled_from(["latest", "-1", "0", "1", "2", "2147483648", "abc", "1e3"]),
                                        st.integers(-3, 2**40)))), safe="")
    return quote(str(draw(st.one_of(st.integers(-3, 2**40), st.text(min_size=1, max_size=6)))), safe="")


@st.composite
def requests(draw, routes):
    method, pattern, _ = draw(st.sampled_from(routes))
    if draw(st.integers(0, 9)) == 0:   # another method on the same path, or a path one segment off
        method = draw(st.sampled_from(["GET", "POST", "PUT", "DELETE", "PATCH"]))
    segments = [_segment(draw, s[1:-1]) if s.startswith("{") else s for s in pattern]
    if draw(st.integers(0, 19)) == 0:
        segments.append(_segment(draw, "x"))
    flags = draw(st.dictionaries(st.sampled_from(
        ["normalize", "deleted", "permanent", "verbose", "format", "subject", "subjectPrefix", "offset", "limit",
         "defaultToGlobal", "force", "deletedOnly", "latestOnly", "fetchMaxId", "key", "value"]),
        st.one_of(st.sampled_from(["true", "false", "serialized", "-1", "5", ""]), st.text(max_size=5)), max_size=4))
    query = "&".join(f"{quote(k)}={quote(v, safe='')}" for k, v in flags.items())
    path = "/" + "/".join(segments) + (f"?{query}" if query else "")
    body = draw(st.one_of(st.none(), schema_bodies.map(lambda b: json.dumps(b).encode()),
                          values.map(lambda v: json.dumps(v).encode()), st.binary(max_size=40)))
    content_type = draw(st.sampled_from([CT, CT, CT, "application/json", "application/octet-stream", "text/plain",
                                         None]))
    return method, path, body, content_type


class Served:
    """The registry's app on loopback, on a loop of its own that the examples share."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.env = Env()
        self.run(self._start())

    def run(self, coro):
        return self.loop.run_until_complete(coro)

    async def _start(self) -> None:
        self.worker = SchemaWorker()
        guard = Guard("the schema registry", allow_remote=False, body_types=BODY_TYPES)
        self.api = RegistryApi(self.env.registry, self.worker, guard)
        self.client = TestClient(TestServer(self.api.application(1 << 20)))
        await self.client.start_server()
        for subject, schema, kind in (("avro", AVRO, "AVRO"), ("json", JSON_SCHEMA, "JSON"), ("proto", PROTO, "PROTOBUF")):
            await self.call("POST", f"/subjects/{subject}/versions", json.dumps({"schema": schema, "schemaType": kind}))
        await self.call("POST", "/subjects/refd/versions", json.dumps(
            {"schema": '{"properties": {"a": {"$ref": "other.json"}}}', "schemaType": "JSON",
             "references": [{"name": "other.json", "subject": "json", "version": 1}]}))

    async def call(self, method: str, path: str, body: bytes | None, content_type: str | None = CT):
        headers = {"Content-Type": content_type} if content_type else {}
        async with self.client.request(method, path, data=body, headers=headers, skip_auto_headers=["Content-Type"]) as r:
            return r.status, r.headers.get("Content-Type", ""), await r.read()

    def close(self) -> None:
        self.run(self.client.close())
        self.run(self.worker.close())
        self.loop.close()


@pytest.fixture(scope="module")
def served():
    s = Served()
    yield s
    s.close()


def _routes():
    env = Env()
    return RegistryApi(env.registry, None, None).routes


@fuzz(300)
@given(case=requests(_routes()))
def test_any_request_is_answered_with_confluents_errors_below_500(served, case):
    method, path, body, content_type = case
    status, kind, data = served.run(served.call(method, path, body, content_type))
    assert kind.startswith(CT), (status, kind, data[:200])
    if status >= 400:
        answer = json.loads(data)
        assert isinstance(answer["error_code"], int) and isinstance(answer["message"], str), answer
        assert status < 500 or (status, answer["error_code"]) == (504, 504), (method, path, body, answer)
        assert "Traceback" not in answer["message"]
    elif not path.split("?")[0].endswith("/schema"):
        json.loads(data)
    # the registry still answers, and no id names two schemas
    status, _, data = served.run(served.call("GET", "/schemas?deleted=true", None))
    assert status == 200
    seen = {}
    for sv in json.loads(data):
        assert seen.setdefault(sv["id"], (sv["schema"], sv.get("schemaType"), json.dumps(sv.get("references")))) == \
            (sv["schema"], sv.get("schemaType"), json.dumps(sv.get("references"))), sv
