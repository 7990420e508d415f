"""One client connection, sans-IO: frames in, ordered response bytes out.

Requests are dispatched through the registry as they arrive; replies may complete out of
order (parked JoinGroup, long-poll Fetch) but are written in request order, as Kafka clients
require. Every protocol quirk of framing and headers lives here:
- the ApiVersions response header is always v0;
- an ApiVersions request above the supported version is answered in v0 with UNSUPPORTED_VERSION;
- the request header's client id is never compact (see ``headers.spec``);
- acks=0 produce gets no reply (the handler returns NO_RESPONSE).
On a SASL listener a ``SaslAuthenticator`` (kafkaemu.auth) sees every frame until the client
has authenticated; only the ApiVersions it lets through reach the handlers before that.
"""
from __future__ import annotations

import io
import struct
from collections import deque
from typing import TYPE_CHECKING, Callable

import structlog

from ..handlers.registry import DEFERRED, NO_RESPONSE, ApiRegistry, RequestContext
from ..protocol.catalog import catalog
from ..protocol.errors import ErrorCode
from .framing import FrameDecoder, FrameError, frame

if TYPE_CHECKING:
    from ..auth.authenticator import SaslAuthenticator
    from ..broker import Broker

API_VERSIONS = 18
MAX_SASL_RECEIVE_BYTES = 524288  # Kafka's sasl.server.max.receive.size, until authenticated
_KEY_VERSION = struct.Struct(">hhi")
log = structlog.get_logger("kafkaemu.wire")


class ProtocolViolation(Exception):
    """The connection must be closed (undecodable, unsupported or oversized request)."""


class AuthenticationFailure(ProtocolViolation):
    """SASL failed after its error reply was queued. Kafka closes such connections only after
    connection.failed.authentication.delay.ms so that the client reads the reply first."""


class _Slot:
    __slots__ = ("data", "done")

    def __init__(self) -> None:
        self.data: bytes | None = None
        self.done = False


