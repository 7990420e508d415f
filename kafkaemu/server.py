"""The only module that does IO: a uvloop TCP listener feeding sans-IO connections, and a
ticker that calls the broker with the injected clock's "now" when its next timer is due."""
from __future__ import annotations

import asyncio
import itertools
import threading
from typing import TYPE_CHECKING

from .logging import get_logger, hold
from .broker import Broker
from .clock import ManualClock, SystemClock
from .config import BrokerConfig
from .control.journal import GroupJournal
from .extras import require as require_extra
from .handlers import REGISTRY
from .auth.principal import PrincipalMapper, tls_principal
from .tls import server_ssl_context
from .wire.connection import AuthenticationFailure, Connection, ProtocolViolation

if TYPE_CHECKING:
    from .auth.authenticator import SaslAuthenticator

log = get_logger("kafkaemu.server")

# Connections the kernel holds for accept(): asyncio's default of 100 overflows when hundreds of
# clients connect at once (a test suite's workers starting together), and each dropped SYN costs
# its client a 1 s retransmit. The kernel caps it at net.core.somaxconn (4096 on Linux >= 5.4).
LISTEN_BACKLOG = 1024

# The `listening` event waits this long: at the default level it is the first event, and importing
# structlog for it (about 12 ms) would come between the start and the first client's first request
# (the stdout line tools read is printed at once). Any event logged earlier logs it first.
LISTENING_EVENT_DELAY_S = 0.05


def listen_hosts(host: str):
    """``create_server``'s host for ``host``: an ASCII name or address as bytes, in a list (a bare
    bytes host would be taken for a sequence of hosts). uvloop encodes a str host with the idna
    codec, whose first use imports ``encodings.idna``, ``stringprep`` and ``unicodedata`` (about
    2 ms of a start); for an ASCII host that codec gives these same bytes. "" (every interface)
    and a non-ASCII name stay as they are."""
    if host and host.isascii():
        return [host.encode("ascii")]
    return host


