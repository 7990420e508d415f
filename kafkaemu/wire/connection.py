"""One client connection, sans-IO: frames in, ordered response bytes out.

Requests are dispatched through the registry as they arrive; replies may complete out of
order (parked JoinGroup, long-poll Fetch) but are written in request order, as Kafka clients
require. The protocol's header and framing rules live in ``kafkaemu.protocol.envelope``; the
broker handles each decoded request (``Broker.handle_request``: its clock, fault rules, request log,
then the handler), so the connection only frames, orders and bounds. An acks=0 produce gets no
reply (the handler returns NO_RESPONSE). Each request is handled with its connection, client id,
api and correlation id bound to structlog's context, so every event logged on its way carries them.
On a SASL listener a ``SaslAuthenticator`` (kafkaemu.auth) sees every frame until the client
has authenticated; only the ApiVersions it lets through reach the handlers before that.

Replies. A request is decoded and its reply encoded by the codecs generated from the specs,
looked up once per (api key, version) (``envelope.route``); the body of a Metadata, Heartbeat or
OffsetFetch request its client sent before, byte for byte, is the one decoded then (their handlers
only read it: ``envelope.REUSED_BODY_APIS``). A reply whose ``records`` fields are
lists of chunks (a Fetch answer carrying stored batches as memoryviews) stays a list of chunks:
``take_output_chunks`` hands them to the transport's ``writelines`` uncopied, small replies joined;
``take_output`` joins everything into one ``bytes``.

Backpressure. Kafka mutes a channel while a response is in flight, so a client that pipelines
requests and never reads its replies cannot make the broker buffer them. Here a connection stops
handling requests while it is ``blocked``: its completed-but-unsent replies exceed
MAX_UNSENT_REPLY_BYTES, MAX_IN_FLIGHT requests await their replies, or the transport asked it to
``pause_output``. Requests already received wait in a queue; ``wants_input`` is false while the
connection is blocked or anything waits there, and the server stops reading the socket, so the
queue never holds more than one read's worth of bytes. ``process`` handles it once the block lifts.
A client over its quota is blocked the same way until its throttle ends (``throttle``; Kafka
mutes the channel), then ``on_wake`` tells the server to read again.

Idle connections. As Kafka's ``connections.max.idle.ms`` (negative: never), a connection that
has received no bytes and handed out no reply for that long is closed, unless a request of it is
still waiting on the broker (a parked long-poll Fetch or JoinGroup). The check is a broker timer,
so it follows the injected clock.
"""
from __future__ import annotations

import itertools
import struct
from collections import deque
from typing import TYPE_CHECKING, Callable

from ..logging import get_logger
from ..broker.context import ANONYMOUS, NO_RESPONSE, ConstantResponse
from ..logging import bind_request_context, unbind_request_context
from ..protocol import envelope
from ..protocol.api_keys import ApiKey
from ..protocol.envelope import MAX_REUSED_BODIES, _routes
from ..protocol.fastcodec import coalesce
from .framing import FrameDecoder, FrameError

if TYPE_CHECKING:
    from ..auth.authenticator import SaslAuthenticator
    from ..broker import Broker
    from ..handlers.registry import ApiRegistry

MAX_SASL_RECEIVE_BYTES = 524288  # Kafka's sasl.server.max.receive.size, until authenticated
MAX_UNSENT_REPLY_BYTES = 1 << 20    # completed replies not yet taken by the transport
MAX_IN_FLIGHT = 100                 # requests handled whose replies are not all sent
_timer_serial = itertools.count(1)
_KEY_VERSION_CORRELATION = struct.Struct(">hhi")
_OFFSET_COMMIT_KEY = struct.pack(">h", ApiKey.OFFSET_COMMIT)   # its requests linger together (process)
_SIZE_CORRELATION = struct.Struct(">ii")
log = get_logger("kafkaemu.wire")


def _log_context(connection_id: int, header, api_name: str, body) -> dict:
    """What every event logged while a request is handled carries: the connection, client, api,
    version and correlation id, and the group, member and transactional id the request names."""
    context = {"conn": connection_id, "client_id": header.client_id, "api": api_name,
               "version": header.request_api_version, "correlation_id": header.correlation_id}
    for field, key in (("group_id", "group"), ("member_id", "member"), ("transactional_id", "transactional_id")):
        value = getattr(body, field, None)
        if isinstance(value, str) and value:
            context[key] = value
    return context


class ProtocolViolation(Exception):
    """The connection must be closed (undecodable, unsupported or oversized request)."""


