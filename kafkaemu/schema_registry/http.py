"""Confluent Schema Registry's REST API over aiohttp, on the broker's loop and its own port; the
schema work (parsing, compatibility checks) in the registry's worker process (worker.py).

Every request first passes the checks the control API's pass (kafkaemu.http_guard): a foreign Host
or Origin is a 403, a body not declared JSON (Confluent's types, or octet-stream, which a page
cannot send elsewhere without a preflight) a 415.

Paths are matched segment by segment on the raw path, each segment percent-decoded on its own, so
a subject may hold ``/`` (sent as ``%2F``) or ``..`` and is still one subject. Answers are
``application/vnd.schemaregistry.v1+json``; errors ``{"error_code": N, "message": "..."}`` with
Confluent's status and code. Handlers that parse run the registry's steps through the worker,
one operation at a time; the others never await between reading and writing the registry's state."""
from __future__ import annotations

import inspect
import json
import re
from urllib.parse import unquote

from ..logging import get_logger
from aiohttp import web

from ..http_guard import Guard, Refused
from . import errors as E
from .registry import SchemaRegistry, parse_version
from .worker import SchemaWorker
from .schema_types import schema_types

log = get_logger("kafkaemu.schema_registry.http")

CONTENT_TYPE = "application/vnd.schemaregistry.v1+json"
# What Confluent's resources consume; no Content-Type at all is read as octet-stream (Jersey).
BODY_TYPES = ("application/vnd.schemaregistry.v1+json", "application/vnd.schemaregistry+json", "application/json",
              "application/octet-stream")
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def _flag(request: web.Request, *names: str) -> bool:
    """A boolean query parameter as Jersey reads one: "true" in any case is true."""
    return any(request.query.get(n, "").lower() == "true" for n in names)


def _int(request: web.Request, name: str, default: int) -> int:
    try:
        return int(request.query.get(name, default))
    except ValueError:
        return default


def _subject(text: str) -> str:
    if not text or _CONTROL.search(text) or text in ("__GLOBAL", "__EMPTY"):
        raise E.invalid_subject(text)
    return text


def _page(items: list, request: web.Request) -> list:
    offset, limit = max(0, _int(request, "offset", 0)), _int(request, "limit", -1)
    items = items[offset:]
    return items if limit < 0 else items[:limit]


