"""Helpers for the consumer-group integration tests: topics with records, consumers running in
threads (each client's consumer lives on the thread that polls it), assignment snapshots, one
``GroupClient`` adapter per client library for the shared scenarios (``CLIENTS``), and consumers in
subprocesses that can be killed without a LeaveGroup."""
from __future__ import annotations

import asyncio
import json
import os
import queue
import subprocess
import sys
import threading
import time
import uuid
from dataclasses import dataclass
from typing import Callable

SESSION_MS = 6000           # the broker's minimum: the fastest a killed member can expire
POLL_MS = 100               # kafka-python's poll(timeout_ms=...), as user code often writes it


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def create_topic(emulator, name: str, partitions: int) -> None:
    emulator.call(lambda broker: broker.topics.create(name, partitions, {}))


def append_records(emulator, topic: str, per_partition: int) -> None:
    """Append ``per_partition`` records (value b"<partition>-<i>") to every partition, broker-side."""
    from kafkaemu.storage.record_batch import build_batch

    def run(broker):
        t = broker.store.get(topic)
        now = int(time.time() * 1000)
        for p in t.partitions:
            p.append_batch(build_batch([(None, b"%d-%d" % (p.index, i), (), now) for i in range(per_partition)]), now)
    emulator.call(run)


def wait_until(predicate, timeout: float = 30.0, interval: float = 0.05, what: str = "condition"):
    deadline = time.time() + timeout
    while time.time() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")


def tps(topic: str, n: int) -> set:
    return {(topic, p) for p in range(n)}


def disjoint_and_complete(assignments: list[set], universe: set) -> bool:
    seen: set = set()
    for a in assignments:
        if a & seen:
            return False
        seen |= a
    return seen == universe


class ConsumerThread(threading.Thread):
    """Runs one consumer: ``make()`` builds it, ``poll(c)`` returns [(topic, partition, offset)],
    ``assignment(c)`` returns {(topic, partition)}; commands run on the consumer's own thread."""

    def __init__(self, make, poll, assignment, close, name: str):
        super().__init__(daemon=True, name=name)
        self._make, self._poll, self._assignment, self._close = make, poll, assignment, close
        self._commands: queue.Queue = queue.Queue()
        self.assigned: set = set()
        self.records: list = []
        self.error: BaseException | None = None
        self.closed = threading.Event()
        self.start()

    def run(self) -> None:
        try:
            consumer = self._make()
            while True:
                try:
                    cmd, arg, done = self._commands.get_nowait()
                except queue.Empty:
                    cmd = None
                if cmd == "close":
                    self._close(consumer)
                    self.assigned = set()
                    done.set()
                    break
                if cmd == "call":
                    try:
                        arg[1] = arg[0](consumer)
                    except BaseException as exc:  # handed back to the caller
                        arg[1] = exc
                    done.set()
                self.records.extend(self._poll(consumer))
                self.assigned = set(self._assignment(consumer))
        except BaseException as exc:
            self.error = exc
        finally:
            self.closed.set()

    def call(self, fn, timeout: float = 30):
        box, done = [fn, None], threading.Event()
        self._commands.put(("call", box, done))
        assert done.wait(timeout), "consumer thread did not run the call"
        if isinstance(box[1], BaseException):
            raise box[1]
        return box[1]

    def close(self, timeout: float = 30) -> None:
        done = threading.Event()
        self._commands.put(("close", None, done))
        assert done.wait(timeout), "consumer did not close"
        self.join(timeout)


# -- per-client consumer factories -------------------------------------------------------------

def _python_consumer_settings(bootstrap: str, group: str, client_id: str, extra: dict) -> dict:
    """kafka-python's and aiokafka's consumers take the same keywords."""
    return dict(bootstrap_servers=bootstrap, group_id=group, client_id=client_id, session_timeout_ms=SESSION_MS,
                heartbeat_interval_ms=500, auto_offset_reset="earliest", enable_auto_commit=False, **extra)