class Connection:
    def __init__(self, broker: "Broker", registry: ApiRegistry, connection_id: int, client_host: str,
                 on_output: Callable[[], None] = lambda: None, node_id: int | None = None,
                 on_close: Callable[[], None] = lambda: None, authenticator: "SaslAuthenticator | None" = None) -> None:
        self.broker = broker
        self.registry = registry
        self.connection_id = connection_id
        self.client_host = client_host
        self.node_id = broker.node_id if node_id is None else node_id
        self.on_output = on_output
        self.on_close = on_close
        self.closed = False
        self._decoder = FrameDecoder(broker.config.socket_request_max_bytes)
        self._slots: deque[_Slot] = deque()
        self._out: list[bytes] = []
        self.log = log.bind(conn=connection_id, peer=client_host)
        self.authenticator = authenticator
        if authenticator is not None:
            authenticator.log = self.log
            self._decoder.max_frame_bytes = min(self._decoder.max_frame_bytes, MAX_SASL_RECEIVE_BYTES)

    # -- input ---------------------------------------------------------------------------
    def receive(self, data: bytes, now_ms: int) -> None:
        """Handle received bytes. Raises ProtocolViolation when the connection must close."""
        try:
            frames = self._decoder.feed(data)
        except FrameError as exc:
            raise ProtocolViolation(str(exc)) from None
        if now_ms > self.broker.now_ms:
            self.broker.now_ms = now_ms
        for body in frames:
            if self.closed:
                return
            self._handle_frame(body, now_ms)

    def _handle_frame(self, data: bytes, now_ms: int) -> None:
        auth = self.authenticator
        if auth is not None and not auth.complete and not self._authenticate(auth, data):
            return
        if len(data) < 8:
            raise ProtocolViolation(f"request of {len(data)} bytes is shorter than a header")
        api_key, api_version, correlation_id = _KEY_VERSION.unpack_from(data)
        api = self.registry.get(api_key)
        if api is None or not api.supports(api_version):
            if api_key == API_VERSIONS and api is not None and api_version > api.max_version:
                self._unsupported_api_versions(correlation_id)
                return
            raise ProtocolViolation(f"unsupported api key {api_key} version {api_version}")
        cat = catalog()
        flexible = cat.is_flexible_request(api_key, api_version)
        stream = io.BytesIO(data)
        try:
            header = cat.data("RequestHeader", 2 if flexible else 1).decode_prefix(stream)
            body = cat.request(api_key, api_version).decode(data[stream.tell():], strict=False)
        except Exception as exc:  # DecodeError and the other errors construct raises
            raise ProtocolViolation(f"cannot decode {api.name} v{api_version}: {exc}") from None

        slot = _Slot()
        self._slots.append(slot)
        respond_header = (api_key != API_VERSIONS) and flexible
        resp_codec = cat.response(api_key, api_version)

        def respond(response: dict) -> None:
            if slot.done or self.closed:
                return
            head = struct.pack(">i", correlation_id) + (b"\x00" if respond_header else b"")
            try:
                body_bytes = resp_codec.encode(response)
            except Exception:  # a handler bug; parked replies arrive from timers, so never raise
                self.log.exception("response_encode_failed", api=api.name, version=api_version)
                self.abort()
                return
            slot.data = frame(head, body_bytes)
            slot.done = True
            self._flush()

        # Fault rules, the request log and version caps (kafkaemu.control.intercept).
        respond = self.broker.interceptor.intercept(self, api_key, api_version, correlation_id, header.client_id,
                                                    body, respond, now_ms)
        if respond is None:  # black-holed by a fault: never handled nor answered
            return

        ctx = RequestContext(
            broker=self.broker, api_key=api_key, api_version=api_version, correlation_id=correlation_id,
            client_id=header.client_id, client_host=self.client_host, connection_id=self.connection_id,
            now_ms=now_ms, node_id=self.node_id, respond=respond,
        )
        try:
            result = api.func(ctx, body)
        except Exception:
            self.log.exception("handler_failed", api=api.name, version=api_version, client_id=header.client_id)
            raise ProtocolViolation(f"handler {api.name} failed") from None
        if result is NO_RESPONSE:
            slot.done = True
            self._flush()
        elif result is not DEFERRED:
            respond(result)

    def _authenticate(self, auth: "SaslAuthenticator", data: bytes) -> bool:
        """Pass a frame to the authenticator; True when the ordinary handlers should answer it."""
        step = auth.receive(data)
        if step.dispatch:
            return True
        if step.reply is not None:
            self._send(step.reply)
        if step.close_reason is not None:
            raise (ProtocolViolation if step.reply is None else AuthenticationFailure)(step.close_reason)
        if auth.complete:
            self._decoder.max_frame_bytes = self.broker.config.socket_request_max_bytes
            self.log = self.log.bind(user=auth.username)
        return False

    def _unsupported_api_versions(self, correlation_id: int) -> None:
        body = catalog().response(API_VERSIONS, 0).encode({
            "error_code": ErrorCode.UNSUPPORTED_VERSION,
            "api_keys": self.registry.api_keys(),
        })
        self._send(frame(struct.pack(">i", correlation_id), body))

    def _send(self, data: bytes) -> None:
        """Queue a reply that is complete already (behind any still parked)."""
        slot = _Slot()
        slot.data, slot.done = data, True
        self._slots.append(slot)
        self._flush()

    # -- output --------------------------------------------------------------------------
    def _flush(self) -> None:
        slots = self._slots
        ready = False
        while slots and slots[0].done:
            data = slots.popleft().data
            if data is not None:
                self._out.append(data)
                ready = True
        if ready:
            self.on_output()

    def take_output(self) -> bytes:
        out = b"".join(self._out)
        self._out.clear()
        return out

    @property
    def pending_replies(self) -> int:
        return len(self._slots)

    def abort(self) -> None:
        """Close from inside (a reply can't be sent): forget pending replies and drop the socket."""
        self.close()
        self.on_close()

    def close(self) -> None:
        self.closed = True
        self._slots.clear()
        self._out.clear()
