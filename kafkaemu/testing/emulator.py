"""Start kafkaemu from Python: in-process (own thread and uvloop loop) or as a subprocess.

Method names follow testcontainers' ``KafkaContainer`` (``start()``, ``stop()``,
``get_bootstrap_server()``, context manager) so code written for that container can switch.
"""
from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import threading
from dataclasses import replace
from typing import Any, Callable

from ..clock import ManualClock, SystemClock
from ..config import BrokerConfig


class KafkaEmulator:
    def __init__(self, port: int = 0, host: str = "127.0.0.1", *, subprocess_mode: bool = False,
                 manual_clock: bool = False, config: BrokerConfig | None = None, **settings: Any) -> None:
        base = config or BrokerConfig()
        self.config = replace(base, host=host, port=port, **settings)
        self.subprocess_mode = subprocess_mode
        self.clock = ManualClock() if manual_clock else SystemClock()
        if subprocess_mode and manual_clock:
            raise ValueError("a manual clock needs the in-process emulator")
        self.server = None
        self.port: int | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._proc: subprocess.Popen | None = None

    # -- testcontainers-compatible surface ------------------------------------------------
    def start(self) -> "KafkaEmulator":
        if self.port is not None:
            return self
        if self.subprocess_mode:
            self._start_subprocess()
        else:
            self._start_in_process()
        return self

    def stop(self) -> None:
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

    def get_bootstrap_server(self) -> str:
        return self.bootstrap_server

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
        if self.server is None:
            return self.bootstrap_server
        listeners = sorted(self.server.broker.listeners.items())
        return ",".join(f"{self.config.host}:{port}" for _, (_, port) in listeners)

    def __enter__(self) -> "KafkaEmulator":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    # -- test control (in-process only) ---------------------------------------------------
    @property
    def broker(self):
        """The live Broker. Read it only through ``call`` while the emulator runs."""
        self._require_in_process()
        return self.server.broker

    def call(self, fn: Callable[[Any], Any], timeout: float = 10) -> Any:
        """Run ``fn(broker)`` on the emulator's loop thread and return its result."""
        self._require_in_process()

        async def run():
            result = fn(self.server.broker)
            self.server.schedule_tick()
            return result
        return asyncio.run_coroutine_threadsafe(run(), self._loop).result(timeout)

    def advance_clock(self, ms: int) -> int:
        """Move the manual clock forward and fire every timer that became due."""
        if not isinstance(self.clock, ManualClock):
            raise RuntimeError("start the emulator with manual_clock=True to advance time")
        self._require_in_process()

        async def run():
            now = self.clock.advance(ms)
            self.server.tick()
            return now
        return asyncio.run_coroutine_threadsafe(run(), self._loop).result(10)

    def inject_fault(self, api_key: int, *, error_code: int | None = None, delay_ms: int = 0,
                     drop_connection: bool = False, times: int | None = 1, client_id: str | None = None):
        """Make the next ``times`` requests of ``api_key`` fail, lag or drop (see kafkaemu.faults)."""
        from ..faults import FaultRule
        rule = FaultRule(api_key, error_code=None if error_code is None else int(error_code), delay_ms=delay_ms,
                         drop_connection=drop_connection, times=times, client_id=client_id)
        return self.call(lambda broker: broker.faults.add(rule))

    def clear_faults(self) -> None:
        self.call(lambda broker: broker.faults.clear())

    def move_leader(self, topic: str, partition: int, node_id: int) -> int:
        """Elect ``node_id`` leader of a partition (clients get NOT_LEADER_OR_FOLLOWER or
        NOT_COORDINATOR from the old node and follow Metadata); returns the new leader epoch."""
        return self.call(lambda broker: broker.move_leader(topic, partition, node_id))

    def group_transitions(self, group_id: str | None = None) -> list:
        """Every group state transition so far (oldest first), optionally for one group."""
        return self.call(lambda broker: [t for t in broker.coordinator.transitions
                                         if group_id is None or t.group_id == group_id])

    def _require_in_process(self) -> None:
        if self.subprocess_mode or self._loop is None:
            raise RuntimeError("only a running in-process emulator can be controlled")

    # -- starting -------------------------------------------------------------------------
    def _start_in_process(self) -> None:
        import uvloop

        from ..server import KafkaServer
        self.server = KafkaServer(self.config, self.clock)  # bad settings (certificate, mechanisms) raise here
        self._loop = uvloop.new_event_loop()
        started = threading.Event()
        failure: list[BaseException] = []

        def run() -> None:
            asyncio.set_event_loop(self._loop)
            try:
                self._loop.run_until_complete(self.server.start())
            except BaseException as exc:  # reported to the starting thread
                failure.append(exc)
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

    def _start_subprocess(self) -> None:
        c = self.config
        cmd = [sys.executable, "-m", "kafkaemu", "serve", "--host", c.host, "--port", str(c.port),
               "--num-partitions", str(c.num_partitions), "--nodes", str(c.nodes),
               "--group-initial-rebalance-delay-ms", str(c.group_initial_rebalance_delay_ms),
               "--group-min-session-timeout-ms", str(c.group_min_session_timeout_ms),
               "--log-level", os.environ.get("KAFKAEMU_LOG_LEVEL", "warning")]
        if not c.auto_create_topics:
            cmd.append("--no-auto-create-topics")
        if c.data_dir:
            cmd += ["--data-dir", c.data_dir]
        cmd += [arg for user, password in c.sasl_users.items() for arg in ("--sasl-user", f"{user}:{password}")]
        if c.sasl_mechanisms:
            cmd += ["--sasl-mechanisms", ",".join(c.sasl_mechanisms)]
        for flag, value in (("--tls-cert", c.tls_cert), ("--tls-key", c.tls_key),
                            ("--tls-key-password", c.tls_key_password)):
            if value:
                cmd += [flag, value]
        cmd += [arg for name, value in c.extra.items() for arg in ("--override", f"{name}={value}")]
        self._proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
        line = self._proc.stdout.readline()
        if not line.startswith("kafkaemu listening on "):
            self._proc.kill()
            raise RuntimeError(f"kafkaemu did not start: {line!r}")
        self.port = int(line.rsplit(":", 1)[1])
