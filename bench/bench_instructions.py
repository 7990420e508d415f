"""Instructions per request on the sans-IO request path, counted by valgrind's callgrind (issue 16,
BENCHMARKS.md "Issue 16: the redesign's cost"): a count that other work on the machine does not
move, to compare commits by. Needs valgrind, gcc and valgrind's headers (Debian: valgrind).

    python bench/bench_instructions.py [--tree DIR] [--count 300] [--apis Produce,Fetch]

``--tree`` measures another checkout (e.g. a ``git archive`` of an older commit; its
``bench/bench_request_path.py`` sets the broker up). Each API: one connection, a warm-up, then
``--count`` requests with only that loop counted (callgrind client requests through a small
C helper built on the fly), printed as instructions per request.
"""
from __future__ import annotations

import argparse
import ctypes
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
APIS = ("ApiVersions,Metadata,Heartbeat,OffsetCommit,OffsetCommitV10,OffsetFetch,OffsetFetchV10,ConsumerGroupHeartbeat,"
        "Produce,Fetch,Produce1MB")
# Produce1MB: a batch of 97 records of 10 KB (what librdkafka sends at batch.size 1000000), arriving in
# 256 KiB reads as a socket gives them; fewer requests are counted (each is a megabyte)
LARGE_READ = 262_144
HELPER = r"""#include <valgrind/callgrind.h>
void cg_start(void) { CALLGRIND_ZERO_STATS; CALLGRIND_START_INSTRUMENTATION; CALLGRIND_TOGGLE_COLLECT; }
void cg_stop(const char *name) { CALLGRIND_TOGGLE_COLLECT; CALLGRIND_DUMP_STATS_AT(name); }
"""


def build_helper(tmp: Path) -> Path:
    (tmp / "cg.c").write_text(HELPER)
    subprocess.run(["gcc", "-O2", "-shared", "-fPIC", "-o", str(tmp / "libcg.so"), str(tmp / "cg.c")], check=True)
    return tmp / "libcg.so"


