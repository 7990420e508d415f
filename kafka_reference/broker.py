"""A real Apache Kafka 4.4.0 broker on loopback, started on demand from Maven Central's jars.

``fetch_jars()`` copies ``org.apache.kafka:kafka_2.13:4.4.0`` and its dependencies into
``.cache/kafka-4.4.0/`` with Maven (``mvn dependency:copy-dependencies`` on ``pom.xml`` beside this
module), once. ``KafkaCluster(nodes=1).start()`` formats a KRaft storage directory per node in a
temporary directory and starts each node (``process.roles=broker,controller``) as its own JVM on
free loopback ports, with settings that make it quick to start and run on one machine (replication
factors 1, a small heap, the C1 compiler only). ``stop()`` kills the processes by PID and removes
the directory. Each node's JVM dies with the Python process that started it, however that process
dies (kill -9 included): a watchdog (``kafkaemu.testing.parent_watch``) kills it. ``missing()``
names what this machine lacks (Java, Maven, the jars' download), so callers skip rather than fail.

Used by the differential suite (``integration/differential/``) and by the benchmarks, which import
this package from the checkout's root.
"""
from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from kafkaemu.testing.parent_watch import ParentWatch

KAFKA_VERSION = "4.4.0"
ROOT = Path(__file__).resolve().parent.parent
POM = Path(__file__).resolve().parent / "pom.xml"
JARS = ROOT / ".cache" / f"kafka-{KAFKA_VERSION}"
_DONE = JARS / ".complete"

# Settings of every node: what a cluster smaller than three nodes needs (the internal topics'
# replication factors). Everything else is Kafka's default, so the differential suite compares with
# Kafka as shipped; callers override per cluster (``KafkaCluster(settings={...})``). Quick starts
# come from the JVM options instead (a small heap, the C1 compiler only, serial GC).
ONE_MACHINE = {
    "offsets.topic.replication.factor": "1",
    "transaction.state.log.replication.factor": "1",
    "transaction.state.log.min.isr": "1",
    "share.coordinator.state.topic.replication.factor": "1",
    "share.coordinator.state.topic.min.isr": "1",
}
JVM_OPTIONS = ["-Xms128m", "-Xmx512m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xss512k",
               "-XX:-UsePerfData", "-Djava.awt.headless=true"]

# The PLAIN users of an authorizer-enabled cluster (``KafkaCluster(authorizer=True)``): ``admin`` is a
# super user, the others start with no ACL.
SASL_USERS = {"admin": "admin-secret", "alice": "alice-secret", "bob": "bob-secret"}


class KafkaUnavailable(RuntimeError):
    """What this machine lacks to run the reference broker (Java, Maven, the download)."""


def missing() -> str | None:
    """Why the reference broker cannot run here, or None when Java and the jars (or Maven to fetch
    them) are present."""
    if shutil.which("java") is None:
        return "Java (a `java` executable on PATH) is missing; the reference Kafka broker needs it"
    if not _DONE.exists() and shutil.which("mvn") is None:
        return (f"Maven (`mvn` on PATH) is missing and {JARS} holds no Kafka {KAFKA_VERSION} jars; "
                "the reference Kafka broker needs one of them")
    return None


def fetch_jars(timeout_s: float = 600) -> Path:
    """The directory of Kafka 4.4.0's jars, copied from Maven Central the first time (KafkaUnavailable
    when that is not possible)."""
    if _DONE.exists():
        return JARS
    reason = missing()
    if reason:
        raise KafkaUnavailable(reason)
    JARS.mkdir(parents=True, exist_ok=True)
    try:
        done = subprocess.run(["mvn", "-q", "-B", "-f", str(POM), "dependency:copy-dependencies",
                               "-DincludeScope=runtime", f"-DoutputDirectory={JARS}"],
                              capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        raise KafkaUnavailable(f"mvn dependency:copy-dependencies did not finish in {timeout_s:.0f} s") from None
    if done.returncode != 0:
        tail = " | ".join((done.stdout + done.stderr).strip().splitlines()[-5:])
        raise KafkaUnavailable(f"mvn dependency:copy-dependencies failed ({done.returncode}): {tail}")
    _DONE.write_text(KAFKA_VERSION + "\n")
    return JARS


def classpath() -> str:
    return os.pathsep.join(str(p) for p in sorted(fetch_jars().glob("*.jar")))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Node:
    node_id: int
    port: int             # the client listener
    controller_port: int
    directory: Path
    process: subprocess.Popen | None = field(default=None, repr=False)
    watch: ParentWatch | None = field(default=None, repr=False)   # kills the JVM if this process dies

    @property
    def log_file(self) -> Path:
        return self.directory / "server.log"

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process else None

    def kill(self) -> None:
        """Stop this node by its PID (SIGKILL: its storage is thrown away)."""
        if self.watch is not None:
            self.watch.release()
            self.watch = None
        if self.process is None:
            return
        if self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGKILL)
        self.process.wait()
        self.process = None


