"""Control API numbers for BENCHMARKS.md (``make bench``).

1. Latency of a control call: in-process (KafkaEmulator -> the broker's loop) and over HTTP
   (one keep-alive connection; a new connection per call).
2. Snapshot and restore of 10 topics x 10,000 records (batches of 10, then of 1) and 50 groups
   with committed offsets: time of the operations in the broker (HTTP adds the call latency of 1).
3. Wall time of a 20-test rebalance suite (confluent-kafka consumers: one joins, a second joins, the
   first leaves; each step checked) written with await + reset on one shared emulator, and the same
   suite written with sleeps and a fresh emulator per test.

Arguments: the parts to run (latency, snapshots, suites); default all.
Environment: KAFKAEMU_BENCH_SLEEP_S (default 3): the sleep the sleeping suite uses per step.
"""
from __future__ import annotations

import http.client
import json
import os
import statistics
import sys
import threading
import time
import urllib.request
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from kafkaemu.logging import configure_default_logging  # noqa: E402
from kafkaemu.testing import KafkaEmulator  # noqa: E402

SLEEP_S = float(os.environ.get("KAFKAEMU_BENCH_SLEEP_S", "3"))


def summary(times_ms: list[float]) -> str:
    times = sorted(times_ms)
    p95 = times[int(len(times) * 0.95) - 1]
    return f"median {statistics.median(times):.3f} ms, p95 {p95:.3f} ms (n={len(times)})"


# -- 1. call latency ---------------------------------------------------------------------------
def call_latency() -> None:
    with KafkaEmulator(control_port=0) as e:
        for _ in range(50):
            e.control("clock_get")
        t = []
        for _ in range(1000):
            t0 = time.perf_counter()
            e.control("clock_get")
            t.append((time.perf_counter() - t0) * 1000)
        print(f"in-process clock_get: {summary(t)}")
        host, port = e.control_url.split("//")[1].rsplit(":", 1)
        conn = http.client.HTTPConnection(host, int(port))
        for label, method, path, body in (("GET /api/clock", "GET", "/api/clock", None),
                                          ("GET /api/groups", "GET", "/api/groups", None),
                                          ("POST+DELETE /api/faults", "POST", "/api/faults",
                                           {"api": "Heartbeat", "error": "NOT_COORDINATOR"})):
            t = []
            for _ in range(1000):
                t0 = time.perf_counter()
                conn.request(method, path, body=json.dumps(body) if body else None,
                             headers={"Content-Type": "application/json"} if body else {})
                answer = json.loads(conn.getresponse().read())
                if method == "POST":
                    conn.request("DELETE", f"/api/faults/{answer['id']}")
                    conn.getresponse().read()
                t.append((time.perf_counter() - t0) * 1000)
            print(f"HTTP keep-alive {label}: {summary(t)}")
        conn.close()
        t = []
        for _ in range(300):
            t0 = time.perf_counter()
            urllib.request.urlopen(e.control_url + "/api/clock").read()
            t.append((time.perf_counter() - t0) * 1000)
        print(f"HTTP new connection per call (urllib) GET /api/clock: {summary(t)}")
    # The server in its own process (kafkaemu ctl, subprocess mode): no GIL shared with the caller.
    with KafkaEmulator(control_port=0, subprocess_mode=True) as e:
        host, port = e.control_url.split("//")[1].rsplit(":", 1)
        conn = http.client.HTTPConnection(host, int(port))
        t = []
        for i in range(1200):
            t0 = time.perf_counter()
            conn.request("GET", "/api/clock")
            conn.getresponse().read()
            if i >= 200:
                t.append((time.perf_counter() - t0) * 1000)
        conn.close()
        print(f"HTTP keep-alive GET /api/clock, server in a subprocess: {summary(t)}")


