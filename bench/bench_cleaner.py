"""The log cleaner's longest loop turn: ``--commits`` one-record OffsetCommit batches (one group, ten
partitions committed over and over, so nearly every record is superseded) appended to one
``__consumer_offsets`` partition of a LogStore, then the store ticked at the cleaner's due time
until its pass ends. Each tick is a turn of the broker's event loop during which no other client
is served: the longest is the stall a cleaning adds. Prints the ticks taken, the longest tick's
wall and CPU time and the total.

    .venv/bin/python bench/bench_cleaner.py [--commits 100000] [--data-dir DIR] [--json]
"""
from __future__ import annotations

import argparse
import json
import tempfile
import time

from kafkaemu.logging import get_logger
from kafkaemu.core.offsets.records import encode_offset_key, encode_offset_value
from kafkaemu.core.offsets.store import CommittedOffset
from kafkaemu.storage.log_store import LogStore
from kafkaemu.storage.offsets_topic import OFFSETS_TOPIC, OFFSETS_TOPIC_CONFIGS

NOW = 1_700_000_000_000


def run(commits: int, data_dir: str | None) -> dict:
    store = LogStore()
    if data_dir is not None:
        from kafkaemu.storage.data_dir import DataDir
        DataDir(data_dir, 0).attach(store)
    store.tick(NOW)
    plog = store.create_topic(OFFSETS_TOPIC, 1, dict(OFFSETS_TOPIC_CONFIGS), internal=True).partitions[0]
    for i in range(commits):
        key = encode_offset_key("group", "topic", i % 10)
        value = encode_offset_value(CommittedOffset(offset=i, leader_epoch=0, metadata="",
                                                    commit_timestamp_ms=NOW + i, expire_timestamp_ms=None))
        plog.append_keyed([(key, value)], NOW)
    batches_before = plog.batch_count
    get_logger("kafkaemu.bench").info("cleaning", batches=batches_before)   # loads the logging stack, as a server has
    now = NOW + store.cleaner_backoff_ms
    walls, cpus = [], []
    while True:
        wall, cpu = time.perf_counter(), time.process_time()
        store.tick(now)
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
        if store.next_deadline_ms() > now:
            break
    return {"commits": commits, "batches_before": batches_before, "batches_after": plog.batch_count,
            "ticks": len(walls), "longest_tick_ms": round(max(walls) * 1000, 2),
            "longest_tick_cpu_ms": round(max(cpus) * 1000, 2), "total_ms": round(sum(walls) * 1000, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--commits", type=int, default=100_000)
    parser.add_argument("--data-dir", help="segment files in this directory ('tmp': a new temporary one)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if args.data_dir == "tmp":
        with tempfile.TemporaryDirectory() as d:
            result = run(args.commits, d)
    else:
        result = run(args.commits, args.data_dir)
    print(json.dumps(result) if args.json else "\n".join(f"{k}: {v}" for k, v in result.items()))


if __name__ == "__main__":
    main()
