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
from dataclasses import dataclass, replace
from typing import Any, Callable

from ..config import BrokerConfig
from ..logging import configure_default_logging


class StateName(str):
    """A group state's name ("Stable"); ``.value`` is the name too, as on the core's state enums,
    so code written against those keeps working."""

    @property
    def value(self) -> str:
        return str(self)


@dataclass(frozen=True)
class Transition:
    """One group state change of the control API's journal (``generation_id`` is the group epoch
    of a KIP-848 consumer group)."""
    seq: int
    at_ms: int
    group_id: str
    from_state: str
    to_state: str
    generation_id: int


class KafkaEmulator:
    """Keyword settings are BrokerConfig fields (``extra={kafka name: value}`` for Kafka's names);
    without ``config``, ``port`` defaults to 0 (a free port) rather than 9092.

    The test controls (docs/control.md) work alike in-process and in subprocess mode: in-process
    they run on the emulator's loop, in subprocess mode over its HTTP control API (started on a
    free loopback port unless ``control_port`` says otherwise). A refused call raises
    kafkaemu.control.ControlError; an await that times out, AwaitTimeout (a TimeoutError)."""

    def __init__(self, port: int | None = None, host: str | None = None, *, subprocess_mode: bool = False,
                 manual_clock: bool = False, config: BrokerConfig | None = None, **settings: Any) -> None:
        base = config or BrokerConfig(port=0)
        if manual_clock:
            settings["manual_clock"] = True
        self.config = replace(base, host=base.host if host is None else host,
                              port=base.port if port is None else port, **settings)
        if subprocess_mode and self.config.control_port < 0:
            self.config = replace(self.config, control_port=0)
        self.subprocess_mode = subprocess_mode
        self.server = None
        self.port: int | None = None
        self.control_url: str | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._proc: subprocess.Popen | None = None
        self._client = None

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
        self.control_url = None
        self._client = None

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
        parameters; the methods below are this with names and defaults."""
        params = {k: v for k, v in params.items() if v is not None}
        if self.port is None:
            raise RuntimeError("the emulator is not running")
        if self.subprocess_mode:
            return self._client.call(op, **params)
        wait = 30 + (params.get("timeout_ms", 0) / 1000 if isinstance(params.get("timeout_ms"), int) else 0)
        return asyncio.run_coroutine_threadsafe(self.server.control.call(op, params), self._loop).result(wait)

    # time
    def now_ms(self) -> int:
        return self.control("clock_get")["now_ms"]

    def advance_clock(self, ms: int | str) -> int:
        """Move the manual clock forward (ms, or "30s", "5m") and fire every timer that became due;
        returns the new time."""
        return self.control("clock_advance", ms=ms)["now_ms"]

    def set_clock(self, when: int | str) -> int:
        """Set the manual clock to a later time (ms since the epoch or ISO 8601)."""
        return self.control("clock_set", now_ms=when)["now_ms"]

    def expire_member(self, group: str, member_id: str | None = None, *, instance_id: str | None = None,
                      client_id: str | None = None) -> dict:
        """Expire members' sessions now (by member id, group.instance.id or client id), leaving the
        clock and the other members alone."""
        return self.control("expire_member", group=group, member_id=member_id, instance_id=instance_id,
                            client_id=client_id)

    # faults
    def inject_fault(self, api: int | str, *, error: int | str | None = None, delay_ms: int | str = 0,
                     drop_connection: bool = False, black_hole: bool = False, times: int | None = 1,
                     client_id: str | None = None, min_version: int | None = None, max_version: int | None = None,
                     node: int | None = None, topic: str | None = None, partition: int | None = None,
                     error_code: int | str | None = None) -> dict:
        """Make the next ``times`` matching requests fail, lag, drop or vanish (``times=None``:
        until removed): ``inject_fault("Heartbeat", error="NOT_COORDINATOR")``. ``topic`` and
        ``partition`` scope a rule to requests naming them and replace only their entries' error.
        Numbers work too (``error_code`` is ``error``'s older name). Returns the rule, with its id."""
        if error is not None and error_code is not None:
            raise TypeError("give error or error_code, not both")
        error = error if error is not None else error_code
        return self.control("fault_add", api=api, error=error, delay_ms=delay_ms or None,
                            drop_connection=drop_connection or None, black_hole=black_hole or None,
                            count=times, until_removed=True if times is None else None, client_id=client_id,
                            min_version=min_version, max_version=max_version, node=node, topic=topic,
                            partition=partition)

    def faults(self) -> list[dict]:
        """Every fault rule, spent ones too, with how often each fired."""
        return self.control("faults")["faults"]

    def remove_fault(self, rule_id: int) -> dict:
        return self.control("fault_remove", id=rule_id)

    def clear_faults(self) -> None:
        self.control("faults_clear")

    # topology
    def nodes(self) -> list[dict]:
        return self.control("nodes")["nodes"]

    def stop_node(self, node_id: int, leaders: str = "move") -> dict:
        """Stop a node's listener; its partitions and coordinators move to running nodes
        (``leaders="offline"``: they stay without a leader until it starts)."""
        return self.control("node_stop", node=node_id, leaders=leaders)

    def start_node(self, node_id: int, restore_leaders: bool = True) -> dict:
        return self.control("node_start", node=node_id, restore_leaders=restore_leaders)

    def move_leader(self, topic: str, partition: int, node_id: int) -> int:
        """Elect ``node_id`` leader of a partition (clients get NOT_LEADER_OR_FOLLOWER or
        NOT_COORDINATOR from the old node and follow Metadata); returns the new leader epoch."""
        return self.control("leader_move", topic=topic, partition=partition, node=node_id)["leader_epoch"]

    def move_coordinator(self, group: str, node_id: int) -> dict:
        return self.control("coordinator_move", group=group, node=node_id)

    def cap_api_version(self, api: int | str, max_version: int) -> dict:
        """Advertise at most ``max_version`` of ``api`` in ApiVersions (client fallback tests)."""
        return self.control("api_version_cap", api=api, max_version=max_version)

    def clear_api_version_caps(self) -> None:
        self.control("api_version_caps_clear")

    # request log
    def enable_request_log(self, bodies: bool = False, capacity: int | None = None) -> dict:
        return self.control("request_log_config", enabled=True, bodies=bodies, capacity=capacity)

    def disable_request_log(self) -> dict:
        return self.control("request_log_config", enabled=False)

    def requests(self, *, after: int | None = None, api: int | str | None = None, client_id: str | None = None,
                 node: int | None = None, errors: bool = False, limit: int | None = None) -> list[dict]:
        """Logged requests, oldest first (see enable_request_log)."""
        return self.control("requests", after=after, api=api, client_id=client_id, node=node,
                            errors=errors or None, limit=limit)["entries"]

    def clear_request_log(self) -> None:
        self.control("requests_clear")

    # state
    def topics(self, internal: bool = False) -> list[dict]:
        return self.control("topics", internal=internal or None)["topics"]

    def create_topic(self, name: str, partitions: int = 1, configs: dict | None = None) -> dict:
        return self.control("topic_create", name=name, partitions=partitions, configs=configs)

    def topic(self, name: str) -> dict:
        return self.control("topic", topic=name)

    def groups(self) -> list[dict]:
        return self.control("groups")["groups"]

    def group(self, group_id: str) -> dict:
        """A group's state, generation, members with decoded assignments, offsets and lag."""
        return self.control("group", group=group_id)

    def group_transitions(self, group_id: str | None = None) -> list[Transition]:
        """Every group state transition so far (oldest first), optionally for one group."""
        entries, after = [], 0
        while True:
            page = self.control("journal_get", group=group_id, after=after, limit=100_000)["entries"]
            if not page:
                return entries
            entries += [Transition(e["seq"], e["at_ms"], e["group"], StateName(e["from"]), StateName(e["to"]),
                                   e["generation"])
                        for e in page]
            after = page[-1]["seq"]

    # awaits (timeouts in seconds)
    def await_group(self, group: str, *, state: str | None = None, generation: int | None = None,
                    members: int | None = None, assigned: bool = False, timeout: float = 30) -> dict:
        """Return the group as soon as it is in ``state``, at ``generation`` or later, with
        ``members`` members and (``assigned``) every subscribed partition assigned."""
        return self.control("await_group", group=group, state=state, generation=generation, members=members,
                            assigned=assigned or None, timeout_ms=int(timeout * 1000))["current"]

    def await_lag(self, group: str, lag: int = 0, *, topic: str | None = None, timeout: float = 30) -> dict:
        """Return as soon as the group's total lag is at most ``lag``."""
        return self.control("await_lag", group=group, lag=lag, topic=topic, timeout_ms=int(timeout * 1000))["current"]

    def await_offset(self, topic: str, partition: int, offset: int, *, group: str | None = None,
                     timeout: float = 30) -> dict:
        """Return as soon as the partition's high watermark (or ``group``'s committed offset) is at
        least ``offset``."""
        return self.control("await_offset", topic=topic, partition=partition, offset=offset, group=group,
                            timeout_ms=int(timeout * 1000))["current"]

    # snapshots
    def snapshot(self, name: str) -> dict:
        """Capture the whole broker state under ``name``."""
        return self.control("snapshot_save", name=name)

    def restore(self, name: str) -> dict:
        """Bring a snapshot back (client connections are closed; clients reconnect)."""
        return self.control("snapshot_restore", name=name)

    def snapshots(self) -> list[dict]:
        return self.control("snapshot_list")["snapshots"]

    def delete_snapshot(self, name: str) -> dict:
        return self.control("snapshot_delete", name=name)

    def reset(self) -> dict:
        """Back to an empty broker: no topics, groups, offsets, faults or caps (snapshots stay)."""
        return self.control("reset")

    # -- transactions (see docs/transactions.md) ------------------------------------------
    def transaction_state(self, transactional_id: str) -> dict | None:
        """The transactional id's state (Kafka's name, e.g. "Ongoing"), pending state, producer id and
        epoch, partitions, timeout, start time, whether held; None for an unknown id."""
        from ..control.params import ControlError
        try:
            return self.control("transaction", transactional_id=transactional_id)
        except ControlError as exc:
            if exc.status == 404:
                return None
            raise

    def hold_transaction(self, transactional_id: str) -> None:
        """Withhold the id's commit/abort markers until ``release_transaction``: EndTxn is answered,
        the transaction stays in PrepareCommit/PrepareAbort and the last stable offset of its
        partitions stays pinned (read_committed consumers wait). A held transaction never times out."""
        self.control("transaction_hold", transactional_id=transactional_id)

    def release_transaction(self, transactional_id: str) -> bool:
        """Stop holding; write withheld markers. True when a transaction completed."""
        return self.control("transaction_release", transactional_id=transactional_id)["completed"]

    def abort_transaction(self, transactional_id: str) -> str:
        """Abort the id's open transaction as the coordinator does on its own, fencing the producer's
        epoch; returns "NONE" or the error name (INVALID_TXN_STATE when none is open)."""
        return self._transaction_call("transaction_abort", transactional_id)

    def time_out_transaction(self, transactional_id: str) -> str:
        """Make the id's open transaction time out now, whatever the clock; returns the error name."""
        return self._transaction_call("transaction_time_out", transactional_id)

    def fence_producer(self, transactional_id: str) -> dict:
        """Bump the id's epoch as a new producer instance's InitProducerId would: the running producer
        gets PRODUCER_FENCED. Returns error_code, producer_id, producer_epoch."""
        from ..protocol.errors import ErrorCode
        got = self.control("transaction_fence", transactional_id=transactional_id)
        return {"error_code": int(ErrorCode[got["error"]]), "producer_id": got["producer_id"],
                "producer_epoch": got["producer_epoch"]}

    def move_transaction_coordinator(self, transactional_id: str, node_id: int) -> dict:
        return self.control("txn_coordinator_move", transactional_id=transactional_id, node=node_id)

    def _transaction_call(self, op: str, transactional_id: str) -> str:
        from ..control.params import ControlError
        try:
            return self.control(op, transactional_id=transactional_id)["error"]
        except ControlError as exc:
            if exc.status == 409 and "txn_error" in exc.details:
                return exc.details["txn_error"]
            raise

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
        if self.server.control_server is not None:
            self.control_url = self.server.control_server.url

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
        while True:  # the other nodes' lines, then the control API's
            line = self._proc.stdout.readline()
            if not line or line.startswith("kafkaemu control on "):
                break
        if not line:
            raise RuntimeError("kafkaemu did not print its control URL")
        self.control_url = line.split(" on ", 1)[1].strip()
        from ..control.client import ControlClient
        self._client = ControlClient(self.control_url, self.config.control_token)


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
