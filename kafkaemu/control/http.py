"""The HTTP control API: a small HTTP/1.1 JSON server (standard library only) on the broker's own
loop, on its own port, never on a Kafka listener.

Routes come from kafkaemu.control.operations.OPS (``GET /api`` lists them). Parameters are taken
from the path, the query string and a JSON object body alike. Keep-alive is supported; requests on
one connection are answered in turn, so an await holds only its own connection. Answers are JSON:
the operation's result, or ``{"error": message, "status": code, ...}`` with a 4xx for a refused
call (404 unknown route/group/topic, 405 wrong method, 408 an await that timed out, 409 a conflict
such as advancing the system clock, 413 a body over 1 MiB). Peers other than loopback get 403
unless ``control_allow_remote``; with ``control_token`` every call needs
``Authorization: Bearer TOKEN`` (401 otherwise).

``GET /`` is a web page of the broker's state (kafkaemu.control.web), its files under ``/ui/``; with
a token, the page is opened as ``/?token=TOKEN``.
"""
from __future__ import annotations

import asyncio
import hmac
import ipaddress
import json
from http import HTTPStatus
from urllib.parse import parse_qsl, unquote, urlsplit

import structlog

from . import web
from .operations import OPS, Control
from .params import BadRequest, ControlError

log = structlog.get_logger("kafkaemu.control.http")

MAX_HEAD_BYTES = 16 * 1024
MAX_BODY_BYTES = 1 << 20
# GET pages served as they are, without a token (path -> (content type, bytes)): the web page's files.
PAGES: dict[str, tuple[str, bytes]] = web.asset_pages()
WEB_PAGE_PATHS = ("/", "/index.html")


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


def _is_local_name(name: str) -> bool:
    return name.lower() in ("localhost", "localhost.localdomain") or is_loopback(name)


def is_loopback(host: str) -> bool:
    try:
        addr = ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        return False
    mapped = getattr(addr, "ipv4_mapped", None)
    return (mapped or addr).is_loopback


