"""Helpers for the consumer-group integration tests: topics with records, consumers running in
threads (each client's consumer lives on the thread that polls it), assignment snapshots, and
consumers in subprocesses that can be killed without a LeaveGroup."""
from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
import uuid

SESSION_MS = 6000           # the broker's minimum: the fastest a killed member can expire
# kafka-python 3.0.12 can hang a consumer (its IO thread idles while poll() waits forever) when
# poll() is called in a tight loop with very short timeouts; 500 ms polls avoid it.
POLL_MS = int(os.environ.get("KAFKAEMU_TEST_POLL_MS", "500"))


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def create_topic(emulator, name: str, partitions: int) -> None:
    emulator.call(lambda broker: broker.create_topic(name, partitions, {}))


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

def kafka_python_consumer(bootstrap: str, topics, group: str, client_id: str, **extra) -> ConsumerThread:
    from kafka import KafkaConsumer

    def make():
        return KafkaConsumer(*topics, bootstrap_servers=bootstrap, group_id=group, client_id=client_id,
                             session_timeout_ms=SESSION_MS, heartbeat_interval_ms=500,
                             auto_offset_reset="earliest", enable_auto_commit=False, **extra)

    def poll(c):
        out = []
        for tp, msgs in c.poll(timeout_ms=POLL_MS).items():
            out += [(tp.topic, tp.partition, m.offset) for m in msgs]
        return out

    return ConsumerThread(make, poll, lambda c: {(tp.topic, tp.partition) for tp in c.assignment()},
                          lambda c: c.close(), client_id)


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


# -- consumers in a subprocess (for kill -9 without LeaveGroup) ---------------------------------

class ConsumerProcess:
    """A consumer in a child process; it prints its assignment as a JSON line on every change."""

    def __init__(self, client: str, bootstrap: str, topic: str, group: str, client_id: str,
                 instance_id: str | None = None):
        args = [sys.executable, "-u", os.path.join(os.path.dirname(__file__), "group_member_proc.py"),
                client, bootstrap, topic, group, client_id, instance_id or ""]
        self.proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
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
