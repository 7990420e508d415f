"""Data-path benchmark: produce and consume throughput with confluent-kafka (100 B, 1 KB and
10 KB records uncompressed, 100 B records lz4-compressed) and Fetch long-poll wake-up latency,
against kafkaemu as a subprocess (its own core) on loopback; and the server's own CPU cost of a
Produce request carrying one ~1 MB batch (decode, validation, append; no sockets, no client) in
each codec, and of Fetch requests (one 10 MB partition; 1,000 partitions), the stable numbers to
compare data-path changes by. Prints one line per measurement; ``--json`` prints a JSON document
instead. ``--sizes 100,1000`` runs only those throughput rows; ``--no-server`` / ``--server-only``
skip one half.

    .venv/bin/python bench/bench_data_path.py [--mb 200] [--sizes 100,1000,10240] [--json]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
import uuid

from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from kafkaemu.testing import KafkaEmulator


def _topic(admin, partitions=1):
    name = f"bench-{uuid.uuid4().hex[:8]}"
    admin.create_topics([NewTopic(name, partitions, 1)])[name].result(10)
    return name


# (record bytes, compression codec) of each throughput run
RUNS = ((100, "none"), (1_000, "none"), (10_240, "none"), (100, "lz4"))
# server-side Produce cost only: the other codecs
SERVER_ONLY_RUNS = ((100, "zstd"), (100, "snappy"), (100, "gzip"), (1_000, "lz4"))
# server-side Fetch cost: (name, partitions, records per partition, record bytes)
FETCH_SHAPES = (("fetch_10mb_10kb", 1, 1067, 10_240), ("fetch_1000_partitions", 1000, 10, 100))
# producers whose server-side Produce cost is compared (1,000 100 B records per request)
PRODUCER_MODES = ("plain", "idempotent", "transactional")


def _cpu_s(pid: int | None) -> float:
    """CPU seconds (user + system) the process has used so far; 0 without a pid."""
    if pid is None:
        return 0.0
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def throughput(bootstrap: str, admin, record_size: int, total_mb: int, compression: str = "none",
               server_pid: int | None = None) -> dict:
    """MB/s produced and consumed; with ``server_pid``, also the server's CPU ms per MB of each
    (steadier than MB/s on a shared machine: the client is most of the work)."""
    from consume_order import cpu_wait_ns
    topic = _topic(admin)
    count = max(1000, total_mb * 1_000_000 // record_size)
    # half hex text, half repeated: compresses about 2:1, as typical payloads do
    value = (os.urandom(record_size // 4).hex().encode() + b"x" * record_size)[:record_size]
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5, "batch.size": 1_000_000,
                         "queue.buffering.max.kbytes": 1_048_576, "queue.buffering.max.messages": 1_000_000,
                         "acks": 1, "enable.idempotence": False, "compression.type": compression})
    cpu = _cpu_s(server_pid)
    client_cpu = time.process_time()
    waited = cpu_wait_ns()
    start = time.perf_counter()
    for _ in range(count):
        while True:
            try:
                producer.produce(topic, value=value, partition=0)
                break
            except BufferError:
                producer.poll(0.001)
    if producer.flush(120) != 0:
        raise RuntimeError("producer did not flush")
    produce_s = time.perf_counter() - start
    produce_cpu = _cpu_s(server_pid) - cpu
    client_produce_cpu = time.process_time() - client_cpu
    produce_wait = cpu_wait_ns() - waited

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": topic, "enable.auto.commit": False,
                         "fetch.max.bytes": 52_428_800, "max.partition.fetch.bytes": 10_485_760,
                         # librdkafka pauses fetching 1 s when its local queue is full; the client
                         # is what we would measure then, not the broker
                         "fetch.queue.backoff.ms": 10})
    consumer.assign([TopicPartition(topic, 0, 0)])
    got = 0
    cpu = _cpu_s(server_pid)
    client_cpu = time.process_time()
    waited = cpu_wait_ns()
    start = time.perf_counter()
    while got < count:
        for m in consumer.consume(min(1000, count - got), 5.0):
            if m.error() is None:
                got += 1
    consume_s = time.perf_counter() - start
    consume_cpu = _cpu_s(server_pid) - cpu
    client_consume_cpu = time.process_time() - client_cpu
    consume_wait = cpu_wait_ns() - waited
    consumer.close()
    mb = count * record_size / 1e6
    out = {"record_bytes": record_size, "compression": compression, "records": count, "megabytes": round(mb, 1),
           "produce_mb_s": round(mb / produce_s, 1), "produce_records_s": round(count / produce_s),
           "consume_mb_s": round(mb / consume_s, 1), "consume_records_s": round(count / consume_s),
           # the client process's every thread, as a share of one core
           "client_produce_cpu": round(client_produce_cpu / produce_s, 2),
           "client_consume_cpu": round(client_consume_cpu / consume_s, 2),
           # and the share of the wall time its threads were runnable but waiting for a CPU
           "client_produce_cpu_wait": round(produce_wait / 1e9 / produce_s, 2),
           "client_consume_cpu_wait": round(consume_wait / 1e9 / consume_s, 2)}
    if server_pid is not None:
        out["server_produce_cpu_ms_per_mb"] = round(produce_cpu * 1000 / mb, 2)
        out["server_consume_cpu_ms_per_mb"] = round(consume_cpu * 1000 / mb, 2)
    return out


def wakeup_latency(bootstrap: str, admin, rounds: int = 30) -> dict:
    """Time from produce() of one record to a consumer parked in a 5 s long poll receiving it."""
    topic = _topic(admin)
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0, "acks": 1})
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": topic, "fetch.wait.max.ms": 5000,
                         "fetch.min.bytes": 1, "fetch.error.backoff.ms": 0})
    consumer.assign([TopicPartition(topic, 0, 0)])
    producer.produce(topic, value=b"warm-up", partition=0)
    producer.flush(5)
    while consumer.poll(1.0) is None:
        pass
    samples = []
    for _ in range(rounds):
        consumer.poll(0.2)  # let the next fetch park on the broker
        sent = time.perf_counter()
        producer.produce(topic, value=b"ping", partition=0)
        producer.poll(0)
        msg = None
        while msg is None:
            msg = consumer.poll(6.0)
        samples.append((time.perf_counter() - sent) * 1000)
    consumer.close()
    producer.flush(5)
    samples.sort()
    return {"rounds": rounds, "median_ms": round(statistics.median(samples), 2),
            "p95_ms": round(samples[int(len(samples) * 0.95) - 1], 2), "max_ms": round(samples[-1], 2),
            "long_poll_max_wait_ms": 5000}


def server_produce_cost(record_size: int, codec: str, rounds: int = 60, mode: str = "plain",
                        count: int | None = None) -> dict:
    """Median CPU time the broker takes to handle a Produce request holding one batch (~1 MB
    unless ``count`` records), through the sans-IO connection (frame decode, request decode,
    validation, append, response encode). ``mode``: plain, idempotent (one producer, running
    sequences) or transactional (each request one transaction of that producer, its commit
    marker written in the timed step too)."""
    from kafkaemu.broker import Broker
    from kafkaemu.config import BrokerConfig
    from kafkaemu.handlers import REGISTRY
    from kafkaemu.logging import configure_logging
    from kafkaemu.storage import compression
    from kafkaemu.storage.record_batch import build_batch
    from kafkaemu.testing.raw_client import encode_request
    from kafkaemu.wire.connection import Connection
    configure_logging("console", "warning")
    now = int(time.time() * 1000)
    count = count or max(1, 1_000_000 // (record_size + 10))
    value = (os.urandom(record_size // 4).hex().encode() + b"x" * record_size)[:record_size]
    code = {name: c for c, name in compression.NAMES.items()}[codec]
    records = [(None, value, [], now + i // 100) for i in range(count)]
    pid = 1000
    requests = []
    for r in range(rounds if mode != "plain" else 1):
        producer = {} if mode == "plain" else {"producer_id": pid, "producer_epoch": 0, "base_sequence": r * count,
                                               "transactional": mode == "transactional"}
        batch = build_batch(records, codec=code, **producer)
        requests.append(encode_request(0, 9, {"transactional_id": "bench" if mode == "transactional" else None,
                                              "acks": 1, "timeout_ms": 30000, "topic_data": [
            {"name": "t", "partition_data": [{"index": 0, "records": batch}]}]}, correlation_id=r + 1))
    # no KIP-890 verification: this producer's transactions are not registered with the coordinator
    broker = Broker(BrokerConfig(message_max_bytes=10_000_000, transaction_partition_verification_enable=False), now)
    plog = broker.topics.create("t", 1, {}).partitions[0]
    conn = Connection(broker, REGISTRY, 1, "127.0.0.1")
    samples = []
    for r in range(rounds):
        request = requests[r % len(requests)]
        start = time.thread_time()     # CPU time: steadier than wall time on a shared machine
        conn.receive(request, now)
        conn.take_output()
        if mode == "transactional":
            plog.append_control_batch(pid, 0, True, 0, now)
        samples.append(time.thread_time() - start)
    if plog.high_watermark != rounds * count + (rounds if mode == "transactional" else 0):
        raise RuntimeError(f"{mode} produce was not appended")
    med = statistics.median(samples)
    return {"record_bytes": record_size, "compression": codec, "mode": mode, "records": count,
            "batch_bytes": len(batch),
            "ms_per_request": round(med * 1000, 3), "records_s": round(count / med)}


def server_fetch_cost(name: str, partitions: int, records: int, record_size: int, rounds: int = 40) -> dict:
    """Median CPU time the broker takes to answer a Fetch (v12, read_uncommitted, from offset 0,
    every partition's data up to 10 MB each) through the sans-IO connection: request decode,
    reads, response encode."""
    from kafkaemu.broker import Broker
    from kafkaemu.config import BrokerConfig
    from kafkaemu.handlers import REGISTRY
    from kafkaemu.logging import configure_logging
    from kafkaemu.storage.record_batch import build_batch
    from kafkaemu.testing.raw_client import encode_request
    from kafkaemu.wire.connection import Connection
    configure_logging("console", "warning")
    now = int(time.time() * 1000)
    broker = Broker(BrokerConfig(message_max_bytes=10_000_000), now)
    topic = broker.topics.create("t", partitions, {})
    per_batch = max(1, min(records, 1_000_000 // (record_size + 10)))
    batch = build_batch([(None, os.urandom(record_size), [], now)] * per_batch)
    for plog in topic.partitions:
        for _ in range(max(1, records // per_batch)):
            plog.append(batch, now)
    body = {"replica_id": -1, "max_wait_ms": 0, "min_bytes": 1, "max_bytes": 52_428_800, "isolation_level": 0,
            "session_id": 0, "session_epoch": -1, "rack_id": "", "forgotten_topics_data": [],
            "topics": [{"topic": "t", "topic_id": topic.topic_id, "partitions": [
                {"partition": p, "current_leader_epoch": -1, "fetch_offset": 0, "last_fetched_epoch": -1,
                 "log_start_offset": -1, "partition_max_bytes": 10_485_760} for p in range(partitions)]}]}
    request = encode_request(1, 12, body, correlation_id=1)
    conn = Connection(broker, REGISTRY, 1, "127.0.0.1")
    samples = []
    size = 0
    for _ in range(rounds):
        start = time.thread_time()
        conn.receive(request, now)
        size = len(conn.take_output())
        samples.append(time.thread_time() - start)
    med = statistics.median(samples)
    return {"name": name, "partitions": partitions, "response_bytes": size, "ms_per_request": round(med * 1000, 3)}


def _run_name(size: int, codec: str) -> str:
    return f"throughput_{size}b" + ("" if codec == "none" else f"_{codec}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=200, help="megabytes per throughput run (default 200)")
    parser.add_argument("--sizes", default="", help="comma-separated record sizes of the throughput runs to do")
    parser.add_argument("--no-server", action="store_true", help="skip the server-side cost measurements")
    parser.add_argument("--server-only", action="store_true", help="only the server-side cost measurements")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    sizes = {int(x) for x in args.sizes.split(",") if x}
    runs = [(size, codec) for size, codec in RUNS if not sizes or size in sizes] if not args.server_only else []
    results = {}
    if runs:
        with KafkaEmulator(subprocess_mode=True) as emu:
            admin = AdminClient({"bootstrap.servers": emu.bootstrap_server})
            pid = getattr(getattr(emu, "_proc", None), "pid", None) if os.path.isdir("/proc") else None
            for size, codec in runs:
                results[_run_name(size, codec)] = throughput(emu.bootstrap_server, admin, size,
                                                             args.mb if size > 100 else max(args.mb // 4, 1), codec,
                                                             server_pid=pid)
            if not sizes:
                results["long_poll_wakeup"] = wakeup_latency(emu.bootstrap_server, admin)
    server_runs = () if args.no_server else RUNS + SERVER_ONLY_RUNS
    if server_runs:   # the server-side costs run in this process: with the allocator as `kafkaemu serve` sets it
        try:
            from kafkaemu.allocator import keep_large_buffers
        except ImportError:   # a tree before it
            pass
        else:
            keep_large_buffers()
    for size, codec in server_runs:
        results["server_" + _run_name(size, codec)] = server_produce_cost(size, codec)
    if not args.no_server:
        for mode in PRODUCER_MODES:
            results[f"server_{mode}_1000x100b"] = server_produce_cost(100, "none", rounds=400, mode=mode, count=1000)
        for shape in FETCH_SHAPES:
            results["server_" + shape[0]] = server_fetch_cost(*shape)
    if args.json:
        json.dump(results, sys.stdout, indent=2)
        print()
        return 0
    for size, codec in runs:
        r = results[_run_name(size, codec)]
        print(f"confluent-kafka {size:>6} B records, {codec:<4} ({r['records']} records, {r['megabytes']} MB): "
              f"produce {r['produce_mb_s']} MB/s {r['produce_records_s']} rec/s; "
              f"consume {r['consume_mb_s']} MB/s {r['consume_records_s']} rec/s"
              + (f"; server CPU per MB: produce {r['server_produce_cpu_ms_per_mb']} ms, consume "
                 f"{r['server_consume_cpu_ms_per_mb']} ms" if "server_produce_cpu_ms_per_mb" in r else ""))
    w = results.get("long_poll_wakeup")
    if w:
        print(f"fetch long-poll wake-up (max_wait {w['long_poll_max_wait_ms']} ms, {w['rounds']} rounds): "
              f"median {w['median_ms']} ms, p95 {w['p95_ms']} ms, max {w['max_ms']} ms")
    for size, codec in server_runs:
        r = results["server_" + _run_name(size, codec)]
        print(f"server side, Produce of one {r['batch_bytes']} B batch of {r['records']} {size} B records, {codec}: "
              f"{r['ms_per_request']} ms CPU median, {r['records_s']} rec/s")
    for mode in PRODUCER_MODES if server_runs else ():
        r = results[f"server_{mode}_1000x100b"]
        print(f"server side, {mode} Produce of one batch of {r['records']} 100 B records"
              f"{' + its commit marker' if mode == 'transactional' else ''}: "
              f"{r['ms_per_request']} ms CPU median, {r['records_s']} rec/s")
    for shape in FETCH_SHAPES if server_runs else ():
        r = results["server_" + shape[0]]
        print(f"server side, Fetch of {r['partitions']} partition(s), {r['response_bytes']} B response: "
              f"{r['ms_per_request']} ms CPU median")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