class ControlServer:
    def __init__(self, control: Control, config) -> None:
        self.control = control
        self.host = config.control_host
        self.requested_port = config.control_port
        self.token = config.control_token
        self.allow_remote = config.control_allow_remote
        self.port: int | None = None
        self._server: asyncio.AbstractServer | None = None
        self._connections: set[asyncio.Task] = set()

    @property
    def url(self) -> str:
        host = self.host if self.host not in ("0.0.0.0", "::", "") else "127.0.0.1"
        host = f"[{host}]" if ":" in host else host
        return f"http://{host}:{self.port}"

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._serve, self.host, self.requested_port,
                                                  limit=MAX_HEAD_BYTES, reuse_address=True)
        self.port = self._server.sockets[0].getsockname()[1]
        log.info("control_listening", url=self.url, token=self.token is not None, allow_remote=self.allow_remote)

    async def stop(self) -> None:
        if self._server is None:
            return
        self._server.close()
        for task in list(self._connections):
            task.cancel()
        await self._server.wait_closed()
        self._server = None

    # -- one connection ---------------------------------------------------------------------
    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        self._connections.add(task)
        peer = (writer.get_extra_info("peername") or ("?",))[0]
        try:
            if not self.allow_remote and not is_loopback(str(peer)):
                log.warning("control_peer_refused", peer=peer)
                await self._write(writer, 403, {"error": f"the control API serves loopback peers only, not {peer} "
                                                         f"(start with --control-allow-remote to change that)",
                                                "status": 403}, keep_alive=False)
                return
            while True:
                keep_alive = await self._one_request(reader, writer)
                if not keep_alive:
                    return
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.CancelledError):
            pass
        finally:
            self._connections.discard(task)
            writer.close()

    async def _one_request(self, reader, writer) -> bool:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except asyncio.IncompleteReadError:
            return False
        except asyncio.LimitOverrunError:
            await self._write(writer, 431, {"error": "request head over 16 KiB", "status": 431}, keep_alive=False)
            return False
        try:
            request_line, *header_lines = head.decode("latin-1").split("\r\n")
            method, target, version = request_line.split(" ")
            headers = {}
            for line in header_lines:
                if line:
                    name, _, value = line.partition(":")
                    headers[name.strip().lower()] = value.strip()
        except ValueError:
            await self._write(writer, 400, {"error": "malformed HTTP request", "status": 400}, keep_alive=False)
            return False
        keep_alive = version == "HTTP/1.1" and headers.get("connection", "").lower() != "close" \
            or headers.get("connection", "").lower() == "keep-alive"
        if "transfer-encoding" in headers:
            await self._write(writer, 411, {"error": "send the body with a Content-Length", "status": 411},
                              keep_alive=False)
            return False
        try:
            length = int(headers.get("content-length", "0"))
        except ValueError:
            length = -1
        if length < 0:
            await self._write(writer, 400, {"error": "bad Content-Length", "status": 400}, keep_alive=False)
            return False
        if length > MAX_BODY_BYTES:
            await self._write(writer, 413, {"error": f"body over {MAX_BODY_BYTES} bytes", "status": 413},
                              keep_alive=False)
            return False
        body = await reader.readexactly(length) if length else b""
        status, result, content_type, *extra = await self._respond(method.upper(), target, headers, body)
        await self._write(writer, status, result, keep_alive, content_type, *extra)
        return keep_alive

    def _foreign(self, headers: dict) -> str | None:
        """Why a request that reached the loopback port may still come from elsewhere: a Host that
        is not this machine (a DNS-rebinding page) or an Origin that is not the control port's own
        (a page in a local browser posting to it). None when it is the emulator's own."""
        if self.allow_remote:
            return None
        host = headers.get("host")
        if host is not None and not _is_local_name(urlsplit("//" + host).hostname or ""):
            return f"Host {host!r} is not this machine; the control API answers local names only"
        origin = headers.get("origin")
        if origin is not None and urlsplit(origin).netloc != host:
            return f"cross-origin request from {origin!r} refused"
        return None

    def _authorized(self, headers: dict, query_token: str | None = None) -> bool:
        if self.token is None:
            return True
        scheme, _, credential = headers.get("authorization", "").partition(" ")
        if scheme.lower() == "bearer" and hmac.compare_digest(credential.strip().encode(), self.token.encode()):
            return True
        return query_token is not None and hmac.compare_digest(query_token.encode(), self.token.encode())

    async def _respond(self, method: str, target: str, headers: dict, body: bytes):
        url = urlsplit(target)
        if method == "GET" and url.path in PAGES:
            content_type, data = PAGES[url.path]
            return 200, data, content_type, {"X-Content-Type-Options": "nosniff"}
        if method == "GET" and url.path in WEB_PAGE_PATHS:
            return self._web_page(url, headers)
        refused = self._foreign(headers)
        if refused is not None:
            log.warning("control_request_refused", method=method, path=url.path, reason=refused)
            return 403, {"error": refused, "status": 403}, None
        if not self._authorized(headers):
            return 401, {"error": "this control API needs Authorization: Bearer <token>", "status": 401}, None
        try:
            name, params = self._route(method, url, body)
            result = await self.control.call(name, params)
            log.debug("control_call", op=name)
            return 200, result, None
        except ControlError as exc:
            log.info("control_refused", method=method, path=url.path, status=exc.status, reason=exc.message)
            return exc.status, exc.body(), None
        except Exception as exc:  # a bug; the broker goes on
            log.exception("control_failed", method=method, path=url.path)
            return 500, {"error": f"internal error: {exc}", "status": 500}, None

    def _web_page(self, url, headers: dict):
        query_token = dict(parse_qsl(url.query)).get("token")
        if not self._authorized(headers, query_token):
            return (401, b"<!doctype html><title>kafkaemu</title><p>This control port needs its token: open "
                         b"<code>/?token=TOKEN</code>.", "text/html; charset=utf-8", web.HEADERS)
        try:
            page = web.render_page(self.control, url.query)
        except Exception as exc:  # a bug; the broker goes on
            log.exception("web_page_failed")
            return 500, {"error": f"internal error: {exc}", "status": 500}, None
        return 200, page, "text/html; charset=utf-8", web.HEADERS

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
                try:
                    data = json.loads(body)
                except (ValueError, UnicodeDecodeError) as exc:
                    raise BadRequest(f"the body is not JSON: {exc}") from None
                if not isinstance(data, dict):
                    raise BadRequest("the body must be a JSON object")
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

    @staticmethod
    async def _write(writer, status: int, result, keep_alive: bool, content_type: str | None = None,
                     extra_headers: dict | None = None) -> None:
        if content_type is None:
            data = json.dumps(result, separators=(",", ":")).encode() + b"\n"
            content_type = "application/json"
        else:
            data = result
        phrase = HTTPStatus(status).phrase if status in HTTPStatus._value2member_map_ else ""
        head = (f"HTTP/1.1 {status} {phrase}\r\nContent-Type: {content_type}\r\nContent-Length: {len(data)}\r\n"
                f"Cache-Control: no-store\r\nConnection: {'keep-alive' if keep_alive else 'close'}\r\n")
        if status == 401:
            head += "WWW-Authenticate: Bearer\r\n"
        for name, value in (extra_headers or {}).items():
            head += f"{name}: {value}\r\n"
        writer.write(head.encode() + b"\r\n" + data)
        await writer.drain()