# -- 2. snapshot and restore -------------------------------------------------------------------
def fill(env, topics: int = 10, records: int = 10_000, per_batch: int = 10, groups: int = 50) -> None:
    from control.harness import Client  # tests/control/harness.py: sans-IO clients
    from kafkaemu.storage.record_batch import build_batch
    now = env.clock.now_ms()
    for t in range(topics):
        topic = env.broker.topics.create(f"topic-{t}", 3, {})
        for i in range(0, records, per_batch):
            plog = topic.partitions[(i // per_batch) % 3]
            plog.append(build_batch([(b"k%d" % j, b"v" * 100, [], now) for j in range(i, i + per_batch)]), now)
    for g in range(groups):
        c = Client(env, f"member-{g}")
        group = f"group-{g}"
        c.join(group, topics=[f"topic-{t}" for t in range(topics)])
        mid = c.replies()[-1].member_id
        c.join(group, mid, topics=[f"topic-{t}" for t in range(topics)])
        gen = c.replies()[-1].generation_id
        c.sync(group, gen, mid, {mid: b""})
        c.replies()
        for step in range(1, 4):   # a few commits each, as a consumer commits as it goes
            for t in range(topics):
                c.commit(group, f"topic-{t}", {p: step * 100 for p in range(3)}, gen, mid)


def snapshot_restore() -> None:
    from control.harness import Env
    for per_batch in (10, 1):
        env = Env()
        t0 = time.perf_counter()
        fill(env, per_batch=per_batch)
        print(f"data: 10 topics x 10,000 records (3 partitions, batches of {per_batch}), 50 groups with 3 commits "
              f"each over 30 partitions (filled in {time.perf_counter() - t0:.1f} s)")
        saves, restores = [], []
        for _ in range(20):
            t0 = time.perf_counter()
            env.op("snapshot_save", name="bench")
            saves.append((time.perf_counter() - t0) * 1000)
            t0 = time.perf_counter()
            env.op("snapshot_restore", name="bench")
            restores.append((time.perf_counter() - t0) * 1000)
        assert env.op("group", group="group-7")["offsets"][0]["committed_offset"] == 300
        both = [s + r for s, r in zip(saves, restores)]
        print(f"  snapshot (in the broker): {summary(saves)}")
        print(f"  restore (in the broker, groups reloaded): {summary(restores)}")
        print(f"  snapshot + restore: {summary(both)}")
        t0 = time.perf_counter()
        env.op("reset")
        print(f"  reset: {(time.perf_counter() - t0) * 1000:.3f} ms")


# -- 3. the rebalance suite ----------------------------------------------------------------------
class Consumer(threading.Thread):
    """A confluent-kafka consumer polling on its own thread (librdkafka rebalances in the background)."""

    def __init__(self, bootstrap: str, topic: str, group: str, client_id: str) -> None:
        super().__init__(daemon=True)
        from confluent_kafka import Consumer as CConsumer
        self.consumer = CConsumer({"bootstrap.servers": bootstrap, "group.id": group, "client.id": client_id,
                                   "session.timeout.ms": 6000, "heartbeat.interval.ms": 100,
                                   "enable.auto.commit": False})
        self.consumer.subscribe([topic])
        self.stop_flag = False
        self.start()

    def run(self) -> None:
        while not self.stop_flag:
            self.consumer.poll(0.05)
        self.consumer.close()

    def close(self) -> None:
        self.stop_flag = True
        self.join(30)


def one_test(emulator, wait) -> None:
    """One member joins, a second joins, the first leaves; ``wait(group, members)`` returns the
    group view once it should have settled."""
    topic, group = f"t-{uuid.uuid4().hex[:8]}", f"g-{uuid.uuid4().hex[:8]}"
    emulator.control("topic_create", name=topic, partitions=4)
    a = Consumer(emulator.bootstrap_server, topic, group, "a")
    assert wait(group, 1)["members"][0]["assignment"][0]["partitions"] == [0, 1, 2, 3]
    b = Consumer(emulator.bootstrap_server, topic, group, "b")
    view = wait(group, 2)
    assert sorted(len(m["assignment"][0]["partitions"]) for m in view["members"]) == [2, 2]
    a.close()
    view = wait(group, 1)
    assert [m["client_id"] for m in view["members"]] == ["b"]
    b.close()


def suites(tests: int = 20) -> None:
    with KafkaEmulator() as shared:
        def awaited(group, members):
            return shared.await_group(group, state="Stable", members=members, assigned=True, timeout=60)
        t0 = time.perf_counter()
        for _ in range(tests):
            shared.reset()
            one_test(shared, awaited)
        with_await = time.perf_counter() - t0
    print(f"{tests}-test rebalance suite with await + reset (one emulator): {with_await:.2f} s")

    t0 = time.perf_counter()
    failures = 0
    for _ in range(tests):
        with KafkaEmulator() as fresh:
            def slept(group, members):
                time.sleep(SLEEP_S)
                return fresh.group(group)
            try:
                one_test(fresh, slept)
            except (AssertionError, IndexError):
                failures += 1
    with_sleeps = time.perf_counter() - t0
    print(f"{tests}-test rebalance suite with sleep({SLEEP_S:g}) per step + a fresh emulator per test: "
          f"{with_sleeps:.2f} s ({failures} failed)")
    print(f"await + reset is {with_sleeps / with_await:.1f}x faster")


if __name__ == "__main__":
    configure_default_logging()
    parts = {"latency": call_latency, "snapshots": snapshot_restore, "suites": suites}
    for name in sys.argv[1:] or list(parts):   # e.g. ``bench_control.py latency``: the call latency only
        parts[name]()