def measure(tree: Path, apis: str, count: int) -> None:
    """Under callgrind: set up, then count each API's loop."""
    sys.path[:0] = [str(tree), str(tree / "bench")]
    os.chdir(tree)
    cg = ctypes.CDLL(os.environ["KAFKAEMU_CG_HELPER"])
    import bench_request_path as b
    from kafkaemu.logging import configure_logging
    from kafkaemu.protocol import envelope
    from kafkaemu.storage.record_batch import build_batch
    from kafkaemu.wire.framing import FrameDecoder
    configure_logging("console", "warning")
    conn, mid = b.sans_io_setup()
    specs = b.request_bodies(mid)
    specs["Produce"] = (0, 9, {"transactional_id": None, "acks": 1, "timeout_ms": 1000, "topic_data": [
        {"name": b.TOPIC, "partition_data": [{"index": 0, "records": build_batch([(b"k", b"v" * 100, [], 1000)])}]}]})
    specs["Fetch"] = (1, 12, {"max_wait_ms": 0, "min_bytes": 0, "max_bytes": 1 << 20, "isolation_level": 0,
                              "session_id": 0, "session_epoch": -1, "forgotten_topics_data": [], "rack_id": "",
                              "topics": [{"topic": b.TOPIC, "partitions": [
                                  {"partition": 0, "current_leader_epoch": -1, "fetch_offset": 0,
                                   "last_fetched_epoch": -1, "log_start_offset": -1,
                                   "partition_max_bytes": 1 << 20}]}]})
    # v10 of OffsetCommit and OffsetFetch (what clients of KIP-848 brokers send) name the topic by id
    topic_id = conn.broker.store.get(b.TOPIC).topic_id
    specs["OffsetCommitV10"] = (8, 10, lambda i: {
        "group_id": b.GROUP, "generation_id_or_member_epoch": 1, "member_id": mid, "group_instance_id": None,
        "topics": [{"topic_id": topic_id, "partitions": [{"partition_index": 0, "committed_offset": i,
                                                          "committed_leader_epoch": -1, "committed_metadata": ""}]}]})
    specs["OffsetFetchV10"] = (9, 10, {"groups": [{"group_id": b.GROUP, "member_id": None, "member_epoch": -1,
                                                   "topics": [{"topic_id": topic_id, "partition_indexes": [0]}]}],
                                       "require_stable": False})
    value = (b"0123456789abcdef" * 640)[:10_240]
    specs["Produce1MB"] = (0, 9, {"transactional_id": None, "acks": 1, "timeout_ms": 1000, "topic_data": [
        {"name": b.TOPIC, "partition_data": [{"index": 0, "records": build_batch([(None, value, [], 1000)] * 97)}]}]})
    names = apis.split(",")
    if "ConsumerGroupHeartbeat" in names:
        specs["ConsumerGroupHeartbeat"] = b.consumer_heartbeat(conn)
    for _ in range(10):   # Fetch reads the same 10 batches in every tree
        conn.receive(b.frames_for(specs["Produce"], 1)[0], 1)
        conn.take_output()
    for name in names:
        spec = specs[name]
        conn.receive(b.frames_for(spec, 1)[0], 1)
        b.check_reply(spec, FrameDecoder(1 << 30).feed(conn.take_output())[0])
        if name == "Produce1MB":
            n = max(1, count // 15)
            stream = b"".join(b.frames_for(spec, n))
            reads = [stream[i:i + LARGE_READ] for i in range(0, len(stream), LARGE_READ)]
            cg.cg_start()
            for data in reads:
                conn.receive(data, 1)
                conn.take_output()
            cg.cg_stop(f"{name}/{n}".encode())
            continue
        b.sans_io_loop(conn, b.frames_for(spec, max(1, count // 5)), 10)   # warm
        frames = b.frames_for(spec, count)
        cg.cg_start()
        b.sans_io_loop(conn, frames, 10)
        cg.cg_stop(name.encode())


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tree", type=Path, default=ROOT, help="the checkout to measure (default: this one)")
    ap.add_argument("--count", type=int, default=300, help="requests counted per API")
    ap.add_argument("--apis", default=APIS)
    ap.add_argument("--measure", action="store_true", help=argparse.SUPPRESS)   # the run under callgrind
    args = ap.parse_args()
    if args.measure:
        measure(args.tree.resolve(), args.apis, args.count)
        return 0
    missing = [what for what, ok in (("valgrind", _which("valgrind")), ("gcc", _which("gcc")),
                                     ("valgrind/callgrind.h", Path("/usr/include/valgrind/callgrind.h").exists()))
               if not ok]
    if missing:
        print(f"bench_instructions: skipped, needs {', '.join(missing)} (Debian: apt-get install valgrind gcc)")
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        env = dict(os.environ, KAFKAEMU_CG_HELPER=str(build_helper(tmp)), PYTHONPATH=str(args.tree.resolve()))
        subprocess.run(["valgrind", "--tool=callgrind", "--instr-atstart=no", "--collect-atstart=no",
                        f"--callgrind-out-file={tmp}/cg.%p", sys.executable, __file__, "--measure",
                        "--tree", str(args.tree), "--count", str(args.count), "--apis", args.apis],
                       env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        results = []
        for path in tmp.glob("cg.*.*"):
            text = path.read_text(errors="replace")
            name = re.search(r"^desc: Trigger: Client Request: (\S+)", text, re.M)
            total = re.search(r"^summary: (\d+)", text, re.M)
            if name and total:
                results.append((int(path.name.rsplit(".", 1)[1]), name.group(1), int(total.group(1))))
    for _, name, total in sorted(results):
        name, _, n = name.partition("/")
        print(f"{name:<24} {total // (int(n) if n else args.count):>10,} instructions per request")
    return 0


def _which(cmd: str) -> bool:
    return any(os.access(os.path.join(d, cmd), os.X_OK) for d in os.environ.get("PATH", "").split(os.pathsep))


if __name__ == "__main__":
    sys.exit(main())
