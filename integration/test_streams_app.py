"""A real Kafka Streams 4.4 application against a kafkaemu server process: the word count of
integration/java/src/kafkaemu/jvm/WordCountApp.java (a repartition topic, a state store with its
changelog, exactly-once) joins its streams group with ``group.protocol=streams`` (KIP-1071).

Two instances share the work; one is killed with ``kill -9`` while lines keep coming. Its tasks
move to the survivor, which restores the store from the changelog, and the counts come out exact:
read from the output topic by a real client (read_committed), each word's counts are 1, 2, ... n,
one record per occurrence, none lost, none twice (a store not restored would start again at 1).
"""
from __future__ import annotations

import collections
import os
import queue
import signal
import subprocess
import threading
import time
import uuid

import pytest
from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import KafkaAdminClient, NewTopic

from kafkaemu.testing import KafkaEmulator

from .java_runs import JVM_OPTIONS

PARTITIONS = 4
TASKS = {f"{subtopology}_{partition}" for subtopology in (0, 1) for partition in range(PARTITIONS)}
WORDS = ["kafka", "streams", "emulator", "count", "word", "state", "store", "task"]
LINES_BEFORE_KILL = 200
LINES_AFTER_KILL = 200
WAIT_S = 120   # a bound on each wait, not a measurement


def lines(start: int, count: int) -> list[str]:
    """Line i holds 1 + i % 3 words, a different mix each time, so the words' totals differ."""
    return [" ".join(WORDS[(i * 5 + j * 3) % len(WORDS)] for j in range(1 + i % 3)) + "."
            for i in range(start, start + count)]


def word_totals(text: list[str]) -> collections.Counter:
    return collections.Counter(word.strip(".") for line in text for word in line.split())


class Instance:
    """One WordCountApp JVM; its STATE and TASKS lines are read on a thread."""

    def __init__(self, classpath: str, bootstrap: str, app: str, input_topic: str, output_topic: str, state_dir,
                 instance_id: str | None = None):
        """``instance_id``: its group.instance.id (a static member), none by default."""
        self.proc = subprocess.Popen(
            ["java", *JVM_OPTIONS, "-cp", classpath, "kafkaemu.jvm.WordCountApp", bootstrap, app, input_topic,
             output_topic, str(state_dir), *([instance_id] if instance_id is not None else [])],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.lines: queue.Queue[str] = queue.Queue()
        self.states: list[str] = []
        self.tasks: set[str] = set()
        self.reported_tasks: list[set[str]] = []   # every TASKS line, in order
        self.stderr: collections.deque[str] = collections.deque(maxlen=60)
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=lambda: self.stderr.extend(self.proc.stderr), daemon=True).start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            kind, _, value = line.strip().partition(" ")
            if kind == "STATE":
                self.states.append(value)
            elif kind == "TASKS":
                self.tasks = set(filter(None, value.split(",")))
                self.reported_tasks.append(self.tasks)

    def describe(self) -> str:
        return f"states {self.states}, tasks {sorted(self.tasks)}, stderr:\n" + "".join(self.stderr)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)


def wait_for(condition, what: str, instances) -> None:
    deadline = time.monotonic() + WAIT_S
    while not condition():
        for instance in instances:
            assert instance.proc.poll() is None or instance.proc.returncode == -signal.SIGKILL, (
                f"a WordCountApp ended (exit {instance.proc.returncode}) while waiting for {what}: "
                f"{instance.describe()}")
        assert time.monotonic() < deadline, f"no {what} within {WAIT_S} s: " + " | ".join(
            i.describe() for i in instances)
        time.sleep(0.1)


class CountsReader:
    """The output topic, read_committed, from the beginning: every word's counts in log order."""

    def __init__(self, bootstrap: str, topic: str):
        self.consumer = KafkaConsumer(bootstrap_servers=bootstrap, isolation_level="read_committed",
                                      enable_auto_commit=False, group_id=None)
        self.consumer.assign([TopicPartition(topic, p) for p in range(PARTITIONS)])
        self.consumer.seek_to_beginning()
        self.counts: dict[str, list[int]] = collections.defaultdict(list)

    def poll(self) -> None:
        for records in self.consumer.poll(timeout_ms=200).values():
            for record in records:
                self.counts[record.key.decode()].append(int.from_bytes(record.value, "big", signed=True))

    def reached(self, totals: collections.Counter) -> bool:
        self.poll()
        return all(self.counts[w] and self.counts[w][-1] >= n for w, n in totals.items())

    def close(self) -> None:
        self.consumer.close()


@pytest.fixture(scope="module")
def server():
    """A kafkaemu server process; streams members expire after 6 s, open transactions are aborted
    within a second of their timeout."""
    with KafkaEmulator(subprocess_mode=True, group_streams_session_timeout_ms=6000,
                       group_streams_min_session_timeout_ms=6000, group_streams_heartbeat_interval_ms=1000,
                       group_streams_min_heartbeat_interval_ms=1000,
                       transaction_abort_timed_out_transaction_cleanup_interval_ms=1000) as emulator:
        yield emulator


def test_word_count_survives_kill_9_of_one_instance_with_exact_counts(java_classpath, server, tmp_path):
    bootstrap = server.bootstrap_server
    run = uuid.uuid4().hex[:8]
    app, input_topic, output_topic = f"wordcount-{run}", f"lines-{run}", f"counts-{run}"
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    admin.create_topics([NewTopic(input_topic, PARTITIONS, 1), NewTopic(output_topic, PARTITIONS, 1)])
    admin.close()
    producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all")
    first, second = lines(0, LINES_BEFORE_KILL), lines(LINES_BEFORE_KILL, LINES_AFTER_KILL)

    a = Instance(java_classpath, bootstrap, app, input_topic, output_topic, tmp_path / "a")
    b = Instance(java_classpath, bootstrap, app, input_topic, output_topic, tmp_path / "b")
    reader = CountsReader(bootstrap, output_topic)
    try:
        wait_for(lambda: a.tasks and b.tasks and a.tasks | b.tasks == TASKS and not a.tasks & b.tasks,
                 "split of the 8 tasks between the two instances", [a, b])
        for i, line in enumerate(first):
            producer.send(input_topic, key=str(i).encode(), value=line.encode())
        producer.flush()
        wait_for(lambda: reader.reached(word_totals(first)), "counts of the first lines", [a, b])

        tasks_of_a = set(a.tasks)
        for i, line in enumerate(second[:LINES_AFTER_KILL // 2]):
            producer.send(input_topic, key=str(LINES_BEFORE_KILL + i).encode(), value=line.encode())
        producer.flush()
        os.kill(a.proc.pid, signal.SIGKILL)
        a.proc.wait(10)
        for i, line in enumerate(second[LINES_AFTER_KILL // 2:], start=LINES_AFTER_KILL // 2):
            producer.send(input_topic, key=str(LINES_BEFORE_KILL + i).encode(), value=line.encode())
        producer.flush()

        wait_for(lambda: b.tasks == TASKS, "move of the killed instance's tasks to the survivor", [b])
        assert tasks_of_a and tasks_of_a <= b.tasks
        totals = word_totals(first + second)
        wait_for(lambda: reader.reached(totals), "counts of all lines", [b])
        reader.poll()
        assert {w: reader.counts[w] for w in totals} == {w: list(range(1, n + 1)) for w, n in totals.items()}
        assert set(reader.counts) == set(totals)
    finally:
        producer.close()
        reader.close()
        b.stop()
        a.stop()
