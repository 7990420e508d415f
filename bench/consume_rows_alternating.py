"""Evidence for the side-by-side bench's throughput rows where kafkaemu was behind Apache Kafka 4.4
in a single run (issue 31): one row, run against kafkaemu and Kafka alternating (the order flipping
every round), several runs each, with the median and spread per broker, and what the client saw.

- consume_order rows (``bench/consume_order.py``'s code): for kafka-python, the Fetch responses'
  shape as kafka-python's own Fetcher received them (partitions asked and answered, bytes, record
  batches and records per partition, the bytes of a trailing partial batch, the time from send to
  handling); for confluent-kafka, its ``debug=fetch`` "Local: Queue full" fetch backoffs.
- the first table's confluent-kafka 100 B produce/consume row (``bench_data_path.throughput``).

Beside each run the client process's CPU per MB and, from Linux's schedstat, the share of the wall
time its threads were on a CPU or waiting for one: what is left is time the client waited on the
broker.

    .venv/bin/python bench/consume_rows_alternating.py order kafka-python 100 3 closed [--runs 6] [--mb 15]
    .venv/bin/python bench/consume_rows_alternating.py order kafka-python 100 3 closed --fetch-max-wait-ms 10
    .venv/bin/python bench/consume_rows_alternating.py throughput confluent-kafka 100 [--runs 6] [--mb 50]
    .venv/bin/python bench/consume_rows_alternating.py throughput kafka-python 1024 [--runs 6] [--mb 50]
"""
from __future__ import annotations

import argparse
import collections
import re
import statistics
import struct
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]

import bench_data_path  # noqa: E402
import bench_peer  # noqa: E402
import consume_order  # noqa: E402
from peer_servers import start_kafka, start_kafkaemu  # noqa: E402

FETCHES: list[dict] = []     # kafka-python's Fetch answers in the current run
ENQUEUED: list[int] = []     # librdkafka's messages enqueued per Fetch answer in the current run
CLIENT: dict = {}            # the client process's CPU, wall and scheduling figures of the current run


class _FetchLog(consume_order.QueueFullCounter):
    """consume_order's queue-full counter, also noting how many messages each Fetch answer put on
    librdkafka's queue (its ``Enqueue N message(s)`` debug lines)."""

    def emit(self, record) -> None:
        super().emit(record)
        found = re.search(r"Enqueue (\d+) message", record.getMessage())
        if found:
            ENQUEUED.append(int(found.group(1)))


def _log_confluent_fetches() -> None:
    consume_order.QueueFullCounter = _FetchLog
    consume = consume_order._consume_confluent

    def with_queue_debug(bootstrap, topic, count, partitions, extra, pauses=None):
        return consume(bootstrap, topic, count, partitions, {**extra, "debug": "fetch,queue"}, pauses)
    consume_order._consume_confluent = with_queue_debug


def _schedstat() -> dict[str, tuple[int, int]]:
    """Each thread of this process: (ns on a CPU, ns runnable but waiting for one), from Linux's
    /proc/self/task/*/schedstat."""
    found = {}
    for task in Path("/proc/self/task").iterdir():
        try:
            on_cpu, waiting, _ = (task / "schedstat").read_text().split()
        except (OSError, ValueError):
            continue
        found[task.name] = (int(on_cpu), int(waiting))
    return found


def _note_schedstat(before: dict, wall_s: float) -> None:
    """The consuming process's threads between ``before`` and now: the share of the wall time they
    ran and the share they were runnable but waiting for a CPU (the machine's load). A client that
    never waits on the broker is one or the other all the time (GIL-bound Python: about 100% in
    all); what is left is time it waited on the network."""
    after = _schedstat()
    on_cpu = sum(a[0] - before.get(t, (0, 0))[0] for t, a in after.items())
    waiting = sum(a[1] - before.get(t, (0, 0))[1] for t, a in after.items())
    CLIENT["sched"] = (on_cpu / 1e9 / wall_s * 100, waiting / 1e9 / wall_s * 100)


