"""Start kafkaemu from Python: in-process (own thread and uvloop loop) or as a subprocess.

Method names follow testcontainers' ``KafkaContainer`` (``start()``, ``stop()``,
``get_bootstrap_server()``, context manager) so code written for that container can switch.
"""
from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import threading
from dataclasses import fields, replace
from typing import TYPE_CHECKING, Any, Callable

from ..config import SETTINGS, BrokerConfig
from ..logging import configure_default_logging

if TYPE_CHECKING:
    from .parent_watch import ParentWatch
    from .transitions import Transition

_install_lock = threading.Lock()
_installed = False


def _install_control_methods() -> bool:
    """Add the methods made from the control table to KafkaEmulator (``control/python_api.py``);
    True when this call added them. Done on the first lookup of a name the class lacks, so that
    ``import kafkaemu.testing`` does not import the control plane's operations."""
    global _installed
    with _install_lock:
        if _installed:
            return False
        from ..control.python_api import install
        install(KafkaEmulator)
        _installed = True
        return True


class _ControlMethods(type):
    """KafkaEmulator's metaclass: a class-level lookup (``KafkaEmulator.advance_clock``, ``dir``)
    sees the control methods too."""

    def __getattr__(cls, name: str):
        if name.startswith("__") or not _install_control_methods():
            raise AttributeError(f"type object {cls.__name__!r} has no attribute {name!r}")
        return getattr(cls, name)

    def __dir__(cls):
        _install_control_methods()
        return super().__dir__()


def _check_setting_names(settings: dict) -> None:
    """ValueError naming a keyword that is not a setting's name, a BrokerConfig field or ``extra``
    (with the closest one), rather than BrokerConfig's TypeError."""
    known = {*SETTINGS, *(f.name for f in fields(BrokerConfig)), "extra"}
    for name in settings:
        if name not in known:
            import difflib
            close = difflib.get_close_matches(name, known, n=1)
            hint = f" (did you mean {close[0]}?)" if close else " (kafkaemu serve --help lists the settings)"
            raise ValueError(f"KafkaEmulator: unknown setting {name!r}{hint}")