class RegistryApi:
    def __init__(self, registry: SchemaRegistry, worker: SchemaWorker, guard: Guard) -> None:
        self.registry = registry
        self.worker = worker
        self.guard = guard
        r = self.routes = []
        add = lambda method, path, fn: r.append((method, [s for s in path.split("/") if s], fn))  # noqa: E731
        add("GET", "/", self.root)
        add("GET", "/schemas/types", self.types)
        add("GET", "/schemas", self.list_schemas)
        add("GET", "/schemas/ids/{id}", self.schema_by_id)
        add("GET", "/schemas/ids/{id}/schema", self.raw_schema_by_id)
        add("GET", "/schemas/ids/{id}/subjects", self.id_subjects)
        add("GET", "/schemas/ids/{id}/versions", self.id_versions)
        add("GET", "/subjects", self.subjects)
        add("POST", "/subjects/{subject}", self.lookup)
        add("DELETE", "/subjects/{subject}", self.delete_subject)
        add("GET", "/subjects/{subject}/metadata", self.latest_with_metadata)
        add("GET", "/subjects/{subject}/versions", self.versions)
        add("POST", "/subjects/{subject}/versions", self.register)
        add("GET", "/subjects/{subject}/versions/{version}", self.get_version)
        add("GET", "/subjects/{subject}/versions/{version}/schema", self.raw_version)
        add("GET", "/subjects/{subject}/versions/{version}/referencedby", self.referenced_by)
        add("DELETE", "/subjects/{subject}/versions/{version}", self.delete_version)
        add("POST", "/compatibility/subjects/{subject}/versions", self.compatible_all)
        add("POST", "/compatibility/subjects/{subject}/versions/{version}", self.compatible_version)
        for base in ("/config", "/config/{subject}"):
            add("GET", base, self.get_config)
            add("PUT", base, self.put_config)
            add("DELETE", base, self.delete_config)
        for base in ("/mode", "/mode/{subject}"):
            add("GET", base, self.get_mode)
            add("PUT", base, self.put_mode)
            add("DELETE", base, self.delete_mode)
        add("GET", "/contexts", self.contexts)

    def application(self, client_max_size: int) -> web.Application:
        """An aiohttp app sending every request to ``handle`` (any path: a segment may hold any
        character, a newline too)."""
        app = web.Application(client_max_size=client_max_size)
        app.router.add_route("*", r"/{tail:[\s\S]*}", self.handle)
        return app

    # -- dispatch ------------------------------------------------------------------------------
    async def handle(self, request: web.Request) -> web.StreamResponse:
        try:
            peer = request.transport.get_extra_info("peername") if request.transport else None
            self.guard.check(request.method, request.headers, str(peer[0]) if peer else None)
        except Refused as refused:
            log.warning("schema_registry_request_refused", method=request.method, path=request.path,
                        reason=refused.reason)
            return _answer({"error_code": refused.status, "message": refused.reason}, refused.status)
        try:
            segments = [unquote(s) for s in request.rel_url.raw_path.split("/") if s]
            allowed = False
            for method, pattern, fn in self.routes:
                params = _match(pattern, segments)
                if params is None:
                    continue
                if method != request.method:
                    allowed = True
                    continue
                body = await _body(request) if request.method in ("POST", "PUT") else None
                if "subject" in params:
                    params["subject"] = _subject(params["subject"])
                result = fn(request, body, **params)
                if inspect.isawaitable(result):
                    result = await result
                return _answer(result)
            raise E.method_not_allowed() if allowed else E.not_found_route()
        except E.RegistryError as exc:
            return _answer(exc.body(), exc.status)
        except RecursionError:   # a schema nested deeper than the checks can walk
            return _answer(E.invalid_schema("Invalid schema: nested too deeply").body(), 422)
        except Exception:   # never a traceback to the client, as Confluent's 50001/500
            log.exception("schema_registry_request_failed", method=request.method, path=request.path)
            return _answer({"error_code": 50001, "message": "Error in the backend data store"}, 500)

    # -- schemas ---------------------------------------------------------------------------------
    def root(self, request, body):
        return {}

    def types(self, request, body):
        return schema_types()

    def list_schemas(self, request, body):
        found = self.registry.schemas(request.query.get("subjectPrefix", ""), _flag(request, "deleted"),
                                      _flag(request, "latestOnly"))
        return _page([sv.answer() for sv in found], request)

    def _id(self, text: str) -> int:
        try:
            return int(text)
        except ValueError:
            raise E.not_found_route() from None

    def _formatted(self, sv, request):
        return self.worker.run(self.registry.formatted_steps(sv, request.query.get("format")))

    async def schema_by_id(self, request, body, id):
        sv = self.registry.schema_by_id(self._id(id))
        subject = request.query.get("subject")
        if subject:
            holders = self.registry.id_versions(sv.id, subject, deleted=True)
            sv = holders[-1] if holders else sv
        answer = sv.schema_fields(await self._formatted(sv, request))
        if _flag(request, "fetchMaxId"):
            answer["maxId"] = self.registry.state.max_id
        return answer

    async def raw_schema_by_id(self, request, body, id):
        return _Raw(await self._formatted(self.registry.schema_by_id(self._id(id)), request))

    def id_subjects(self, request, body, id):
        found = self.registry.id_versions(self._id(id), request.query.get("subject"), _flag(request, "deleted"))
        return _page(sorted({sv.subject for sv in found}), request)

    def id_versions(self, request, body, id):
        found = self.registry.id_versions(self._id(id), request.query.get("subject"), _flag(request, "deleted"))
        return _page([{"subject": sv.subject, "version": sv.version} for sv in found], request)

    def contexts(self, request, body):
        """The default context and those named by subjects (``:.ctx:subject``); kafkaemu keeps one id
        space for all of them (Confluent keeps one per context)."""
        named = {s.split(":", 2)[1] for s in self.registry.subjects(deleted=True)
                 if s.startswith(":.") and s.count(":") >= 2}
        return _page(["."] + sorted(named), request)

    # -- subjects and versions ---------------------------------------------------------------------
    def subjects(self, request, body):
        return _page(self.registry.subjects(request.query.get("subjectPrefix", ""), _flag(request, "deleted"),
                                            _flag(request, "deletedOnly", "deleted_only")), request)

    async def lookup(self, request, body, subject):
        sv = await self.worker.run(self.registry.lookup_steps(subject, body, _flag(request, "normalize"),
                                                              _flag(request, "deleted")))
        return sv.answer()

    def delete_subject(self, request, body, subject):
        return self.registry.delete_subject(subject, _flag(request, "permanent"))

    def versions(self, request, body, subject):
        return _page(self.registry.versions(subject, _flag(request, "deleted"),
                                            _flag(request, "deletedOnly", "deleted_only")), request)

    def register(self, request, body, subject):
        return self.worker.run(self.registry.register_steps(subject, body, _flag(request, "normalize")))

    async def get_version(self, request, body, subject, version):
        sv = self.registry.get_version(subject, version, _flag(request, "deleted"))
        return sv.answer(await self._formatted(sv, request))

    async def latest_with_metadata(self, request, body, subject):
        wanted = dict(zip(request.query.getall("key", []), request.query.getall("value", [])))
        sv = self.registry.latest_with_metadata(subject, wanted, _flag(request, "deleted"))
        return sv.answer(await self._formatted(sv, request))

    async def raw_version(self, request, body, subject, version):
        sv = self.registry.get_version(subject, version, _flag(request, "deleted"))
        return _Raw(await self._formatted(sv, request))

    def referenced_by(self, request, body, subject, version):
        return self.registry.referenced_by(subject, version)

    def delete_version(self, request, body, subject, version):
        return self.registry.delete_version(subject, version, _flag(request, "permanent"))

    def compatible_all(self, request, body, subject):
        return self._compatible(request, body, subject, None)

    def compatible_version(self, request, body, subject, version):
        parse_version(version)
        return self._compatible(request, body, subject, version)

    async def _compatible(self, request, body, subject, version):
        messages = await self.worker.run(self.registry.compatibility_steps(subject, version, body,
                                                                           _flag(request, "normalize")))
        answer = {"is_compatible": not messages}
        if _flag(request, "verbose"):
            answer["messages"] = messages
        return answer

    # -- config and modes ------------------------------------------------------------------------
    def get_config(self, request, body, subject=None):
        return self.registry.get_config(subject, _flag(request, "defaultToGlobal"))

    def put_config(self, request, body, subject=None):
        return self.registry.put_config(subject, body)

    def delete_config(self, request, body, subject=None):
        return self.registry.delete_config(subject)

    def get_mode(self, request, body, subject=None):
        return self.registry.get_mode(subject, _flag(request, "defaultToGlobal"))

    def put_mode(self, request, body, subject=None):
        return self.registry.put_mode(subject, body, _flag(request, "force"))

    def delete_mode(self, request, body, subject=None):
        return self.registry.delete_mode(subject)


class _Raw(str):
    """An answer that is the schema text itself (the ``/schema`` endpoints)."""


def _match(pattern: list[str], segments: list[str]) -> dict | None:
    if len(pattern) != len(segments):
        return None
    bound = {}
    for want, got in zip(pattern, segments):
        if want.startswith("{"):
            bound[want[1:-1]] = got
        elif want != got:
            return None
    return bound


async def _body(request: web.Request):
    if request.headers.get("Content-Type") and request.content_type not in BODY_TYPES:
        raise E.RegistryError(415, 415, "HTTP 415 Unsupported Media Type")
    try:
        raw = await request.read()
    except web.HTTPRequestEntityTooLarge:
        raise E.schema_too_large("Write failed because schema is too large") from None
    if not raw:
        return None
    try:
        return json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise E.bad_request(f"Unexpected character in the request body: {str(exc)[:200]}") from None


def _answer(result, status: int = 200) -> web.Response:
    text = str(result) if isinstance(result, _Raw) else json.dumps(result)
    return web.Response(text=text, status=status, content_type=CONTENT_TYPE)