def _instrument_throughput_consumer() -> None:
    """bench_data_path.throughput's consumer, with its ``debug=fetch,queue`` log counted and the
    process's CPU and wall seconds from its first consume() to its close() noted."""
    import logging
    from confluent_kafka import Consumer

    class Instrumented(Consumer):
        def __init__(self, config):
            log = logging.getLogger("consume_rows_alternating.throughput")
            log.propagate = False
            log.setLevel(logging.DEBUG)
            self.log = _FetchLog()
            log.handlers[:] = [self.log]
            super().__init__({**config, "debug": "fetch,queue"}, logger=log)
            self.started = None

        def consume(self, *args, **kwargs):
            if self.started is None:
                self.started = (time.process_time(), time.perf_counter())
                self.sched = _schedstat()
            return super().consume(*args, **kwargs)

        def close(self):
            CLIENT["cpu_s"] = time.process_time() - self.started[0]
            CLIENT["wall_s"] = time.perf_counter() - self.started[1]
            CLIENT["queue_full"] = self.log.count
            _note_schedstat(self.sched, CLIENT["wall_s"])
            return super().close()
    bench_data_path.Consumer = Instrumented

    from confluent_kafka import Producer

    class TimedProducer(Producer):
        """Notes the process's CPU and wall seconds from its creation to the end of its flush()."""

        def __init__(self, config):
            super().__init__(config)
            self.started = (time.process_time(), time.perf_counter())

        def flush(self, *args):
            left = super().flush(*args)
            CLIENT["produce_cpu_s"] = time.process_time() - self.started[0]
            CLIENT["produce_wall_s"] = time.perf_counter() - self.started[1]
            return left
    bench_data_path.Producer = TimedProducer


def _time_consume(name: str) -> None:
    """Wraps consume_order's consume loop to note the consuming process's CPU seconds and the wall
    seconds it took (the producer, closed or idle, does nothing meanwhile)."""
    consume = getattr(consume_order, name)

    def timed(*args, **kwargs):
        cpu, wall = time.process_time(), time.perf_counter()
        CLIENT["sched_before"], CLIENT["sched_wall"] = _schedstat(), wall
        took = consume(*args, **kwargs)
        CLIENT["cpu_s"], CLIENT["wall_s"] = time.process_time() - cpu, time.perf_counter() - wall
        return took
    setattr(consume_order, name, timed)


def _delete_bench_topics(admin) -> None:
    """bench_data_path.throughput leaves its topic; the brokers need not hold every run's records."""
    names = [t for t in admin.list_topics(timeout=10).topics if t.startswith("bench-")]
    if names:
        for done in admin.delete_topics(names, operation_timeout=10).values():
            done.result(20)


def _batches(records: bytes) -> tuple[int, int, int]:
    """(whole record batches, records in them, bytes of a trailing partial batch) of a partition's
    Fetch answer (magic 2 batches: length at byte 8, record count at byte 57)."""
    pos = batches = records_n = 0
    while pos + 61 <= len(records):
        length = struct.unpack_from(">i", records, pos + 8)[0]
        if pos + 12 + length > len(records):
            break
        records_n += struct.unpack_from(">i", records, pos + 57)[0]
        batches += 1
        pos += 12 + length
    return batches, records_n, len(records) - pos


def _record_kafka_python_fetches() -> None:
    from kafka.consumer import fetcher
    handle = fetcher.Fetcher._handle_fetch_response

    def recording(self, node_id, fetch_offsets, send_time, response):
        now = time.monotonic()
        parts = []
        for topic in response.responses:
            for p in topic.partitions:
                data = bytes(p.records or b"")
                parts.append((p.partition_index, len(data), *_batches(data)))
        FETCHES.append({"at": now, "ms": (now - send_time) * 1000, "asked": len(fetch_offsets), "parts": parts,
                        "offsets": dict(fetch_offsets)})
        return handle(self, node_id, fetch_offsets, send_time, response)
    fetcher.Fetcher._handle_fetch_response = recording


