"""The HTTP control API: aiohttp's low-level server on the broker's own loop, on its own port,
never on a Kafka listener.

aiohttp parses HTTP/1.1 (keep-alive, pipelining, chunked bodies, head and body limits) and closes
idle connections; routing is kafkaemu's: the routes come from the operation table
(kafkaemu.control.table.OPS, ``GET /api`` lists them) and parameters are taken from the path, the
query string and a JSON object body alike. Requests on one connection are answered in turn, so an
await holds only its own connection. Answers are JSON: the operation's result, or
``{"error": message, "status": code, ...}`` with a 4xx for a refused call (404 unknown
route/group/topic, 405 wrong method, 408 an await that timed out, 409 a conflict such as advancing
the system clock, 413 a body over 1 MiB, 507 a snapshot that does not fit in memory).

Before anything else, every request is checked (kafkaemu.http_guard, the schema registry's checks
too): peers other than loopback get 403 unless ``control_allow_remote``; a Host that is not this
machine (a DNS-rebinding page) or an Origin other than the control port's own (a page posting from a
local browser) get 403 always, a body declared as anything but ``application/json`` 415; with
``control_token`` every call needs ``Authorization: Bearer TOKEN`` (401 otherwise).
A connection with no request under way for ``control_idle_timeout_ms`` (idle, or a request head or
body still arriving) is closed.

``GET /`` is a web page of the broker's state (kafkaemu.control.web), its files under ``/ui/``; with
a token, the page is opened as ``/?token=TOKEN``.
"""
from __future__ import annotations

import asyncio
import json
import logging
from urllib.parse import parse_qsl, unquote, urlsplit

from ..logging import get_logger
from aiohttp import http_exceptions, web

from . import listener
from . import web as page
from ..http_guard import Guard, Refused, is_loopback  # noqa: F401 (is_loopback: part of this module's interface)
from .operations import OPS, Control
from .params import BadRequest, ControlError

log = get_logger("kafkaemu.control.http")

MAX_HEAD_BYTES = 16 * 1024
MAX_BODY_BYTES = 1 << 20
MAX_JSON_DEPTH = 32
# GET pages served as they are, without a token (path -> (content type, bytes)): the web page's files.
PAGES: dict[str, tuple[str, bytes]] = page.asset_pages()
WEB_PAGE_PATHS = ("/", "/index.html")


class _ClientMistakes(logging.Filter):
    """aiohttp logs a malformed request at ERROR with a traceback; it is answered 400, the client's
    mistake, not the server's."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        return not isinstance(exc, http_exceptions.HttpProcessingError)


_aiohttp_log = logging.getLogger("kafkaemu.control.http.server")
_aiohttp_log.addFilter(_ClientMistakes())


class _BodyRefused(Exception):
    """A body not read (too large, too slow): answered, then the connection is closed."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status, self.message = status, message


class _Route:
    def __init__(self, op) -> None:
        self.op = op
        self.segments = [s for s in op.path.split("/") if s]

    def match(self, segments: list[str]) -> dict | None:
        if len(segments) != len(self.segments):
            return None
        bound = {}
        for want, got in zip(self.segments, segments):
            if want.startswith("{"):
                bound[want[1:-1]] = got
            elif want != got:
                return None
        return bound


ROUTES = [_Route(o) for o in OPS.values()]


def _json_response(status: int, body, close: bool = False, headers: dict | None = None) -> web.Response:
    data = json.dumps(body, separators=(",", ":")).encode() + b"\n"
    response = web.Response(body=data, status=status, content_type="application/json",
                            headers={"Cache-Control": "no-store", **(headers or {})})
    if close:
        response.force_close()
    return response


def _error(status: int, message: str, close: bool = False, **details) -> web.Response:
    headers = {"WWW-Authenticate": "Bearer"} if status == 401 else None
    return _json_response(status, {"error": message, "status": status, **details}, close, headers)