class KafkaCluster:
    """``nodes`` combined broker-controllers of Apache Kafka 4.4.0 on 127.0.0.1.

    ``authorizer=True`` turns on ``StandardAuthorizer`` and a SASL/PLAIN client listener with the
    users of ``SASL_USERS`` (``admin`` a super user)."""

    def __init__(self, nodes: int = 1, *, settings: dict[str, str] | None = None, authorizer: bool = False,
                 start_timeout_s: float = 90) -> None:
        self.size = nodes
        self.settings = {**ONE_MACHINE, **(settings or {})}
        self.authorizer = authorizer
        self.start_timeout_s = start_timeout_s
        self.cluster_id = uuid.uuid4().hex[:22]
        self.nodes: list[Node] = []
        self._directory: Path | None = None

    # --- what clients need -------------------------------------------------------------------
    @property
    def bootstrap_server(self) -> str:
        return f"127.0.0.1:{self.nodes[0].port}"

    @property
    def bootstrap_servers(self) -> str:
        return ",".join(f"127.0.0.1:{n.port}" for n in self.nodes)

    get_bootstrap_server = bootstrap_server.fget
    security_protocol = property(lambda self: "SASL_PLAINTEXT" if self.authorizer else "PLAINTEXT")

    # --- lifecycle ---------------------------------------------------------------------------
    def start(self) -> "KafkaCluster":
        cp = classpath()
        self._directory = Path(tempfile.mkdtemp(prefix="kafka44-"))
        # node ids from 0, as kafkaemu numbers its nodes
        self.nodes = [Node(i, free_port(), free_port(), self._directory / f"node-{i}") for i in range(self.size)]
        try:
            for node in self.nodes:
                node.directory.mkdir()
                (node.directory / "server.properties").write_text(self._properties(node))
                (node.directory / "log4j2.properties").write_text(_LOG4J.format(log=node.log_file))
                self._format(cp, node)
            for node in self.nodes:
                node.process = subprocess.Popen(
                    ["java", *JVM_OPTIONS, f"-Dlog4j2.configurationFile={node.directory / 'log4j2.properties'}",
                     "-cp", cp, "kafka.Kafka", str(node.directory / "server.properties")],
                    stdout=open(node.directory / "stdout.log", "wb"), stderr=subprocess.STDOUT,
                    stdin=subprocess.DEVNULL, start_new_session=True)
                node.watch = ParentWatch(node.process.pid)
            deadline = time.monotonic() + self.start_timeout_s
            for node in self.nodes:
                self._wait_started(node, deadline)
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        for node in self.nodes:
            node.kill()
        if self._directory is not None:
            shutil.rmtree(self._directory, ignore_errors=True)
            self._directory = None

    def __enter__(self) -> "KafkaCluster":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    # --- how ---------------------------------------------------------------------------------
    def _properties(self, node: Node) -> str:
        listener = "SASL_PLAINTEXT" if self.authorizer else "PLAINTEXT"
        props = {
            "process.roles": "broker,controller",
            "node.id": str(node.node_id),
            **self._quorum(),
            "listeners": f"{listener}://127.0.0.1:{node.port},CONTROLLER://127.0.0.1:{node.controller_port}",
            "advertised.listeners": f"{listener}://127.0.0.1:{node.port}",
            "controller.listener.names": "CONTROLLER",
            "inter.broker.listener.name": listener,
            "listener.security.protocol.map": f"{listener}:{listener},CONTROLLER:PLAINTEXT",
            "log.dirs": str(node.directory / "data"),
            **self.settings,
        }
        if self.authorizer:
            users = " ".join(f'user_{name}="{password}"' for name, password in SASL_USERS.items())
            props.update({
                "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
                # the controllers talk over PLAINTEXT, as User:ANONYMOUS
                "super.users": "User:admin;User:ANONYMOUS",
                "sasl.enabled.mechanisms": "PLAIN",
                "sasl.mechanism.inter.broker.protocol": "PLAIN",
                "listener.name.sasl_plaintext.plain.sasl.jaas.config":
                    "org.apache.kafka.common.security.plain.PlainLoginModule required "
                    f'username="admin" password="{SASL_USERS["admin"]}" {users};',
            })
        return "".join(f"{k}={v}\n" for k, v in props.items())

    def _quorum(self) -> dict[str, str]:
        """One node forms a dynamic quorum (kraft.version 1, as ``kafka-storage format --standalone``
        in Kafka's quick start); several, a static one (``controller.quorum.voters``)."""
        if self.size == 1:
            return {"controller.quorum.bootstrap.servers": f"127.0.0.1:{self.nodes[0].controller_port}"}
        return {"controller.quorum.voters": ",".join(f"{n.node_id}@127.0.0.1:{n.controller_port}" for n in self.nodes)}

    def _format(self, cp: str, node: Node) -> None:
        standalone = ["--standalone"] if self.size == 1 else []
        done = subprocess.run(["java", "-XX:TieredStopAtLevel=1", "-Xmx256m", "-cp", cp, "kafka.tools.StorageTool",
                               "format", "--ignore-formatted", "-t", self.cluster_id, *standalone,
                               "-c", str(node.directory / "server.properties")],
                              capture_output=True, text=True, timeout=120)
        if done.returncode != 0:
            tail = " | ".join((done.stdout + done.stderr).strip().splitlines()[-5:])
            raise KafkaUnavailable(f"formatting node {node.node_id}'s storage failed ({done.returncode}): {tail}")

    def _wait_started(self, node: Node, deadline: float) -> None:
        while True:
            if node.process.poll() is not None:
                raise KafkaUnavailable(f"Kafka node {node.node_id} exited ({node.process.returncode}): {self._tail(node)}")
            if node.log_file.exists() and "Kafka Server started" in node.log_file.read_text(errors="replace"):
                return
            if time.monotonic() > deadline:
                raise KafkaUnavailable(f"Kafka node {node.node_id} did not start in {self.start_timeout_s:.0f} s: "
                                       f"{self._tail(node)}")
            time.sleep(0.1)

    @staticmethod
    def _tail(node: Node) -> str:
        lines = []
        for name in ("stdout.log", "server.log"):
            path = node.directory / name
            if path.exists():
                lines += path.read_text(errors="replace").strip().splitlines()[-4:]
        return " | ".join(lines) or "no output"


_LOG4J = """status = error
appender.file.type = File
appender.file.name = file
appender.file.fileName = {log}
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.file.ref = file
"""
