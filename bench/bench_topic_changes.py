"""One CreateTopics of many topics on a data directory that already holds many (issue 31): the
request's server CPU, its topics.json writes and the topic entries they serialize.

With a data directory each topic change writes ``topics.json`` (every topic's metadata) before
the request is answered; the changes of one request are one write (``LogStore.topic_changes``).
This times one CreateTopics through a sans-IO connection (decode, handler, encode: one loop turn
of the real server) against a directory of ``--existing`` topics, alternating nothing: run it
with ``--tree`` on another checkout (a ``git archive`` of main) to compare.

    python bench/bench_topic_changes.py [--existing 1500] [--create 500] [--partitions 1] [--runs 3]
    python bench/bench_topic_changes.py --tree /tmp/main-src
    python bench/bench_topic_changes.py --instructions     # callgrind's count of the request (slow)

Printed per run: CPU ms of the request, topics.json writes, topic entries serialized in all, and
the last write's bytes. ``--instructions`` counts the request's instructions with callgrind
(client requests through bench_instructions' helper), a count other work on the machine does not
move.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def run_once(tree: Path, existing: int, create: int, partitions: int, cg_helper: str | None) -> dict:
    sys.path[:0] = [str(tree), str(tree / "bench")]
    from bench_request_path import check_reply, frames_for
    from kafkaemu.broker import Broker
    from kafkaemu.config import BrokerConfig
    from kafkaemu.handlers.registry import REGISTRY
    from kafkaemu.logging import configure_logging
    from kafkaemu.storage import data_dir as data_dir_module
    from kafkaemu.wire.connection import Connection
    from kafkaemu.wire.framing import FrameDecoder
    import kafkaemu.server  # noqa: F401  (registers every handler)
    configure_logging("console", "warning")
    path = tempfile.mkdtemp(prefix="bench-topic-changes-")
    try:
        broker = Broker(BrokerConfig(data_dir=path), 0)
        persistence = broker.store.persistence
        persistence._loading = True          # the directory's topics, set up without a write each
        for i in range(existing):
            broker.store.create_topic(f"existing-{i}", 1)
        persistence._loading = False
        persistence.topics_changed(broker.store)
        writes = []
        write = data_dir_module.write_atomically

        def counted(p, data):
            write(p, data)
            if os.path.basename(p) == "topics.json":
                writes.append((len(json.loads(data)["topics"]), len(data)))
        data_dir_module.write_atomically = counted
        conn = Connection(broker, REGISTRY, 1, "127.0.0.1", now_ms=0)
        spec = (19, 7, {"topics": [{"name": f"new-{i}", "num_partitions": partitions, "replication_factor": -1,
                                    "assignments": [], "configs": []} for i in range(create)],
                        "timeout_ms": 30000, "validate_only": False})
        frame = frames_for(spec, 1)[0]
        cg = None
        if cg_helper:
            import ctypes
            cg = ctypes.CDLL(cg_helper)
            cg.cg_start()
        c0, t0 = time.process_time(), time.perf_counter()
        conn.receive(frame, 1)
        out = conn.take_output()
        cpu, wall = time.process_time() - c0, time.perf_counter() - t0
        if cg is not None:
            cg.cg_stop(b"CreateTopics")
        check_reply(spec, FrameDecoder(1 << 30).feed(out)[0])
        return {"cpu_ms": cpu * 1000, "wall_ms": wall * 1000, "writes": len(writes),
                "entries": sum(n for n, _ in writes), "last_bytes": writes[-1][1] if writes else 0}
    finally:
        shutil.rmtree(path, ignore_errors=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tree", default=str(ROOT), help="the checkout to measure (default: this one)")
    ap.add_argument("--existing", type=int, default=1500)
    ap.add_argument("--create", type=int, default=500)
    ap.add_argument("--partitions", type=int, default=1, help="partitions of each created topic")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--instructions", action="store_true", help="count the request's instructions with callgrind")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    tree = Path(args.tree).resolve()
    if args.child:
        print(json.dumps(run_once(tree, args.existing, args.create, args.partitions,
                                  os.environ.get("KAFKAEMU_CG_HELPER"))))
        return 0
    child = [sys.executable, __file__, "--child", "--tree", str(tree), "--existing", str(args.existing),
             "--create", str(args.create), "--partitions", str(args.partitions)]
    label = f"{tree.name}: CreateTopics of {args.create} x {args.partitions} partitions beside {args.existing} topics"
    if args.instructions:
        sys.path.insert(0, str(ROOT / "bench"))
        from bench_instructions import build_helper
        with tempfile.TemporaryDirectory() as tmp:
            helper = build_helper(Path(tmp))
            out = Path(tmp) / "callgrind.out"
            done = subprocess.run(["valgrind", "--tool=callgrind", "--instr-atstart=no", "--collect-atstart=no",
                                   f"--callgrind-out-file={out}"] + child, capture_output=True, text=True,
                                  env=dict(os.environ, KAFKAEMU_CG_HELPER=str(helper)))
            if done.returncode:
                print(done.stderr[-2000:], file=sys.stderr)
                return 1
            totals = [int(line.split()[1]) for f in Path(tmp).glob("callgrind.out*")
                      for line in f.read_text().splitlines() if line.startswith("totals:")]
            print(f"{label}: {max(totals) / 1e6:.1f} M instructions; {done.stdout.strip()}")
        return 0
    results = []
    for _ in range(args.runs):
        done = subprocess.run(child, capture_output=True, text=True, check=True)
        results.append(json.loads(done.stdout.strip().splitlines()[-1]))
        print(f"  {results[-1]}")
    print(f"{label}: median CPU {statistics.median(r['cpu_ms'] for r in results):.1f} ms, "
          f"{results[0]['writes']} topics.json writes serializing {results[0]['entries']} topic entries "
          f"(last write {results[0]['last_bytes']} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