class AuthenticationFailure(ProtocolViolation):
    """SASL failed after its error reply was queued. Kafka closes such connections only after
    connection.failed.authentication.delay.ms so that the client reads the reply first."""


class _Slot:
    __slots__ = ("data", "done", "size")

    def __init__(self) -> None:
        self.data: bytes | list | None = None   # a list: chunks (records) sent as they are
        self.done = False
        self.size = 0


class Connection:
    def __init__(self, broker: "Broker", registry: ApiRegistry, connection_id: int, client_host: str,
                 on_output: Callable[[], None] = lambda: None, node_id: int | None = None,
                 on_close: Callable[[], None] = lambda: None, authenticator: "SaslAuthenticator | None" = None,
                 now_ms: int | None = None, on_wake: Callable[[], None] = lambda: None) -> None:
        self.broker = broker
        self.registry = registry
        self.connection_id = connection_id
        self.client_host = client_host
        self.node_id = broker.node_id if node_id is None else node_id
        self.on_output = on_output
        self.on_close = on_close
        self.on_wake = on_wake       # a throttle ended: queued requests may be handled again
        self.request_bytes = 0       # the size of the request being handled (Produce quotas)
        self._muted_until = 0        # a client quota's throttle: no requests handled before this
        self._throttle_key = f"connection-throttle-{connection_id}-{next(_timer_serial)}"
        self.closed = False
        self.principal = ANONYMOUS   # "User:<name>" once SASL authenticates the client
        self._decoder = FrameDecoder(broker.config.socket_request_max_bytes)
        self._slots: deque[_Slot] = deque()
        self._out: list = []       # replies (and record chunks) not yet taken by the transport
        self._out_bytes = 0
        self._out_chunked = False
        self._unsent = 0          # bytes of completed replies not yet taken (in _out or behind a parked one)
        self._queued: deque[bytes] = deque()
        self._queued_bytes = 0
        self._output_paused = False
        self._processing = False
        self._output_due = False   # replies completed while processing: on_output once it ends
        self.last_active_ms = broker.now_ms if now_ms is None else now_ms
        self._idle_ms = broker.config.connections_max_idle_ms
        self._idle_key = f"connection-idle-{connection_id}-{next(_timer_serial)}"
        self.log = log.bind(conn=connection_id, peer=client_host)
        self.authenticator = authenticator
        if authenticator is not None:
            authenticator.log = self.log
            self._decoder.max_frame_bytes = min(self._decoder.max_frame_bytes, MAX_SASL_RECEIVE_BYTES)
        self._arm_idle_timer()

    # -- input ---------------------------------------------------------------------------
    def receive(self, data: bytes, now_ms: int) -> None:
        """Take received bytes and handle the requests they complete, as far as backpressure
        allows. Raises ProtocolViolation when the connection must close."""
        if self.closed:
            return
        try:
            frames = self._decoder.feed(data)
        except FrameError as exc:
            raise ProtocolViolation(str(exc)) from None
        self.last_active_ms = max(self.last_active_ms, now_ms)
        for body in frames:
            self._queued.append(body)
            self._queued_bytes += len(body)
        self.process(now_ms)

    def process(self, now_ms: int) -> None:
        """Handle queued requests until none is left or the connection is blocked. Raises
        ProtocolViolation when the connection must close."""
        if self._processing:  # a reply completed while a request of ours is being handled
            return
        self._processing = True
        # The offset commits of this read linger: appended together once a request other than a
        # commit comes or the read's requests are done, each answered after that append. A read of
        # one request has nothing to append with it.
        runtime = self.broker.group_runtime
        lingers = runtime is not None and len(self._queued) > 1
        if lingers:
            runtime.linger()
        try:
            queued = self._queued
            while True:
                while queued and not self.closed and not self.blocked:
                    body = queued.popleft()
                    self._queued_bytes -= len(body)
                    if runtime is not None and runtime.batch is not None and body[:2] != _OFFSET_COMMIT_KEY:
                        runtime.flush()   # the commits before this request are written first
                    self._handle_frame(body, now_ms)
                if runtime is None or runtime.batch is None or not queued:
                    break
                runtime.flush()   # blocked behind lingering commits' replies: answer them, then go on
        finally:
            self._processing = False
            if lingers:
                runtime.end_linger()
            self._end_processing()

    def _end_processing(self) -> None:
        """What each reply's flush leaves to the end of the frames a read brought: the idle check
        armed once nothing waits, and one ``on_output`` for every reply completed meanwhile."""
        if not self._slots:
            self._arm_idle_timer()
        if self._output_due:
            self._output_due = False
            self.on_output()

    @property
    def blocked(self) -> bool:
        """True while no further request may be handled (see the module docstring)."""
        return (self._output_paused or self._unsent >= MAX_UNSENT_REPLY_BYTES or len(self._slots) >= MAX_IN_FLIGHT
                or self._muted_until > 0)

    def throttle(self, until_ms: int) -> None:
        """Mute the connection until ``until_ms`` on the broker's clock, as Kafka mutes the channel
        of a client over its quota: requests it sends meanwhile wait unread."""
        if until_ms <= self._muted_until or self.closed:
            return
        self._muted_until = until_ms
        self.broker.timers.schedule(self._throttle_key, until_ms, self._unmute)

    def _unmute(self) -> None:
        self._muted_until = 0
        if not self.closed:
            self.on_wake()

    @property
    def throttled(self) -> bool:
        return self._muted_until > 0

    @property
    def wants_input(self) -> bool:
        """Whether the server should read from the socket."""
        return not self.closed and not self.blocked and not self._queued

    @property
    def has_queued_input(self) -> bool:
        return bool(self._queued)

    @property
    def buffered_bytes(self) -> int:
        """Everything this connection holds in memory for its peer: the partial frame, requests
        not yet handled and replies not yet taken."""
        return self._decoder.buffered + self._queued_bytes + self._unsent

    def pause_output(self) -> None:
        """The transport's write buffer is full (asyncio's pause_writing): handle nothing more."""
        self._output_paused = True

    def resume_output(self) -> None:
        self._output_paused = False

    def _handle_frame(self, data: bytes, now_ms: int) -> None:
        auth = self.authenticator
        if auth is not None and not auth.complete and not self._authenticate(auth, data):
            return
        if len(data) < 8:
            raise ProtocolViolation(f"request of {len(data)} bytes is shorter than a header")
        api_key, api_version, correlation_id = _KEY_VERSION_CORRELATION.unpack_from(data)
        api = self.registry.get(api_key)
        if api is None or not api.supports(api_version):
            if api_key == ApiKey.API_VERSIONS and api is not None and api_version > api.max_version:
                # Kafka's ApiVersionsRequest.getErrorResponse: only ApiVersions' own range (KIP-511)
                self._send(envelope.unsupported_api_versions(correlation_id, [
                    {"api_key": api_key, "min_version": api.min_version, "max_version": api.max_version}]))
                return
            raise ProtocolViolation(f"unsupported api key {api_key} version {api_version}")
        route = _routes.get((api_key, api_version))
        try:
            if route is None:
                route = envelope.route(api_key, api_version)
            header, pos = route.decode_header(data, 0)
            reused = route.reused_bodies
            if reused is None:
                body = route.decode_body(data, pos)[0]
            else:   # a body its client sent before, decoded then (envelope.REUSED_BODY_APIS)
                raw = data[pos:]
                body = reused.get(raw)
                if body is None:
                    body = route.decode_body(data, pos)[0]
                    if len(reused) >= MAX_REUSED_BODIES:
                        reused.clear()
                    reused[raw] = body
        except Exception:  # the reference codecs name what does not parse
            try:
                header, body = envelope.decode_request(data, api_key, api_version)
            except envelope.RequestDecodeError as exc:
                raise ProtocolViolation(str(exc)) from None
            if route is None:
                raise ProtocolViolation(f"unsupported api key {api_key} version {api_version}") from None

        slot = _Slot()
        self._slots.append(slot)
        encode, chunked, tag = route.encode_body, route.chunked, route.head_tag

        def respond(response: dict) -> None:
            if slot.done or self.closed:
                return
            parts: list = []
            try:
                if response.__class__ is ConstantResponse:
                    encoded = response.encoded.get(api_version)
                    if encoded is None:
                        encode(response, parts)
                        encoded = response.encoded[api_version] = b"".join(parts)
                    parts = [encoded]
                else:
                    encode(response, parts)
            except Exception:  # a handler bug; parked replies arrive from timers, so never raise
                self.log.exception("response_encode_failed", api=api.name, version=api_version)
                self.abort()
                return
            if chunked:  # records as chunks: sent as they are, never joined
                parts = coalesce(parts)
                size = sum(map(len, parts))
                parts.insert(0, _SIZE_CORRELATION.pack(size + 4 + len(tag), correlation_id) + tag)
                slot.data, slot.size = parts, size + 8 + len(tag)
            else:
                body_bytes = b"".join(parts)
                slot.data = _SIZE_CORRELATION.pack(len(body_bytes) + 4 + len(tag), correlation_id) + tag + body_bytes
                slot.size = len(slot.data)
            slot.done = True
            self._unsent += slot.size
            self._flush()

        self.request_bytes = len(data)
        token = bind_request_context(lambda: _log_context(self.connection_id, header, route.name, body))
        try:
            result = self.broker.handle_request(self, api, header, body, respond, now_ms)
        except envelope.RequestDecodeError as exc:  # a request Kafka cannot parse (an unknown enum code)
            raise ProtocolViolation(str(exc)) from None
        except Exception:
            self.log.exception("handler_failed", api=api.name, version=api_version, client_id=header.client_id)
            raise ProtocolViolation(f"handler {api.name} failed") from None
        finally:
            unbind_request_context(token)
        if result is NO_RESPONSE:
            slot.done = True
            self._flush()

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
            self.principal = auth.principal
        return False

    def _send(self, data: bytes) -> None:
        """Queue a reply that is complete already (behind any still parked)."""
        slot = _Slot()
        slot.data, slot.done, slot.size = data, True, len(data)
        self._slots.append(slot)
        self._unsent += len(data)
        self._flush()

    # -- output --------------------------------------------------------------------------
    def _flush(self) -> None:
        slots = self._slots
        ready = False
        while slots and slots[0].done:
            slot = slots.popleft()
            data = slot.data
            if data is not None:
                if data.__class__ is list:
                    self._out.extend(data)
                    self._out_chunked = True
                else:
                    self._out.append(data)
                self._out_bytes += slot.size
                ready = True
        if self._processing:   # the rest once for all of them (_end_processing)
            self._output_due = self._output_due or ready
            return
        if not slots:
            self._arm_idle_timer()
        if ready:
            self.on_output()

    def take_output(self) -> bytes:
        """Every completed reply not taken yet, in request order, as one ``bytes``."""
        return b"".join(self.take_output_chunks())

    def take_output_chunks(self) -> list:
        """The same as a list of bytes-like chunks for ``transport.writelines``: small replies
        joined into one, a fetch's record chunks kept as they are (never copied)."""
        out = self._out
        if not out:
            return []
        chunks = coalesce(out) if self._out_chunked else [b"".join(out)]
        out.clear()
        self._out_chunked = False
        self._unsent -= self._out_bytes
        self._out_bytes = 0
        self.last_active_ms = max(self.last_active_ms, self.broker.now_ms)
        return chunks

    @property
    def pending_replies(self) -> int:
        return len(self._slots)

    def abort(self) -> None:
        """Close from inside (a reply can't be sent): forget pending replies and drop the socket."""
        if self._output_due:   # replies completed earlier in this read are announced first
            self._output_due = False
            self.on_output()
        self.on_close()   # first: the transport writes the replies already completed
        self.close()

    def close(self) -> None:
        """Drop the connection (idempotent); the broker hears of it once (share sessions keyed to it)."""
        if not self.closed:
            self.closed = True
            self.broker.connection_closed(self.connection_id)
        self._slots.clear()
        self._out.clear()
        self._out_bytes = 0
        self._queued.clear()
        self._queued_bytes = self._unsent = 0
        self.broker.timers.cancel(self._idle_key)
        self.broker.timers.cancel(self._throttle_key)

    # -- idle expiry (connections.max.idle.ms) -------------------------------------------
    def _arm_idle_timer(self) -> None:
        """Nothing is waiting on the broker: make sure the idle check is scheduled. It is armed
        once per quiet spell, not per request, and re-armed from ``last_active_ms`` when due."""
        timers = self.broker.timers
        if self._idle_ms >= 0 and not self.closed and not timers.is_scheduled(self._idle_key):
            timers.schedule(self._idle_key, self.last_active_ms + self._idle_ms, self._idle_check)

    def _idle_check(self) -> None:
        if self.closed or self._slots:  # a parked request: re-armed when the replies drain
            return
        deadline = self.last_active_ms + self._idle_ms
        if self.broker.now_ms < deadline:
            self.broker.timers.schedule(self._idle_key, deadline, self._idle_check)
            return
        self.log.info("connection_idle_closed", idle_ms=self.broker.now_ms - self.last_active_ms,
                      connections_max_idle_ms=self._idle_ms)
        self.abort()
