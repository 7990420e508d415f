"""The log cleaner's stall as a client sees it (the end-to-end check of `bench_cleaner.py`'s rows).

A real `kafkaemu serve` (one `__consumer_offsets` partition, `--log-cleaner-backoff-ms`, by default
25 s, so that the commits end before the cleaner is first due) gets ``--topics`` one-partition
topics and ``--commits`` OffsetCommits (pipelined on one connection, one group, ten partitions of
topic ``t`` committed over and over, so nearly every record is superseded). Then one connection
sends ApiVersions one at a time (1 ms apart) until the cleaning pass has ended (the server's
``compacted`` log line for `__consumer_offsets`) and ``--after-s`` more. Prints:

- the longest ApiVersions answer before the cleaner was due (the machine's own noise) and after it
  (the stall the cleaning adds), with when it came;
- the cleaning pass: from the cleaner's due time (the server's first answer plus the backoff, to
  within a few ms) to its ``compacted`` line (wall, by the log's timestamp), and the server's CPU
  from the due time until the script saw that line, less what the pings in between cost (a ping's
  CPU measured between the commits and the due time).

With ``--data-dir`` the server keeps its logs there (before `0d71042` a data directory also dumped
every topic's metadata for ``topics.json`` at every tick: O(topics) per loop turn of the pass,
which ``--topics`` shows).

    .venv/bin/python bench/cleaner_stall.py [--commits 100000] [--topics 0] [--data-dir DIR|tmp]
        [--backoff-ms 25000] [--after-s 2] [--server-log /tmp/cleaner_stall_server.log] [--tree DIR] [--json]
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]

import peer_client as pc  # noqa: E402
from bench_data_path import _cpu_s  # noqa: E402
from kafkaemu.protocol import envelope  # noqa: E402
from kafkaemu.testing import raw_client  # noqa: E402

HOST = "127.0.0.1"
WINDOW = 200   # OffsetCommits in flight
TOPICS_PER_REQUEST = 500
PING = {"client_software_name": "cleaner-stall", "client_software_version": "1"}


def free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def wait_until_serving(port: int, proc: subprocess.Popen, timeout_s: float = 30.0) -> None:
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            pc.api_version_ranges(HOST, port)
            return
        except (OSError, RuntimeError):
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"kafkaemu did not start (exit code {proc.poll()})")
            time.sleep(0.05)


def create_topics(port: int, names: list[str]) -> None:
    for i in range(0, len(names), TOPICS_PER_REQUEST):
        answer = pc.call(HOST, port, pc.CREATE_TOPICS, 7, {"topics": [
            {"name": n, "num_partitions": 1 if n != "t" else 10, "replication_factor": 1, "assignments": [],
             "configs": []} for n in names[i:i + TOPICS_PER_REQUEST]], "timeout_ms": 30000, "validate_only": False})
        problems = pc.errors_in(answer)
        if problems:
            raise RuntimeError(f"CreateTopics: {problems}")


def commit(port: int, n: int) -> None:
    """``n`` OffsetCommits v8 of group g, WINDOW in flight on one connection; each answer read."""
    with socket.create_connection((HOST, port)) as sock:
        sent = got = 0
        while got < n:
            frames = []
            while sent < n and sent - got < WINDOW:
                body = {"group_id": "g", "generation_id_or_member_epoch": -1, "member_id": "",
                        "group_instance_id": None, "retention_time_ms": -1, "topics": [{"name": "t", "partitions": [
                            {"partition_index": sent % 10, "committed_offset": sent, "committed_leader_epoch": -1,
                             "commit_timestamp": -1, "committed_metadata": ""}]}]}
                frames.append(envelope.encode_request(pc.OFFSET_COMMIT, 8, body, sent + 1, "cleaner-stall"))
                sent += 1
            sock.sendall(b"".join(frames))
            while got < sent - WINDOW // 2 or (sent == n and got < n):
                raw_client.read_reply(sock)
                got += 1


def logged(server_log: Path, name: str, **fields) -> dict | None:
    """The server's first ``name`` event with these fields (its JSON log), with ``at``: its
    timestamp as ``time.time()`` reads it; None while it has logged none."""
    for line in server_log.read_text().splitlines():
        if f'"{name}"' in line and line.startswith("{"):
            event = json.loads(line)
            if event.get("event") == name and all(event.get(k) == v for k, v in fields.items()):
                event["at"] = datetime.fromisoformat(event["timestamp"].replace("Z", "+00:00")).timestamp()
                return event
    return None


def run(commits: int, topics: int, data_dir: str | None, backoff_ms: int, after_s: float, server_log: Path,
        tree: Path = HERE.parent) -> dict:
    port = free_port()
    command = [sys.executable, "-m", "kafkaemu", "serve", "--port", str(port), "--log-cleaner-backoff-ms",
               str(backoff_ms), "--offsets-topic-num-partitions", "1", "--log-level", "info", "--log-format", "json"]
    if data_dir is not None:
        command += ["--data-dir", data_dir]
    with open(server_log, "w") as log:
        server = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, cwd=tree,   # lines written as logged
                                  env=dict(os.environ, PYTHONPATH=str(tree), PYTHONUNBUFFERED="1"))
    started = time.time()
    try:
        wait_until_serving(port, server)
        due = time.time() + backoff_ms / 1000   # the server's first tick, as it starts, starts the backoff
        create_topics(port, ["t"] + [f"other-{i}" for i in range(topics)])
        commit(port, commits)
        committed_at = time.time()
        if committed_at >= due:
            raise RuntimeError(f"the commits took {committed_at - started:.1f} s, past the cleaner's due time: "
                               f"raise --backoff-ms")
        with socket.create_connection((HOST, port)) as ping:
            before = after = after_at = 0.0
            pings_before = pings_during = 0
            cpu_committed, cpu_due, cpu_done = _cpu_s(server.pid), None, None
            event = None
            next_look = 0.0
            while event is None or time.time() < event["at"] + after_s:
                t = time.time()
                if cpu_due is None and t >= due:
                    cpu_due = _cpu_s(server.pid)
                t0 = time.perf_counter()
                pc.call_on(ping, pc.API_VERSIONS, 3, PING)
                took = time.perf_counter() - t0
                if cpu_due is None:
                    before = max(before, took)
                    pings_before += 1
                else:
                    if took > after:
                        after, after_at = took, t - due
                    if event is None:
                        pings_during += 1
                        if t >= next_look:
                            next_look = t + 0.05
                            event = logged(server_log, "compacted", topic="__consumer_offsets")
                            if event is not None:
                                cpu_done = _cpu_s(server.pid)
                        if t > due + 120:
                            raise RuntimeError(f"no compacted line for __consumer_offsets in {server_log} within 120 s")
                time.sleep(0.001)
    finally:
        server.terminate()
        server.wait()
    ping_cpu = (cpu_due - cpu_committed) / max(pings_before, 1)
    return {"commits": commits, "topics": topics + 1, "data_dir": data_dir is not None,
            "commits_done_at_s": round(committed_at - started, 1), "pings": pings_before + pings_during,
            "longest_before_due_ms": round(before * 1000, 1), "longest_after_due_ms": round(after * 1000, 1),
            "longest_after_due_at_s": round(after_at, 2), "pass_wall_s": round(event["at"] - due, 2),
            "pass_cpu_s": round(cpu_done - cpu_due - pings_during * ping_cpu, 2), "removed": event.get("removed")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--commits", type=int, default=100_000)
    parser.add_argument("--topics", type=int, default=0, help="one-partition topics besides t")
    parser.add_argument("--data-dir", help="the server's data directory ('tmp': a new temporary one)")
    parser.add_argument("--backoff-ms", type=int, default=25_000, help="the server's --log-cleaner-backoff-ms")
    parser.add_argument("--after-s", type=float, default=2.0, help="pings after the pass has ended")
    parser.add_argument("--server-log", default="/tmp/cleaner_stall_server.log")
    parser.add_argument("--tree", type=Path, default=HERE.parent,
                        help="the kafkaemu checkout the server runs (default: this one), e.g. a git worktree of main")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    data_dir = tempfile.mkdtemp(prefix="cleaner-stall-") if args.data_dir == "tmp" else args.data_dir
    try:
        result = run(args.commits, args.topics, data_dir, args.backoff_ms, args.after_s, Path(args.server_log),
                     args.tree.resolve())
    finally:
        if args.data_dir == "tmp":
            shutil.rmtree(data_dir, ignore_errors=True)
    print(json.dumps(result) if args.json else "\n".join(f"{k}: {v}" for k, v in result.items()))


if __name__ == "__main__":
    main()