class KafkaServer:
    def __init__(self, config: BrokerConfig, clock=None, registry=REGISTRY) -> None:
        if config.schema_registry_port >= 0:
            require_extra("schema-registry")
        self.config = config
        self.clock = clock or (ManualClock() if config.manual_clock else SystemClock())
        self.registry = registry
        self.broker = Broker(config, self.clock.now_ms())
        self.ssl_context = server_ssl_context(config.tls_cert, config.tls_key, config.tls_key_password,
                                              config.tls_client_auth, config.tls_ca)
        self.principal_mapper = PrincipalMapper(config.ssl_principal_mapping_rules)
        # token expiry (OAUTHBEARER, delegation tokens) follows the (maybe manual) clock
        self.broker.use_security_clock(self.clock.now_ms)
        self._sasl = bool(config.enabled_sasl_mechanisms)
        self.port: int | None = None
        self._servers: dict[int, asyncio.AbstractServer] = {}   # node id -> its listener
        self._loop: asyncio.AbstractEventLoop | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._timer_deadline: int | None = None
        self._ids = itertools.count(1)
        self.protocols: set[_KafkaProtocol] = set()
        self.journal = GroupJournal(self.broker)   # group transitions, recorded from the start
        self._control = None
        self._control_lock = threading.Lock()
        self.control_url: str | None = None   # the HTTP control API's, when config.control_port >= 0
        self.control_server = None   # its server, once loaded (by its first client: _load_control)
        self._control_sockets: list = []
        self._control_loading: asyncio.Task | None = None
        self.schema_registry = None  # the schema registry's server, when config.schema_registry_port >= 0

    @property
    def control(self):
        """The test controls (kafkaemu.control), imported and built on first use."""
        if self._control is None:
            with self._control_lock:   # an in-process emulator's test thread or the broker's loop
                if self._control is None:
                    from .control.operations import Control
                    self._control = Control(self.broker, self.clock, self, journal=self.journal)
        return self._control

    async def start(self) -> None:
        self._loop = asyncio.get_running_loop()
        listeners = self.broker.placement.listeners
        for node_id in list(listeners):
            await self.start_listener(node_id)
        self.port = listeners[self.broker.node_id][1]
        from .protocol.codec_cache import refusal   # imported by the first codec anyway
        refused = refusal()
        if refused is not None:
            log.warning("codec_cache_not_used", reason=refused)
        if self.config.control_port >= 0:   # bound now, its server loaded by its first client (control/listener.py)
            from .control import listener
            self._control_sockets = listener.bind(self.config.control_host, self.config.control_port)
            self.control_url = listener.url(self.config.control_host, self._control_sockets[0].getsockname()[1])
            listener.log_listening(self.control_url, self.config)
            for sock in self._control_sockets:
                self._loop.add_reader(sock.fileno(), self._load_control)
        if self.config.schema_registry_port >= 0:
            from .schema_registry.service import SchemaRegistryServer
            self.schema_registry = SchemaRegistryServer(self.broker, self.clock, self.config)
            await self.schema_registry.start()
        if self.clock.manual:
            self.broker.use_real_time_for_fetch_waits(self._loop.call_later)
        self.schedule_tick()

    def _load_control(self) -> None:
        """A first client is connecting to the control API: load its server, which accepts it."""
        if self._control_loading is None:
            self._stop_watching_control()
            self._control_loading = self._loop.create_task(self._start_control())

    def _stop_watching_control(self) -> None:
        for sock in self._control_sockets:
            if sock.fileno() >= 0:
                self._loop.remove_reader(sock.fileno())

    async def _start_control(self) -> None:
        """The control API's server (aiohttp, the operations table) on the sockets bound at start."""
        try:
            # the imports (aiohttp, the operations table) run on a thread: the Kafka listeners keep answering
            ControlServer, control = await asyncio.to_thread(self._control_imports)
            self.control_server = ControlServer(control, self.config, self._control_sockets)
            await self.control_server.start()
        except Exception:   # its clients are refused rather than left waiting
            log.exception("control_api_failed")
            await self._stop_control()

    def _control_imports(self):
        from .control.http import ControlServer
        return ControlServer, self.control

    async def _stop_control(self) -> None:
        if self._control_loading is None:
            self._stop_watching_control()
        if self.control_server is not None:
            await self.control_server.stop()   # closes the sockets its sites serve
            self.control_server = None
        for sock in self._control_sockets:   # and those no site took (no start, or a failed one)
            sock.close()

    async def start_listener(self, node_id: int) -> None:
        """Listen for ``node_id`` (on its port of before, when it had one)."""
        advertised, port = self.broker.placement.listeners[node_id]
        server = await self._loop.create_server(
            lambda: _KafkaProtocol(self, node_id), listen_hosts(self.config.host), port, reuse_address=True,
            ssl=self.ssl_context, backlog=LISTEN_BACKLOG)
        self._servers[node_id] = server
        self.broker.placement.listeners[node_id] = (advertised, server.sockets[0].getsockname()[1])
        fields = {"host": self.config.host, "port": self.broker.placement.listeners[node_id][1], "node_id": node_id,
                  "security_protocol": self.config.security_protocol}
        self._loop.call_later(LISTENING_EVENT_DELAY_S, hold(lambda: log.info("listening", **fields)))

    async def stop_listener(self, node_id: int) -> None:
        """Stop listening for ``node_id`` and drop its connections (a node going down)."""
        server = self._servers.pop(node_id, None)
        if server is not None:
            server.close()
        self.close_connections(node_id)
        if server is not None:
            await server.wait_closed()
        log.info("listener_stopped", node_id=node_id)

    def close_connections(self, node_id: int | None = None) -> int:
        """Drop every client connection (of one node); returns how many."""
        dropped = [p for p in self.protocols if node_id is None or p.node_id == node_id]
        for proto in dropped:
            proto.abort()
        return len(dropped)

    @property
    def credentials(self):
        """The SASL users, None without SASL."""
        return self.broker.credentials if self._sasl else None

    def new_authenticator(self) -> SaslAuthenticator | None:
        if not self._sasl:
            return None
        from .auth.authenticator import SaslAuthenticator   # SASL's modules, with its first connection
        return SaslAuthenticator(self.broker.credentials, self.registry.supports)

    async def stop(self) -> None:
        if self._timer:
            self._timer.cancel()
        if self._control_loading is not None and not self._control_loading.done():
            self._control_loading.cancel()
            try:
                await self._control_loading
            except asyncio.CancelledError:
                pass
        await self._stop_control()
        if self.schema_registry is not None:
            await self.schema_registry.stop()
        for server in self._servers.values():
            server.close()
        for proto in list(self.protocols):
            proto.abort()
        for server in self._servers.values():
            await server.wait_closed()
        self.broker.close()
        log.info("stopped")

    # -- time ----------------------------------------------------------------------------
    def tick(self) -> None:
        self._timer = self._timer_deadline = None
        try:
            self.broker.tick(self.clock.now_ms())
        finally:
            self.schedule_tick()

    def schedule_tick(self) -> None:
        """(Re)arm the timer for the broker's next deadline. With a manual clock, time only
        moves when a test advances it, and the test's advance calls ``tick`` itself."""
        if self.clock.manual or self._loop is None:
            return
        deadline = self.broker.next_deadline_ms()
        if deadline is None or deadline == self._timer_deadline:
            return
        if self._timer:
            self._timer.cancel()
        delay = max(0.0, (deadline - self.clock.now_ms()) / 1000.0)
        self._timer_deadline = deadline
        self._timer = self._loop.call_later(delay, self.tick)


