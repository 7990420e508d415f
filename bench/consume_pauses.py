"""Evidence for the 10 KB consume rows: the issue's script (600 MB of 10 KB records round robin over
3 partitions, producer closed, confluent-kafka with its defaults; ``consume_order.run``) against
kafkaemu and Apache Kafka 4.4 alternating, printing each run's MB/s, the broker's CPU per MB and how
many ``Fetch backoff ...: Local: Queue full`` lines the client's own ``debug=fetch`` log had.

    .venv/bin/python bench/consume_pauses.py [RUNS_PER_BROKER]
"""
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]

import consume_order  # noqa: E402
from bench_data_path import _cpu_s  # noqa: E402
from confluent_kafka.admin import AdminClient  # noqa: E402
from kafkaemu.logging import configure_logging  # noqa: E402
from peer_servers import start_kafka, start_kafkaemu  # noqa: E402


def main() -> None:
    configure_logging("console", "warning")
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 4
    kafka = start_kafka()
    servers = [start_kafkaemu()[0]] + ([] if isinstance(kafka, str) else [kafka])
    if isinstance(kafka, str):
        print(f"Kafka skipped: {kafka}")
    try:
        admins = {s.name: AdminClient({"bootstrap.servers": s.bootstrap}) for s in servers}
        for rep in range(runs):
            for s in (servers if rep % 2 == 0 else servers[::-1]):
                pauses: list[int] = []
                mb_s, cpu = consume_order.run(s.bootstrap, admins[s.name], "closed", "confluent-kafka", 10_240, 600, 3,
                                              (lambda s=s: _cpu_s(s.pid)) if s.pid else None, pauses)
                print(f"{s.name:9} {mb_s:7.1f} MB/s  broker CPU {'?' if cpu is None else f'{cpu:.2f}'} ms/MB  "
                      f"queue-full backoff lines {pauses[0] if pauses else '?'}", flush=True)
    finally:
        for s in servers:
            s.stop()


if __name__ == "__main__":
    main()
