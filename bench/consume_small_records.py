"""Evidence for the side-by-side bench's 100 B consume rows: the same 100 B records (produced as
``bench_data_path.throughput`` produces them, one partition) consumed by confluent-kafka from
kafkaemu, Apache Kafka 4.4 and Tansu in one run, alternating, with the throughput row's settings
(max.partition.fetch.bytes 10 MB, fetch.queue.backoff.ms 10) and with librdkafka's defaults; beside
each run the client's and the broker's CPU, and what the client's own ``debug=fetch,queue`` log
says: how many messages each Fetch response enqueued, and its ``Fetch backoff ...: Local: Queue
full`` pauses (librdkafka stops fetching when its queue holds queued.min.messages, 100,000).

    .venv/bin/python bench/consume_small_records.py [MEGABYTES]
"""
import collections
import logging
import os
import re
import statistics
import sys
import time
from pathlib import Path
HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]
from peer_servers import start_kafkaemu, start_kafka, start_tansu
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient
from bench_data_path import _topic, _cpu_s
from kafkaemu.logging import configure_logging
configure_logging("console", "warning")
SIZE, MB = 100, int(sys.argv[1]) if len(sys.argv) > 1 else 20
count = MB * 1_000_000 // SIZE

class Counter(logging.Handler):
    def __init__(self):
        super().__init__(); self.lines = collections.Counter(); self.fetch_sizes = []; self.raw = []
    def emit(self, r):
        m = r.getMessage()
        if "Queue full" in m: self.lines["queue_full_backoff"] += 1
        mm = re.search(r"Fetch topic .*? at offset \d+ \(leader epoch -?\d+, current version \d+\) .*", m)
        g = re.search(r"Enqueue (\d+) message\(s\) \((\d+) bytes", m)
        if g: self.fetch_sizes.append((int(g.group(1)), int(g.group(2))))
        if "Fetch backoff" in m: self.lines["backoff:" + re.sub(r"\d+ms", "Nms", m.split("Fetch backoff")[1][:60])] += 1

def run(server, admin, extra, label):
    topic = _topic(admin)
    value = (os.urandom(SIZE // 4).hex().encode() + b"x" * SIZE)[:SIZE]
    p = Producer({"bootstrap.servers": server.bootstrap, "linger.ms": 5, "batch.size": 1_000_000,
                  "queue.buffering.max.kbytes": 1_048_576, "queue.buffering.max.messages": 1_000_000,
                  "acks": 1, "enable.idempotence": False})
    for _ in range(count):
        while True:
            try: p.produce(topic, value=value, partition=0); break
            except BufferError: p.poll(0.001)
    p.flush(120)
    h = Counter(); lg = logging.getLogger(f"rk-{label}-{server.name}"); lg.addHandler(h); lg.setLevel(logging.DEBUG); lg.propagate = False
    c = Consumer({"bootstrap.servers": server.bootstrap, "group.id": topic, "enable.auto.commit": False,
                  "debug": "fetch,queue", **extra}, logger=lg)
    c.assign([TopicPartition(topic, 0, 0)])
    got = 0; cpu = _cpu_s(server.pid); t0 = time.perf_counter(); pc0 = time.process_time()
    while got < count:
        for m in c.consume(min(1000, count - got), 5.0):
            if m.error() is None: got += 1
    dt = time.perf_counter() - t0; ccpu = time.process_time() - pc0; scpu = _cpu_s(server.pid) - cpu
    c.close()
    sizes = h.fetch_sizes
    msgs = [s[0] for s in sizes]
    print(f"{server.name:9} {label:28} {MB/dt:6.1f} MB/s  {count/dt/1000:6.0f}k rec/s  client CPU {ccpu/dt*100:4.0f}%  broker CPU {scpu*1000/MB:5.1f} ms/MB  "
          f"fetch responses {len(sizes)}, median {statistics.median(msgs) if msgs else 0} msgs  {dict(h.lines)}", flush=True)

servers = [start_kafkaemu()[0], start_kafka()]
t = start_tansu()
if not isinstance(t, str): servers.append(t)
try:
    admins = {s.name: AdminClient({"bootstrap.servers": s.bootstrap}) for s in servers}
    for rep in range(2):
        for s in (servers if rep % 2 == 0 else servers[::-1]):
            run(s, admins[s.name], {"fetch.max.bytes": 52_428_800, "max.partition.fetch.bytes": 10_485_760, "fetch.queue.backoff.ms": 10}, "bench_data_path settings")
            run(s, admins[s.name], {}, "librdkafka defaults")
finally:
    for s in servers: s.stop()