class _KafkaProtocol(asyncio.Protocol):
    """One socket: feeds the sans-IO Connection and applies its flow control. Reading pauses
    while the connection does not want input; the transport's own pause_writing/resume_writing
    (its write buffer is full / drained) block and unblock the connection."""

    def __init__(self, server: KafkaServer, node_id: int) -> None:
        self.server = server
        self.node_id = node_id
        self.transport: asyncio.Transport | None = None
        self.conn: Connection | None = None
        self._reading = True
        self._pump_handle: asyncio.Handle | None = None
        self._running = False      # inside _run: replies are written once, when it ends
        self._output_ready = False
        self._write_handle: asyncio.Handle | None = None

    def connection_made(self, transport) -> None:
        self.transport = transport
        self._loop = asyncio.get_running_loop()
        peer = transport.get_extra_info("peername") or ("?", 0)
        self.conn = Connection(self.server.broker, self.server.registry, next(self.server._ids), peer[0],
                               on_output=self._write, on_close=self.abort, node_id=self.node_id,
                               authenticator=self.server.new_authenticator(), now_ms=self.server.clock.now_ms(),
                               on_wake=self._wake)
        ssl_object = transport.get_extra_info("ssl_object")
        if ssl_object is not None:
            try:  # a client certificate's subject (SASL, if any, replaces it once authenticated)
                self.conn.principal = tls_principal(ssl_object, self.server.principal_mapper)
            except ValueError as exc:   # no mapping rule applies: Kafka fails the connection
                self.conn.log.info("tls_principal_unmapped", reason=str(exc))
                transport.abort()
                return
        self.server.protocols.add(self)
        self.conn.log.debug("connection_opened", port=peer[1], node_id=self.node_id, principal=self.conn.principal)
        self.server.schedule_tick()  # the connection's idle check

    def data_received(self, data: bytes) -> None:
        self._run(self.conn.receive, data)

    def _pump(self) -> None:
        """Handle requests that waited for the connection to unblock."""
        self._pump_handle = None
        if not self.conn.closed:
            self._run(self.conn.process)

    def _run(self, step, *args) -> None:
        conn = self.conn
        self._running = True
        try:
            step(*args, self.server.clock.now_ms())
        except AuthenticationFailure as exc:
            self._end_run()
            conn.log.info("authentication_failed", reason=str(exc))
            self._close_later(self.server.config.connection_failed_authentication_delay_ms / 1000)
        except ProtocolViolation as exc:
            self._end_run()
            conn.log.warning("connection_closed", reason=str(exc))
            self.abort()
        except Exception:  # never let one connection take the server down
            self._end_run()
            conn.log.exception("connection_failed")
            self.abort()
        self._end_run()
        self._apply_flow_control()
        self.server.schedule_tick()

    def _end_run(self) -> None:
        """Write what the run's requests answered (replies before a failure go out first)."""
        self._running = False
        if self._output_ready:
            self._write_output()

    def _apply_flow_control(self) -> None:
        transport = self.transport
        if self.conn.closed or transport is None or transport.is_closing():
            return
        wants = self.conn.wants_input
        if wants and not self._reading:
            self._reading = True
            transport.resume_reading()
        elif not wants and self._reading:
            self._reading = False
            transport.pause_reading()

    def _wake(self) -> None:
        """Schedule a pump when queued requests or a paused socket may move again."""
        if self._pump_handle is None and (self.conn.has_queued_input or not self._reading):
            self._pump_handle = asyncio.get_running_loop().call_soon(self._pump)

    def _write(self) -> None:
        """Replies are ready (the connection's on_output). Written once per loop iteration: at the
        end of the read that completed them, else (a parked reply a timer or another connection
        completed) by a callback, so a burst of replies is one write, not one per reply."""
        self._output_ready = True
        if not self._running and self._write_handle is None:
            self._write_handle = self._loop.call_soon(self._write_output)

    def _write_output(self) -> None:
        self._output_ready = False
        if self._write_handle is not None:
            self._write_handle.cancel()
            self._write_handle = None
        transport = self.transport
        if transport is not None and not transport.is_closing():
            chunks = self.conn.take_output_chunks()
            if len(chunks) == 1:
                transport.write(chunks[0])
            elif chunks:
                transport.writelines(chunks)
            self._wake()

    def pause_writing(self) -> None:
        self.conn.pause_output()

    def resume_writing(self) -> None:
        self.conn.resume_output()
        self._wake()

    def _close_later(self, delay_s: float) -> None:
        """Stop reading and handling requests now, let the queued reply go, close after a delay."""
        self.conn.close()
        if not self.transport.is_closing():
            self._reading = False
            self.transport.pause_reading()
        asyncio.get_running_loop().call_later(delay_s, self.abort)

    def abort(self) -> None:
        if self._output_ready and self.conn is not None:
            self._write_output()   # replies completed before the close still go out
        if self._write_handle is not None:
            self._write_handle.cancel()
            self._write_handle = None
        if self.conn:
            self.conn.close()
        if self._pump_handle is not None:
            self._pump_handle.cancel()
            self._pump_handle = None
        if self.transport is not None:
            self.transport.close()

    def connection_lost(self, exc) -> None:
        if self.conn:
            self.conn.close()
            self.conn.log.debug("connection_lost")
        if self._pump_handle is not None:
            self._pump_handle.cancel()
            self._pump_handle = None
        self.server.protocols.discard(self)
