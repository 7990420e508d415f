"""Share-group throughput for BENCHMARKS.md (``make bench``): 1 KB records read by 3 confluent-kafka
ShareConsumers (implicit acknowledgement) in one share group, beside 3 classic consumers in one
consumer group reading the same records, in-process emulator, one client process (each consumer
on its own thread). Records are appended broker-side first, so only consuming is measured: from
the consumers' subscribe to the last record received (includes joining the group)."""
from __future__ import annotations

import argparse
import statistics
import sys
import threading
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from kafkaemu.storage.record_batch import build_batch  # noqa: E402
from kafkaemu.testing import KafkaEmulator  # noqa: E402

PARTITIONS = 3
CONSUMERS = 3


def fill(emulator, topic: str, records: int, size: int) -> None:
    value = b"x" * size

    def run(broker):
        t = broker.store.get(topic)
        now = int(time.time() * 1000)
        per = records // PARTITIONS
        for p in t.partitions:
            for start in range(0, per, 100):
                n = min(100, per - start)
                p.append(build_batch([(None, value, (), now)] * n), now)
    emulator.call(run)


def consume(make, records: int) -> float:
    """Seconds until ``CONSUMERS`` consumers built by ``make`` received ``records`` records."""
    import confluent_kafka  # noqa: F401
    got = [0] * CONSUMERS
    done = threading.Event()
    t0 = time.perf_counter()

    def member(i: int) -> None:
        c = make(i)
        try:
            while not done.is_set():
                msgs = c.poll(0.2) if hasattr(c, "acknowledge") else c.consume(500, 0.2)
                got[i] += sum(1 for m in msgs if m.error() is None)
                if sum(got) >= records:
                    done.set()
        finally:
            c.close()
    threads = [threading.Thread(target=member, args=(i,)) for i in range(CONSUMERS)]
    for t in threads:
        t.start()
    done.wait(300)
    elapsed = time.perf_counter() - t0
    done.set()
    for t in threads:
        t.join()
    assert sum(got) >= records, got
    return elapsed


def run(records: int, size: int, repeat: int) -> None:
    import confluent_kafka as ck
    from confluent_kafka.admin import AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource, ResourceType
    share_times, group_times = [], []
    with KafkaEmulator() as emulator:
        bs = emulator.bootstrap_server
        for _ in range(repeat):
            topic = f"bench-share-{uuid.uuid4().hex[:6]}"
            emulator.create_topic(topic, PARTITIONS)
            fill(emulator, topic, records, size)
            share_group, group = f"sg-{topic}", f"cg-{topic}"
            admin = AdminClient({"bootstrap.servers": bs})
            entry = ConfigEntry("share.auto.offset.reset", "earliest", incremental_operation=AlterConfigOpType.SET)
            for f in admin.incremental_alter_configs([ConfigResource(ResourceType.GROUP, share_group,
                                                                     incremental_configs=[entry])]).values():
                f.result(30)

            def share(i):
                c = ck.ShareConsumer({"bootstrap.servers": bs, "group.id": share_group})
                c.subscribe([topic])
                return c

            def classic(i):
                c = ck.Consumer({"bootstrap.servers": bs, "group.id": group, "auto.offset.reset": "earliest",
                                 "enable.auto.commit": False})
                c.subscribe([topic])
                return c
            share_times.append(consume(share, records))
            group_times.append(consume(classic, records))
    mb = records * size / 1e6
    print(f"{records} records of {size} B, {PARTITIONS} partitions, {CONSUMERS} consumers, median of {repeat}")
    print("| consumers | records/s | MB/s |")
    print("|---|---|---|")
    for name, times in (("3 ShareConsumers, one share group (implicit ack)", share_times),
                        ("3 Consumers, one consumer group (classic)", group_times)):
        t = statistics.median(times)
        print(f"| {name} | {records / t:,.0f} | {mb / t:.1f} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--records", type=int, default=30000)
    ap.add_argument("--size", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    try:
        import confluent_kafka as ck
    except ImportError:
        print("skipped: bench_share needs confluent-kafka")
        return
    if not hasattr(ck, "ShareConsumer"):
        print(f"skipped: confluent-kafka {ck.version()[0]} has no ShareConsumer")
        return
    run(a.records, a.size, a.repeat)


if __name__ == "__main__":
    main()