class KafkaEmulator(metaclass=_ControlMethods):
    """Keyword settings are BrokerConfig fields (``extra={kafka name: value}`` for Kafka's names);
    without ``config``, ``port`` defaults to 0 (a free port) rather than 9092.

    The test controls (docs/control.md) work alike in-process and in subprocess mode: in-process
    they run on the emulator's loop, in subprocess mode over its HTTP control API (started on a
    free loopback port unless ``control_port`` says otherwise). A refused call raises
    kafkaemu.control.ControlError; an await that times out, AwaitTimeout (a TimeoutError)."""

    def __init__(self, port: int | None = None, host: str | None = None, *, subprocess_mode: bool = False,
                 manual_clock: bool = False, schema_registry: bool = False, config: BrokerConfig | None = None,
                 **settings: Any) -> None:
        _check_setting_names(settings)
        base = config or BrokerConfig(port=0)
        if manual_clock:
            settings["manual_clock"] = True
        if schema_registry and settings.get("schema_registry_port", base.schema_registry_port) < 0:
            settings["schema_registry_port"] = 0
        self.config = replace(base, host=base.host if host is None else host,
                              port=base.port if port is None else port, **settings)
        if subprocess_mode and self.config.control_port < 0:
            self.config = replace(self.config, control_port=0)
        self.subprocess_mode = subprocess_mode
        self.server = None
        self.port: int | None = None
        self.control_url: str | None = None
        self.schema_registry_url: str | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._proc: subprocess.Popen | None = None
        self._watch: ParentWatch | None = None
        self._client = None

    def __getattr__(self, name: str):
        """The control methods, added to the class on the first lookup of one."""
        if name.startswith("_") or not _install_control_methods():
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        return getattr(self, name)

    def __dir__(self):
        _install_control_methods()
        return super().__dir__()

    # -- testcontainers-compatible surface ------------------------------------------------
    def start(self) -> "KafkaEmulator":
        """Start serving; ValueError names every bad setting before anything starts."""
        if self.port is not None:
            return self
        configure_default_logging()
        self.config.validate()
        if self.subprocess_mode:
            self._start_subprocess()
        else:
            self._start_in_process()
        return self

    def stop(self) -> None:
        if self._watch is not None:
            self._watch.release()
            self._watch = None
        if self._proc is not None:
            self._proc.terminate()
            try:
                self._proc.wait(10)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
            self._proc = None
        if self._loop is not None:
            asyncio.run_coroutine_threadsafe(self.server.stop(), self._loop).result(10)
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(10)
            self._loop = None
        self.port = None
        self.control_url = None
        self.schema_registry_url = None
        self._client = None

    def get_bootstrap_server(self) -> str:
        return self.bootstrap_server

    def get_schema_registry_url(self) -> str:
        """The built-in schema registry's URL (``schema_registry=True``), as testcontainers' Redpanda
        module's method of that name."""
        if self.schema_registry_url is None:
            raise RuntimeError("the emulator is not running with a schema registry (schema_registry=True)")
        return self.schema_registry_url

    @property
    def bootstrap_server(self) -> str:
        if self.port is None:
            raise RuntimeError("the emulator is not running")
        return f"{self.config.host}:{self.port}"

    @property
    def security_protocol(self) -> str:
        """What clients set as ``security.protocol``: PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL."""
        return self.config.security_protocol

    @property
    def bootstrap_servers(self) -> str:
        """Every node's address, comma separated (one node unless started with ``nodes=N``)."""
        nodes = self.nodes()
        return ",".join(f"{self.config.host}:{n['port']}" for n in nodes)

    def __enter__(self) -> "KafkaEmulator":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    # -- in-process access --------------------------------------------------------------------
    @property
    def broker(self):
        """The live Broker. Read it only through ``call`` while the emulator runs."""
        self._require_in_process()
        return self.server.broker

    @property
    def clock(self):
        """The in-process server's clock (a ManualClock with ``manual_clock=True``)."""
        self._require_in_process()
        return self.server.clock

    def call(self, fn: Callable[[Any], Any], timeout: float = 10) -> Any:
        """Run ``fn(broker)`` on the emulator's loop thread and return its result (in-process only)."""
        self._require_in_process()

        async def run():
            result = fn(self.server.broker)
            self.server.schedule_tick()
            return result
        return asyncio.run_coroutine_threadsafe(run(), self._loop).result(timeout)

    def _require_in_process(self) -> None:
        if self.subprocess_mode or self._loop is None:
            raise RuntimeError("only a running in-process emulator can be reached this way; "
                               "the control methods work in both modes")

    # -- test control (both modes) ------------------------------------------------------------
    def control(self, op: str, /, **params: Any) -> Any:
        """Run a control operation by name (kafkaemu.control.operations.OPS) with JSON-like
        parameters. The control methods (``advance_clock``, ``inject_fault``, ``await_group``, ...)
        are this with names and defaults, made from the operation table
        (kafkaemu/control/python_api.py); ``kafkaemu.control.python_api.methods()`` lists them."""
        params = {k: v for k, v in params.items() if v is not None}
        if self.port is None:
            raise RuntimeError("the emulator is not running")
        if self.subprocess_mode:
            if self._client is None:   # imported with the first call: the client reads the operation table
                from ..control.client import ControlClient
                self._client = ControlClient(self.control_url, self.config.control_token)
            return self._client.call(op, **params)
        wait = 30 + (params.get("timeout_ms", 0) / 1000 if isinstance(params.get("timeout_ms"), int) else 0)
        return asyncio.run_coroutine_threadsafe(self.server.control.call(op, params), self._loop).result(wait)

    def group_transitions(self, group_id: str | None = None) -> list[Transition]:
        """Every group state transition so far (oldest first), optionally for one group."""
        from .transitions import StateName, Transition   # a dataclass made with the first call, not at import
        entries, after = [], 0
        while True:
            page = self.control("journal_get", group=group_id, after=after, limit=100_000)["entries"]
            if not page:
                return entries
            entries += [Transition(e["seq"], e["at_ms"], e["group"], StateName(e["from"]), StateName(e["to"]),
                                   e["generation"])
                        for e in page]
            after = page[-1]["seq"]

    # the manual clock run until something holds (kafkaemu/testing/manual_time.py)
    def advance_until(self, condition: Callable[[], Any], *, step: int | str = "100ms", limit: int | str = "10m",
                      settle: float = 0.25) -> Any:
        """Manual clock: advance by ``step`` until ``condition()`` is truthy (returned), giving
        clients up to ``settle`` s of real time after each step; AwaitTimeout past ``limit``."""
        from . import manual_time
        return manual_time.advance_until(self, condition, step, limit, settle)

    def advance_until_group(self, group: str, *, state: str | None = None, generation: int | None = None,
                            members: int | None = None, assigned: bool = False, step: int | str = "100ms",
                            limit: int | str = "10m", settle: float = 0.25) -> dict:
        """``advance_until`` the group is as ``await_group`` would wait for; returns the group."""
        from . import manual_time
        return manual_time.advance_until_group(self, group, step, limit, settle, state=state, generation=generation,
                                               members=members, assigned=assigned)

    def transaction_transitions(self, transactional_id: str | None = None) -> list:
        """Every transaction state transition so far (time, id, from, to, producer id, epoch), oldest
        first, optionally for one transactional id."""
        return self.call(lambda broker: [t for t in broker.txn_coordinator.transitions
                                         if transactional_id is None or t.transactional_id == transactional_id])

    # -- starting -------------------------------------------------------------------------
    def _start_in_process(self) -> None:
        import uvloop

        from ..server import KafkaServer
        self.server = KafkaServer(self.config)
        self._loop = uvloop.new_event_loop()
        started = threading.Event()
        failure: list[BaseException] = []

        def run() -> None:
            asyncio.set_event_loop(self._loop)
            try:
                self._loop.run_until_complete(self.server.start())
            except BaseException as exc:  # reported to the starting thread (a taken port)
                failure.append(exc)
                try:
                    self._loop.run_until_complete(self.server.stop())  # listeners opened before the failure
                finally:
                    self._loop.close()
                    started.set()
                return
            started.set()
            self._loop.run_forever()
            self._loop.close()

        self._thread = threading.Thread(target=run, name="kafkaemu", daemon=True)
        self._thread.start()
        started.wait(30)
        if failure:
            self._loop = None
            raise failure[0]
        self.port = self.server.port
        self.control_url = self.server.control_url
        if self.server.schema_registry is not None:
            self.schema_registry_url = self.server.schema_registry.url

    def subprocess_command(self) -> list[str]:
        """The ``kafkaemu serve`` command line of subprocess mode, derived from the configuration."""
        level = os.environ.get("KAFKAEMU_LOG_LEVEL", "warning")
        return [sys.executable, "-m", "kafkaemu", "serve", *self.config.to_argv(), f"--log-level={level}"]

    def _start_subprocess(self) -> None:
        # the configuration is all in the command line: KAFKA_* variables (which `kafkaemu serve` reads
        # as Kafka's container image does) stay out, so both modes start alike
        env = {key: value for key, value in os.environ.items() if not key.startswith("KAFKA_")}
        self._proc = subprocess.Popen(self.subprocess_command(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                      text=True, env=env)
        # the child stops (SIGTERM, as stop() does) when this process dies without stopping it, even by SIGKILL
        from .parent_watch import ParentWatch   # subprocess mode's alone
        self._watch = ParentWatch(self._proc.pid, signum=signal.SIGTERM, grace_s=10)
        stderr = _StderrForwarder(self._proc.stderr)
        line = self._proc.stdout.readline()
        if not line.startswith("kafkaemu listening on "):
            self._watch.release()
            self._watch = None
            if line:
                self._proc.kill()
            code = self._proc.wait(10)
            self._proc = None
            why = stderr.wait_for_end(10) or line.strip() or "no output"
            raise RuntimeError(f"kafkaemu did not start (exit status {code}): {why}")
        self.port = int(line.rsplit(":", 1)[1])
        while True:  # the other nodes' lines, then the control API's
            line = self._proc.stdout.readline()
            if not line or line.startswith("kafkaemu control on "):
                break
        if not line:
            raise RuntimeError("kafkaemu did not print its control URL")
        self.control_url = line.split(" on ", 1)[1].strip()
        if self.config.schema_registry_port >= 0:
            line = self._proc.stdout.readline()
            if not line.startswith("kafkaemu schema registry on "):
                raise RuntimeError(f"kafkaemu did not print its schema registry URL: {line.strip() or 'no output'}")
            self.schema_registry_url = line.split(" on ", 1)[1].strip()


class _StderrForwarder:
    """Copy a child's stderr to ours (whatever ``sys.stderr`` is at the time, as pytest swaps it)
    on a thread, keeping the last line for an error message."""

    def __init__(self, source) -> None:
        self.last = ""
        self._thread = threading.Thread(target=self._copy, args=(source,), name="kafkaemu-stderr", daemon=True)
        self._thread.start()

    def _copy(self, source) -> None:
        for line in source:
            if line.strip():
                self.last = line.strip()
            try:
                sys.stderr.write(line)
                sys.stderr.flush()
            except (OSError, ValueError):  # a closed capture
                pass

    def wait_for_end(self, timeout: float) -> str:
        self._thread.join(timeout)
        return self.last
