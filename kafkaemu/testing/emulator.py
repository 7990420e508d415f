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
from ..logging import configure_default_logging


class KafkaEmulator:
    """Keyword settings are BrokerConfig fields (``extra={kafka name: value}`` for Kafka's names);
    without ``config``, ``port`` defaults to 0 (a free port) rather than 9092."""

    def __init__(self, port: int | None = None, host: str | None = None, *, subprocess_mode: bool = False,
                 manual_clock: bool = False, config: BrokerConfig | None = None, **settings: Any) -> None:
        base = config or BrokerConfig(port=0)
        self.config = replace(base, host=base.host if host is None else host,
                              port=base.port if port is None else port, **settings)
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

    def inject_fault(self, api: int | str, *, error: int | str | None = None, delay_ms: int = 0,
                     drop_connection: bool = False, times: int | None = 1, client_id: str | None = None,
                     error_code: int | str | None = None):
        """Make the next ``times`` requests of ``api`` fail, lag or drop (see kafkaemu.faults):
        ``inject_fault("Heartbeat", error="NOT_COORDINATOR")``; numbers work too
        (``inject_fault(12, error_code=16)``, ``error_code`` being ``error``'s older name)."""
        from ..faults import FaultRule, api_key_of, error_code_of
        if error is not None and error_code is not None:
            raise TypeError("give error or error_code, not both")
        error = error if error is not None else error_code
        rule = FaultRule(api_key_of(api), error_code=None if error is None else error_code_of(error),
                         delay_ms=delay_ms, drop_connection=drop_connection, times=times, client_id=client_id)
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

    # -- transactions (see docs/transactions.md) ------------------------------------------
    def transaction_state(self, transactional_id: str) -> dict | None:
        """The transactional id's state (Kafka's name, e.g. "Ongoing"), pending state, producer id and
        epoch, partitions, timeout, start time, whether held; None for an unknown id."""
        return self.call(lambda broker: broker.transaction_state(transactional_id))

    def hold_transaction(self, transactional_id: str) -> None:
        """Withhold the id's commit/abort markers until ``release_transaction``: EndTxn is answered,
        the transaction stays in PrepareCommit/PrepareAbort and the last stable offset of its
        partitions stays pinned (read_committed consumers wait). A held transaction never times out."""
        self.call(lambda broker: broker.hold_transaction(transactional_id))

    def release_transaction(self, transactional_id: str) -> bool:
        """Stop holding; write withheld markers. True when a transaction completed."""
        return self.call(lambda broker: broker.release_transaction(transactional_id, self.clock.now_ms()))

    def abort_transaction(self, transactional_id: str) -> str:
        """Abort the id's open transaction as the coordinator does on its own, fencing the producer's
        epoch; returns "NONE" or the error name (INVALID_TXN_STATE when none is open)."""
        return self.call(lambda broker: broker.abort_transaction(transactional_id, self.clock.now_ms()))

    def time_out_transaction(self, transactional_id: str) -> str:
        """Make the id's open transaction time out now, whatever the clock; returns the error name."""
        return self.call(lambda broker: broker.time_out_transaction(transactional_id, self.clock.now_ms()))

    def fence_producer(self, transactional_id: str) -> dict:
        """Bump the id's epoch as a new producer instance's InitProducerId would: the running producer
        gets PRODUCER_FENCED. Returns error_code, producer_id, producer_epoch."""
        return self.call(lambda broker: broker.fence_producer(transactional_id, self.clock.now_ms()))

    def transaction_transitions(self, transactional_id: str | None = None) -> list:
        """Every transaction state transition so far (time, id, from, to, producer id, epoch), oldest
        first, optionally for one transactional id."""
        return self.call(lambda broker: [t for t in broker.txn_coordinator.transitions
                                         if transactional_id is None or t.transactional_id == transactional_id])

    def _require_in_process(self) -> None:
        if self.subprocess_mode or self._loop is None:
            raise RuntimeError("only a running in-process emulator can be controlled")

    # -- starting -------------------------------------------------------------------------
    def _start_in_process(self) -> None:
        import uvloop

        from ..server import KafkaServer
        self.server = KafkaServer(self.config, self.clock)
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

    def subprocess_command(self) -> list[str]:
        """The ``kafkaemu serve`` command line of subprocess mode, derived from the configuration."""
        level = os.environ.get("KAFKAEMU_LOG_LEVEL", "warning")
        return [sys.executable, "-m", "kafkaemu", "serve", *self.config.to_argv(), f"--log-level={level}"]

    def _start_subprocess(self) -> None:
        self._proc = subprocess.Popen(self.subprocess_command(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                      text=True)
        stderr = _StderrForwarder(self._proc.stderr)
        line = self._proc.stdout.readline()
        if not line.startswith("kafkaemu listening on "):
            if line:
                self._proc.kill()
            code = self._proc.wait(10)
            self._proc = None
            why = stderr.wait_for_end(10) or line.strip() or "no output"
            raise RuntimeError(f"kafkaemu did not start (exit status {code}): {why}")
        self.port = int(line.rsplit(":", 1)[1])


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