def _records(batches: dict) -> list:
    """A kafka-python poll() or aiokafka getmany() result as [(topic, partition, offset)]."""
    return [(tp.topic, tp.partition, m.offset) for tp, msgs in batches.items() for m in msgs]


def _assigned(consumer) -> set:
    return {(tp.topic, tp.partition) for tp in consumer.assignment()}


def kafka_python_consumer(bootstrap: str, topics, group: str, client_id: str, **extra) -> ConsumerThread:
    from kafka import KafkaConsumer
    return ConsumerThread(lambda: KafkaConsumer(*topics, **_python_consumer_settings(bootstrap, group, client_id, extra)),
                          lambda c: _records(c.poll(timeout_ms=POLL_MS)), _assigned, lambda c: c.close(), client_id)


def confluent_consumer(bootstrap: str, topics, group: str, client_id: str, **extra) -> ConsumerThread:
    from confluent_kafka import Consumer
    state: dict = {"assigned": set()}

    def on_assign(c, partitions):
        if extra.get("partition.assignment.strategy") == "cooperative-sticky":
            state["assigned"] |= {(p.topic, p.partition) for p in partitions}
        else:
            state["assigned"] = {(p.topic, p.partition) for p in partitions}

    def on_revoke(c, partitions):
        state["assigned"] -= {(p.topic, p.partition) for p in partitions}

    def make():
        conf = {"bootstrap.servers": bootstrap, "group.id": group, "client.id": client_id,
                "session.timeout.ms": SESSION_MS, "heartbeat.interval.ms": 500,
                "auto.offset.reset": "earliest", "enable.auto.commit": False,
                "topic.metadata.refresh.interval.ms": 1000}
        conf.update(extra)
        c = Consumer(conf)
        c.subscribe(list(topics), on_assign=on_assign, on_revoke=on_revoke)
        return c

    def poll(c):
        out = []
        for m in c.consume(100, 0.05):
            if m.error() is None:
                out.append((m.topic(), m.partition(), m.offset()))
        return out

    return ConsumerThread(make, poll, lambda c: set(state["assigned"]), lambda c: c.close(), client_id)


class LoopConsumer:
    """An aiokafka consumer together with the event loop (owned by its ConsumerThread) it runs on."""

    def __init__(self, build):
        self.loop = asyncio.new_event_loop()
        self.consumer = self.run(self._start(build))

    @staticmethod
    async def _start(build):
        consumer = build()      # aiokafka takes the running loop when it is built
        await consumer.start()
        return consumer

    def run(self, coro):
        return self.loop.run_until_complete(coro)

    def stop(self) -> None:
        self.run(self.consumer.stop())
        self.loop.close()


def aiokafka_consumer(bootstrap: str, topics, group: str, client_id: str, **extra) -> ConsumerThread:
    from aiokafka import AIOKafkaConsumer

    def build():
        return AIOKafkaConsumer(*topics, **_python_consumer_settings(bootstrap, group, client_id, extra))

    return ConsumerThread(lambda: LoopConsumer(build), lambda lc: _records(lc.run(lc.consumer.getmany(timeout_ms=100))),
                          lambda lc: _assigned(lc.consumer), lambda lc: lc.stop(), client_id)


# -- one adapter per client, for the scenarios they share (integration/test_groups.py) ----------

def _kafka_python_commit(thread: ConsumerThread, offsets: dict, metadata: str) -> None:
    from kafka import OffsetAndMetadata, TopicPartition
    thread.call(lambda c: c.commit({TopicPartition(t, p): OffsetAndMetadata(o, metadata, -1)
                                    for (t, p), o in offsets.items()}))


def _confluent_commit(thread: ConsumerThread, offsets: dict, metadata: str) -> None:
    from confluent_kafka import TopicPartition
    thread.call(lambda c: c.commit(offsets=[TopicPartition(t, p, o, metadata) for (t, p), o in offsets.items()],
                                   asynchronous=False))