def parse_body(body: bytes) -> dict:
    """A JSON object with plain values: NaN, Infinity, numbers beyond 64 bits and nesting deeper
    than MAX_JSON_DEPTH are a 400, as is anything that is not JSON."""
    def constant(name: str):
        raise BadRequest(f"the body is not JSON: {name} is not a JSON number")

    def integer(text: str) -> int:
        if len(text.lstrip("-")) > 20:
            raise BadRequest(f"the body holds a number of {len(text)} digits; numbers must fit in 64 bits")
        return int(text)

    def real(text: str) -> float:
        value = float(text)
        if value in (float("inf"), float("-inf")):
            raise BadRequest(f"the body holds a number out of range: {text[:40]}")
        return value

    try:
        data = json.loads(body, parse_constant=constant, parse_int=integer, parse_float=real)
    except RecursionError:
        raise BadRequest("the body is not JSON this API reads: it is nested too deeply") from None
    except (ValueError, UnicodeDecodeError) as exc:
        if isinstance(exc, BadRequest):
            raise
        raise BadRequest(f"the body is not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise BadRequest("the body must be a JSON object")
    if _depth(data) > MAX_JSON_DEPTH:
        raise BadRequest(f"the body is nested more than {MAX_JSON_DEPTH} levels deep")
    return data


def _depth(value, level: int = 0) -> int:
    if level > MAX_JSON_DEPTH:
        return level
    if isinstance(value, dict):
        return max((_depth(v, level + 1) for v in value.values()), default=level + 1)
    if isinstance(value, list):
        return max((_depth(v, level + 1) for v in value), default=level + 1)
    return level


class ControlServer:
    """Serves the control API on ``sockets`` (``listener.bind``: bound at start, before this module
    was imported)."""

    def __init__(self, control: Control, config, sockets: list) -> None:
        self.control = control
        self.sockets = sockets
        self.host = config.control_host
        self.token = config.control_token
        self.allow_remote = config.control_allow_remote
        self.idle_timeout_s = config.control_idle_timeout_ms / 1000
        self.guard = Guard("the control API", allow_remote=config.control_allow_remote,
                           names=(config.control_host, config.advertised_host), token=config.control_token)
        self.open_warning = listener.open_warning(config)
        self.port: int = sockets[0].getsockname()[1]
        self._runner: web.ServerRunner | None = None

    @property
    def url(self) -> str:
        return listener.url(self.host, self.port)

    async def start(self) -> None:
        server = web.Server(self._handle, keepalive_timeout=self.idle_timeout_s, lingering_time=0,
                            max_line_size=MAX_HEAD_BYTES, max_field_size=MAX_HEAD_BYTES, access_log=None,
                            logger=_aiohttp_log)
        self._runner = web.ServerRunner(server, shutdown_timeout=0.1)
        await self._runner.setup()
        for sock in self.sockets:
            await web.SockSite(self._runner, sock).start()

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    # -- one request ------------------------------------------------------------------------
    async def _handle(self, request: web.BaseRequest) -> web.StreamResponse:
        peer = (request.transport.get_extra_info("peername") if request.transport else None) or ("?",)
        url = urlsplit(request.raw_path)
        try:
            self.guard.check(request.method, request.headers, str(peer[0]))
        except Refused as refused:
            if refused.status == 403 and not self.allow_remote and not is_loopback(str(peer[0])):
                log.warning("control_peer_refused", peer=peer[0])
                return _error(403, f"{refused.reason} (start with --control-allow-remote to change that)", close=True)
            log.warning("control_request_refused", method=request.method, path=url.path, reason=refused.reason)
            return _error(refused.status, refused.reason)
        if request.method == "GET" and url.path in PAGES:
            content_type, data = PAGES[url.path]
            return web.Response(body=data, headers={"Content-Type": content_type, "Cache-Control": "no-store",
                                                    "X-Content-Type-Options": "nosniff"})
        if request.method == "GET" and url.path in WEB_PAGE_PATHS:
            return self._web_page(url, request.headers)
        if not self.guard.authorized(request.headers):
            return _error(401, "this control API needs Authorization: Bearer <token>")
        try:
            body = await self._body(request)
        except _BodyRefused as exc:
            return _error(exc.status, exc.message, close=True)
        try:
            name, params = self._route(request.method, url, body)
            result = await self.control.call(name, params)
            log.debug("control_call", op=name)
            return _json_response(200, result)
        except ControlError as exc:
            log.info("control_refused", method=request.method, path=url.path, status=exc.status, reason=exc.message)
            return _json_response(exc.status, exc.body())
        except Exception as exc:  # a bug; the broker goes on
            log.exception("control_failed", method=request.method, path=url.path)
            return _error(500, f"internal error: {type(exc).__name__}: {exc}")

    async def _body(self, request: web.BaseRequest) -> bytes:
        if request.content_length is not None and request.content_length > MAX_BODY_BYTES:
            raise _BodyRefused(413, f"body over {MAX_BODY_BYTES} bytes")
        if not request.body_exists:
            return b""
        try:
            if request.content.is_eof():   # all there already (the usual small body)
                return await request.read()
            async with asyncio.timeout(self.idle_timeout_s):   # no task of its own, unlike wait_for
                return await request.read()
        except web.HTTPRequestEntityTooLarge:
            raise _BodyRefused(413, f"body over {MAX_BODY_BYTES} bytes") from None
        except asyncio.TimeoutError:
            raise _BodyRefused(408, f"the body did not arrive within {self.idle_timeout_s:g} s") from None

    def _web_page(self, url, headers) -> web.Response:
        query_token = dict(parse_qsl(url.query)).get("token")
        if not self.guard.authorized(headers, query_token):
            return web.Response(status=401, body=b"<!doctype html><title>kafkaemu</title><p>This control port needs "
                                                 b"its token: open <code>/?token=TOKEN</code>.",
                                headers={"Content-Type": "text/html; charset=utf-8", **page.HEADERS})
        try:
            html = page.render_page(self.control, url.query, notice=self.open_warning)
        except Exception as exc:  # a bug; the broker goes on
            log.exception("web_page_failed")
            return _error(500, f"internal error: {type(exc).__name__}: {exc}")
        return web.Response(body=html, headers={"Content-Type": "text/html; charset=utf-8", "Cache-Control": "no-store",
                                                **page.HEADERS})

    def _route(self, method: str, url, body: bytes) -> tuple[str, dict]:
        segments = [unquote(s) for s in url.path.split("/") if s]
        allowed = []
        for route in ROUTES:
            bound = route.match(segments)
            if bound is None:
                continue
            if route.op.method != method:
                allowed.append(route.op.method)
                continue
            params = dict(parse_qsl(url.query, keep_blank_values=True))
            if body.strip():
                data = parse_body(body)
                twice = set(data) & set(params)
                if twice:
                    raise BadRequest(f"{', '.join(sorted(twice))} given in both the query and the body")
                params.update(data)
            twice = set(bound) & set(params)
            if twice:
                raise BadRequest(f"{', '.join(sorted(twice))} is part of the path; do not give it again")
            params.update(bound)
            return route.op.name, params
        if allowed:
            raise ControlError(405, f"{url.path} takes {', '.join(sorted(set(allowed)))}, not {method}",
                               allowed=sorted(set(allowed)))
        raise ControlError(404, f"no route {method} {url.path} (GET /api lists them)")