def _kafka_python_schedstat_at_close() -> None:
    import kafka
    close = kafka.KafkaConsumer.close

    def noting(self, *args, **kwargs):
        if "sched_before" in CLIENT:   # consume_order's loop, not the throughput table's
            _note_schedstat(CLIENT.pop("sched_before"), time.perf_counter() - CLIENT["sched_wall"])
        return close(self, *args, **kwargs)
    kafka.KafkaConsumer.close = noting


def _kafka_python_fetch_max_wait(ms: int) -> None:
    import kafka

    class Consumer(kafka.KafkaConsumer):
        def __init__(self, *topics, **configs):
            super().__init__(*topics, **{**configs, "fetch_max_wait_ms": ms})
    kafka.KafkaConsumer = Consumer


def _fetch_summary() -> str:
    if ENQUEUED:
        return (f"Fetch answers enqueued {len(ENQUEUED)}, messages per answer median "
                f"{statistics.median(ENQUEUED):,.0f} (max {max(ENQUEUED):,})")
    if not FETCHES:
        return ""
    full = [p for f in FETCHES for p in f["parts"] if p[1]]
    empty = sum(1 for f in FETCHES for p in f["parts"] if not p[1])
    waited = [f for f in FETCHES if f["ms"] >= 400 and not any(p[1] for p in f["parts"])]
    med = lambda xs: statistics.median(xs) if xs else 0  # noqa: E731
    return (f"fetches {len(FETCHES)}; partitions asked {dict(sorted(collections.Counter(f['asked'] for f in FETCHES).items()))}, "
            f"answered {dict(sorted(collections.Counter(len(f['parts']) for f in FETCHES).items()))}, empty {empty}; "
            f"per partition: bytes {med([p[1] for p in full]):,.0f}, batches {med([p[2] for p in full])}, "
            f"records {med([p[3] for p in full]):,.0f}, partial tail {med([p[4] for p in full]):,.0f} B; "
            f"send to handled ms: median {med([f['ms'] for f in FETCHES]):.0f}, max {max(f['ms'] for f in FETCHES):.0f}; "
            f"answered empty after >= 400 ms (the client's fetch_max_wait_ms, 500): {len(waited)}, "
            f"{sum(f['ms'] for f in waited) / 1000:.2f} s, asking {[sorted(f['offsets'].values()) for f in waited]}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("kind", choices=("order", "throughput"))
    ap.add_argument("consumer", help="kafka-python, confluent-kafka or 'confluent-kafka, fetch.queue.backoff.ms=10'")
    ap.add_argument("size", type=int)
    ap.add_argument("partitions", type=int, nargs="?", default=1)
    ap.add_argument("order", nargs="?", default="closed")
    ap.add_argument("--runs", type=int, default=6)
    ap.add_argument("--fetch-max-wait-ms", type=int,
                    help="kafka-python's fetch_max_wait_ms (default: its own, 500), to show what its long polls cost")
    ap.add_argument("--mb", type=float, help="megabytes per run (default: bench_peer's at --scale 0.5)")
    args = ap.parse_args()
    from confluent_kafka.admin import AdminClient
    from kafkaemu.logging import configure_logging
    configure_logging("console", "warning")
    if args.consumer == "kafka-python":
        _record_kafka_python_fetches()
        _kafka_python_schedstat_at_close()
        if args.fetch_max_wait_ms is not None:
            _kafka_python_fetch_max_wait(args.fetch_max_wait_ms)
    else:
        _log_confluent_fetches()
    _instrument_throughput_consumer()
    _time_consume("_consume_kafka_python")
    _time_consume("_consume_confluent")
    sizes = dict(consume_order.RECORD_SIZES)
    mb = args.mb or (sizes[args.size] * 0.5 if args.kind == "order" else 50)
    servers = [start_kafkaemu()[0]]
    kafka = start_kafka()
    if isinstance(kafka, str):
        sys.exit(f"Kafka did not start: {kafka}")
    servers.append(kafka)
    results: dict[str, list] = {s.name: [] for s in servers}
    try:
        admins = {s.name: AdminClient({"bootstrap.servers": s.bootstrap}) for s in servers}
        for rep in range(args.runs):
            for s in (servers if rep % 2 == 0 else servers[::-1]):
                FETCHES.clear()
                ENQUEUED.clear()
                pauses: list = []
                if args.kind == "order":
                    rate, broker_cpu = consume_order.run(
                        s.bootstrap, admins[s.name], args.order, args.consumer, args.size, mb, args.partitions,
                        (lambda s=s: bench_data_path._cpu_s(s.pid)) if s.pid else None, pauses=pauses)
                    megabytes = consume_order.record_count(mb, args.size) * args.size / 1e6
                    line = (f"{rate:7.1f} MB/s, client CPU {CLIENT['cpu_s'] / CLIENT['wall_s'] * 100:3.0f}% "
                            f"({CLIENT['cpu_s'] * 1000 / megabytes:4.0f} ms per MB)"
                            + (f", broker CPU {broker_cpu:.2f} ms per MB" if broker_cpu is not None else ""))
                elif args.consumer == "kafka-python":
                    r = bench_peer.kafka_python_throughput(s.bootstrap, admins[s.name], args.size, int(mb),
                                                           server_pid=s.pid)
                    _delete_bench_topics(admins[s.name])
                    rate = (r["produce_mb_s"], r["consume_mb_s"])
                    line = (f"produce {r['produce_mb_s']:6.1f} MB/s ({r.get('server_produce_cpu_ms_per_mb', 0):.2f} "
                            f"ms/MB); consume {r['consume_mb_s']:6.1f} MB/s "
                            f"({r.get('server_consume_cpu_ms_per_mb', 0):.2f} ms/MB)")
                else:
                    r = bench_data_path.throughput(s.bootstrap, admins[s.name], args.size, int(mb), server_pid=s.pid)
                    _delete_bench_topics(admins[s.name])
                    rate = (r["produce_mb_s"], r["consume_mb_s"])
                    line = (f"produce {r['produce_mb_s']:6.1f} MB/s ({r.get('server_produce_cpu_ms_per_mb')} ms/MB), "
                            f"client CPU {CLIENT['produce_cpu_s'] / CLIENT['produce_wall_s'] * 100:3.0f}% "
                            f"({CLIENT['produce_cpu_s'] * 1000 / r['megabytes']:4.1f} ms per MB); "
                            f"consume {r['consume_mb_s']:6.1f} MB/s ({r.get('server_consume_cpu_ms_per_mb')} ms/MB), "
                            f"client CPU {CLIENT['cpu_s'] / CLIENT['wall_s'] * 100:3.0f}% "
                            f"({CLIENT['cpu_s'] * 1000 / r['megabytes']:4.1f} ms per MB); "
                            f"queue-full backoff lines {CLIENT['queue_full']}")
                if "sched" in CLIENT:
                    line += " [threads on a CPU {:.0f}%, waiting for one {:.0f}%]".format(*CLIENT.pop("sched"))
                results[s.name].append(rate)
                extra = f"; queue-full backoff lines {pauses[0]}" if pauses else ""
                print(f"run {rep + 1} {s.name:8} {line}{extra}  {_fetch_summary()}", flush=True)
    finally:
        for s in servers:
            s.stop()
    for name, rates in results.items():
        columns = list(zip(*rates)) if rates and isinstance(rates[0], tuple) else [rates]
        text = "; ".join(f"median {statistics.median(c):.1f} ({min(c):.1f}-{max(c):.1f})" for c in columns)
        print(f"{name:8} {text}   runs: {', '.join(str(r) for r in rates)}")


if __name__ == "__main__":
    main()
