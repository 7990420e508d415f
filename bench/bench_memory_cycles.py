"""Resident memory over produce / consume / delete cycles: `kafkaemu serve` (through
``KafkaEmulator(subprocess_mode=True)``, so with the allocator settings of ``allocator.py``) gets
``--mb`` MB of 10 KB records produced into two 2-partition topics with confluent-kafka, consumed
back, and the topics deleted, ``--cycles`` times; the server's VmRSS is read after each step. A
server that lets go of a deleted topic's data stays near one cycle's peak however many cycles run;
one that keeps it grows by about ``--mb`` a cycle. Linux only (/proc).

    .venv/bin/python bench/bench_memory_cycles.py [--mb 100] [--cycles 5] [--json]
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
import uuid

from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from kafkaemu.testing import KafkaEmulator

RECORD = 10_240


def rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return round(int(line.split()[1]) / 1024, 1)
    raise RuntimeError("no VmRSS")


def produce(bootstrap: str, topics: list[str], count: int) -> None:
    value = (os.urandom(RECORD // 4).hex().encode() + b"x" * RECORD)[:RECORD]
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5, "batch.size": 1 << 20,
                         "queue.buffering.max.kbytes": 1 << 20})
    for i in range(count):
        while True:
            try:
                producer.produce(topics[i % len(topics)], value)
                break
            except BufferError:
                producer.poll(0.05)
    if producer.flush(120):
        raise RuntimeError("records left unsent")


def consume(bootstrap: str, topics: list[str], partitions: int, count: int) -> None:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"bench-{uuid.uuid4().hex[:8]}",
                         "enable.auto.commit": False, "auto.offset.reset": "earliest"})
    consumer.assign([TopicPartition(t, p, 0) for t in topics for p in range(partitions)])
    got = 0
    deadline = time.monotonic() + 300
    try:
        while got < count:
            if time.monotonic() > deadline:
                raise RuntimeError(f"consumed {got} of {count} records")
            got += sum(1 for m in consumer.consume(1000, 1) if not m.error())
    finally:
        consumer.close()


def delete(admin, topics: list[str]) -> None:
    for future in admin.delete_topics(topics).values():
        future.result(30)
    while any(t in admin.list_topics(timeout=10).topics for t in topics):
        time.sleep(0.1)


def run(mb: int, cycles: int) -> dict:
    count = mb * 1_000_000 // RECORD
    rows = []
    with KafkaEmulator(subprocess_mode=True) as emu:
        pid = emu._proc.pid
        admin = AdminClient({"bootstrap.servers": emu.bootstrap_server})
        started = rss_mb(pid)
        for _ in range(cycles):
            topics = [f"mem-{uuid.uuid4().hex[:8]}" for _ in range(2)]
            for future in admin.create_topics([NewTopic(t, 2, 1) for t in topics]).values():
                future.result(30)
            produce(emu.bootstrap_server, topics, count)
            produced = rss_mb(pid)
            consume(emu.bootstrap_server, topics, 2, count)
            consumed = rss_mb(pid)
            delete(admin, topics)
            time.sleep(1)   # the deletion's answer is sent before the server's loop goes idle
            rows.append({"produced": produced, "consumed": consumed, "deleted": rss_mb(pid)})
    return {"megabytes_per_cycle": mb, "records_per_cycle": count, "record_bytes": RECORD, "started": started,
            "cycles": rows}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=100, help="megabytes produced per cycle (default 100)")
    parser.add_argument("--cycles", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if not os.path.isdir("/proc"):
        print("bench_memory_cycles: needs /proc (Linux) to read the server's RSS; skipped")
        return 0
    result = run(args.mb, args.cycles)
    if args.json:
        json.dump(result, sys.stdout, indent=2)
        print()
        return 0
    print(f"kafkaemu serve RSS over produce/consume/delete cycles of {args.mb} MB "
          f"({result['records_per_cycle']} records of {RECORD} B): started {result['started']} MB")
    for i, row in enumerate(result["cycles"], 1):
        print(f"  cycle {i}: produced {row['produced']} MB, consumed {row['consumed']} MB, "
              f"topics deleted {row['deleted']} MB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