def _aiokafka_commit(thread: ConsumerThread, offsets: dict, metadata: str) -> None:
    from aiokafka.structs import OffsetAndMetadata, TopicPartition
    thread.call(lambda lc: lc.run(lc.consumer.commit({TopicPartition(t, p): OffsetAndMetadata(o, metadata)
                                                       for (t, p), o in offsets.items()})))


def _kafka_python_assignors() -> dict:
    from kafka.coordinator.assignors.range import RangePartitionAssignor
    from kafka.coordinator.assignors.roundrobin import RoundRobinPartitionAssignor
    from kafka.coordinator.assignors.sticky.sticky_assignor import StickyPartitionAssignor
    return {"range": RangePartitionAssignor, "roundrobin": RoundRobinPartitionAssignor,
            "sticky": StickyPartitionAssignor}


def _aiokafka_assignors() -> dict:
    from aiokafka.coordinator.assignors.range import RangePartitionAssignor
    from aiokafka.coordinator.assignors.roundrobin import RoundRobinPartitionAssignor
    return {"range": RangePartitionAssignor, "roundrobin": RoundRobinPartitionAssignor}


@dataclass(frozen=True)
class GroupClient:
    """What the shared group scenarios need from one client library."""
    name: str                   # test id, and the client name group_member_proc.py runs
    make_consumer: Callable     # (bootstrap, topics, group, client_id, **extra) -> ConsumerThread
    commit: Callable            # (thread, {(topic, partition): offset}, metadata) -> None, synchronous
    assignor_config: Callable   # assignor name -> the consumer's extra settings choosing it
    default_assignor: str       # what the consumer uses when not told
    admin: Callable             # bootstrap -> a group_admins adapter
    # aiokafka's stop() sends LeaveGroup only when its generation is above 0: for it the close
    # scenario also checks that it left at once and that the first stable generation was 1.
    checks_prompt_leave: bool = False

    def consumer(self, bootstrap: str, topics, group: str, client_id: str, assignor: str | None = None,
                 **extra) -> ConsumerThread:
        if assignor is not None:
            extra.update(self.assignor_config(assignor))
        return self.make_consumer(bootstrap, topics, group, client_id, **extra)

    def __str__(self) -> str:
        return self.name


def _client_adapters() -> list[GroupClient]:
    from . import group_admins
    return [
        GroupClient("kafka-python", kafka_python_consumer, _kafka_python_commit,
                    lambda name: {"partition_assignment_strategy": (_kafka_python_assignors()[name],)},
                    "range", group_admins.KafkaPythonAdmin),
        GroupClient("confluent-kafka", confluent_consumer, _confluent_commit,
                    lambda name: {"partition.assignment.strategy": name},
                    "range", group_admins.ConfluentAdmin),
        GroupClient("aiokafka", aiokafka_consumer, _aiokafka_commit,
                    lambda name: {"partition_assignment_strategy": (_aiokafka_assignors()[name],)},
                    "roundrobin", group_admins.AiokafkaAdmin, checks_prompt_leave=True),
    ]


CLIENTS = {c.name: c for c in _client_adapters()}


# -- consumers in a subprocess (for kill -9 without LeaveGroup) ---------------------------------

class ConsumerProcess:
    """A consumer in a child process; it prints its assignment as a JSON line on every change."""

    def __init__(self, client: str, bootstrap: str, topic: str, group: str, client_id: str,
                 instance_id: str | None = None, assignor: str | None = None):
        args = [sys.executable, "-u", os.path.join(os.path.dirname(__file__), "group_member_proc.py"),
                client, bootstrap, topic, group, client_id, instance_id or ""]
        env = dict(os.environ, KAFKAEMU_TEST_ASSIGNOR=assignor) if assignor else None
        self.proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
        self.assigned: set = set()
        self.member_ids: list = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            try:
                msg = json.loads(line)
            except ValueError:
                continue
            self.assigned = {tuple(tp) for tp in msg["assigned"]}

    def kill(self) -> None:
        self.proc.kill()
        self.proc.wait(10)
