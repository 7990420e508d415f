"""Per-request overhead on one connection (issue 12, BENCHMARKS.md "Issue 12: request path").

1. sans-IO: request frames fed to ``Connection.receive`` in reads of ``--batch`` frames (as a socket
   read of a pipelining client delivers them), replies taken with ``take_output``; requests/s for
   ApiVersions, Metadata (3 topics), Heartbeat, OffsetCommit (1 partition), OffsetFetch and (sans-IO
   only) the steady ConsumerGroupHeartbeat of a KIP-848 member owning its one partition.
2. socket: the same requests pipelined on one TCP connection to a server in its own process
   (``python -m kafkaemu serve``), a sender thread writing while the main thread reads.

Each figure is the median of ``--repeat`` runs, as requests per second of wall-clock time and per
second of CPU time (of the server process, over the socket), which a loaded machine moves less. ``--only sans-io|socket`` runs one half;
``--apis`` picks APIs (comma separated names).
"""
from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from kafkaemu.protocol import envelope  # noqa: E402
from kafkaemu.wire.framing import FrameDecoder  # noqa: E402

GROUP, TOPIC = "bench-rp", "bench-rp-topic"
TOPICS = [TOPIC, "bench-rp-b", "bench-rp-c"]
SUBSCRIPTION = b"\x00\x01" + b"\x00\x00\x00\x01\x00\x0ebench-rp-topic" + b"\xff\xff\xff\xff" + b"\x00\x00\x00\x00"


def request_bodies(member_id: str) -> dict[str, tuple[int, int, object]]:
    """name -> (api key, version, body or a function of the request's index giving one)."""
    def commit(i):
        return {"group_id": GROUP, "generation_id_or_member_epoch": 1, "member_id": member_id,
                "group_instance_id": None,
                "topics": [{"name": TOPIC, "partitions": [{"partition_index": 0, "committed_offset": i,
                                                           "committed_leader_epoch": -1, "committed_metadata": ""}]}]}
    return {
        "ApiVersions": (18, 3, {"client_software_name": "bench", "client_software_version": "1.0"}),
        "Metadata": (3, 12, {"topics": [{"name": t, "topic_id": bytes(16)} for t in TOPICS],
                             "allow_auto_topic_creation": False, "include_topic_authorized_operations": False}),
        "Heartbeat": (12, 4, {"group_id": GROUP, "generation_id": 1, "member_id": member_id,
                              "group_instance_id": None}),
        "OffsetCommit": (8, 8, commit),
        "OffsetFetch": (9, 8, {"groups": [{"group_id": GROUP, "member_id": None, "member_epoch": -1,
                                           "topics": [{"name": TOPIC, "partition_indexes": [0]}]}],
                               "require_stable": False}),
    }


def frames_for(spec, count: int, start: int = 0) -> list[bytes]:
    api_key, version, body = spec
    if callable(body):
        return [envelope.encode_request(api_key, version, body(i), start + i, "bench") for i in range(count)]
    one = envelope.encode_request(api_key, version, body, 0, "bench")
    # Same body, distinct correlation ids: patch the 4 bytes after size, key and version.
    return [one[:8] + (start + i).to_bytes(4, "big", signed=True) + one[12:] for i in range(count)]


# -- 1. sans-IO ----------------------------------------------------------------------------------

def sans_io_setup():
    from kafkaemu.broker import Broker
    from kafkaemu.config import BrokerConfig
    from kafkaemu.core.classic.requests import JoinGroup, SyncGroup
    from kafkaemu.handlers.registry import REGISTRY
    from kafkaemu.wire.connection import Connection
    import kafkaemu.server  # noqa: F401  (registers every handler)
    broker = Broker(BrokerConfig(group_initial_rebalance_delay_ms=0), 0)
    for t in TOPICS:
        broker.topics.create(t, 1, {})
    got = []
    broker.coordinator.join_group(0, JoinGroup(GROUP, "", "consumer", [("range", SUBSCRIPTION)], client_id="b"),
                                  got.append)
    mid = got[-1]["member_id"]
    broker.coordinator.join_group(0, JoinGroup(GROUP, mid, "consumer", [("range", SUBSCRIPTION)], client_id="b",
                                               session_timeout_ms=60000), got.append)
    broker.coordinator.sync_group(0, SyncGroup(GROUP, 1, mid, {mid: b""}), got.append)
    conn = Connection(broker, REGISTRY, 1, "127.0.0.1", now_ms=0)
    return conn, mid


def consumer_heartbeat(conn) -> tuple[int, int, dict]:
    """A KIP-848 member joined and reconciled (its assignment acknowledged) through ``conn``; its
    steady heartbeat: the epoch, nothing else changed (null fields)."""
    body = {"group_id": "bench-rp-848", "member_id": "bench-member-848-0000", "member_epoch": 0,
            "instance_id": None, "rack_id": None, "rebalance_timeout_ms": 30000, "subscribed_topic_names": [TOPIC],
            "subscribed_topic_regex": None, "server_assignor": None, "topic_partitions": []}
    for _ in range(4):
        conn.receive(envelope.encode_request(68, 1, body, 0, "bench"), 1)
        reply = envelope.decode_response(68, 1, FrameDecoder(1 << 30).feed(conn.take_output())[0])[1]
        assert reply["error_code"] == 0, reply
        owned = None if reply["assignment"] is None else [
            {"topic_id": t["topic_id"], "partitions": t["partitions"]} for t in reply["assignment"]["topic_partitions"]]
        body = dict(body, member_epoch=reply["member_epoch"], rebalance_timeout_ms=-1, subscribed_topic_names=None,
                    topic_partitions=owned)
    return 68, 1, dict(body, topic_partitions=None)


def errors(value) -> set:
    """Every error code in a decoded response."""
    found = set()
    if isinstance(value, dict):
        for k, v in value.items():
            found |= {v} if k == "error_code" else errors(v)
    elif isinstance(value, list):
        for v in value:
            found |= errors(v)
    return found


def check_reply(spec, frame: bytes) -> None:
    """The benchmark measures answered requests, not errors."""
    body = envelope.decode_response(spec[0], spec[1], frame)[1]
    assert errors(body) <= {0}, body


def sans_io_rate(conn, spec, count: int, batch: int) -> float:
    conn.receive(frames_for(spec, 1)[0], 1)
    check_reply(spec, FrameDecoder(1 << 30).feed(conn.take_output())[0])
    return sans_io_loop(conn, frames_for(spec, count), batch)


def sans_io_loop(conn, frames: list[bytes], batch: int) -> float:
    count = len(frames)
    reads = [b"".join(frames[i:i + batch]) for i in range(0, count, batch)]
    decoder = FrameDecoder(1 << 30)
    replies = 0
    t0, c0 = time.perf_counter(), time.process_time()
    for data in reads:
        conn.receive(data, 1)
        out = conn.take_output()
        replies += len(decoder.feed(out))
    elapsed, cpu = time.perf_counter() - t0, time.process_time() - c0
    assert replies == count, (replies, count)
    return count / elapsed, count / cpu


# -- 2. over a socket, server in its own process -------------------------------------------------

def start_server():
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.Popen([sys.executable, "-m", "kafkaemu", "serve", "--port", "0", "--log-level", "warning",
                             "--group-initial-rebalance-delay-ms", "0"],
                            stdout=subprocess.PIPE, text=True, env=env, cwd=ROOT)   # -m imports from the cwd first
    for line in proc.stdout:
        if "listening on" in line:
            host, port = line.strip().rsplit(" ", 1)[-1].rsplit(":", 1)
            return proc, host, int(port)
    raise RuntimeError("server did not start")


def call(sock, decoder, api_key, version, body, corr=1):
    sock.sendall(envelope.encode_request(api_key, version, body, corr, "bench"))
    frames = []
    while not frames:
        frames = decoder.feed(sock.recv(65536))
    return envelope.decode_response(api_key, version, frames[0])[1]


def call_raw(sock, request: bytes) -> bytes:
    sock.sendall(request)
    decoder, frames = FrameDecoder(1 << 30), []
    while not frames:
        frames = decoder.feed(sock.recv(65536))
    return frames[0]


def socket_setup(sock) -> str:
    decoder = FrameDecoder(1 << 30)
    call(sock, decoder, 19, 4, {"topics": [{"name": t, "num_partitions": 1, "replication_factor": 1,
                                            "assignments": [], "configs": []} for t in TOPICS],
                                "timeout_ms": 5000, "validate_only": False})
    join = {"group_id": GROUP, "session_timeout_ms": 60000, "rebalance_timeout_ms": 60000, "member_id": "",
            "group_instance_id": None, "protocol_type": "consumer",
            "protocols": [{"name": "range", "metadata": SUBSCRIPTION}], "reason": None}
    call(sock, decoder, 10, 4, {"key_type": 0, "coordinator_keys": [GROUP]})
    mid = call(sock, decoder, 11, 9, join)["member_id"]
    reply = call(sock, decoder, 11, 9, dict(join, member_id=mid))
    assert reply["error_code"] == 0, reply
    reply = call(sock, decoder, 14, 5, {"group_id": GROUP, "generation_id": reply["generation_id"], "member_id": mid,
                                        "group_instance_id": None, "protocol_type": "consumer",
                                        "protocol_name": "range",
                                        "assignments": [{"member_id": mid, "assignment": b""}]})
    assert reply["error_code"] == 0, reply
    return mid


def server_cpu(pid: int) -> float:
    """CPU seconds the server process has used (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def socket_rate(sock, spec, count: int, server_pid: int) -> float:
    check_reply(spec, call_raw(sock, frames_for(spec, 1)[0]))
    payload = b"".join(frames_for(spec, count))
    decoder = FrameDecoder(1 << 30)
    got = 0
    c0 = server_cpu(server_pid)
    t0 = time.perf_counter()
    sender = threading.Thread(target=sock.sendall, args=(payload,))
    sender.start()
    while got < count:
        got += len(decoder.feed(sock.recv(1 << 20)))
    elapsed = time.perf_counter() - t0
    cpu = server_cpu(server_pid) - c0
    sender.join()
    return count / elapsed, count / cpu


def report(mode: str, name: str, runs: list[tuple[float, float]]) -> None:
    """Requests per second of wall-clock time, and per second of (server) CPU time: the second
    moves less when other processes load the machine."""
    wall, cpu = [w for w, _ in runs], [c for _, c in runs]
    print(f"{mode:<8} {name:<13} {statistics.median(wall):>9,.0f} requests/s"
          f"  (median of {len(runs)}, min {min(wall):,.0f}, max {max(wall):,.0f});"
          f"  {statistics.median(cpu):>9,.0f} per {'server ' if mode == 'socket' else ''}CPU second", flush=True)


def main() -> None:
    from kafkaemu.logging import configure_logging
    configure_logging("console", "warning")
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--count", type=int, default=20000, help="requests per run")
    ap.add_argument("--batch", type=int, default=100, help="sans-IO: frames per receive()")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--only", choices=("sans-io", "socket"))
    ap.add_argument("--apis", default="ApiVersions,Metadata,Heartbeat,OffsetCommit,OffsetFetch,ConsumerGroupHeartbeat")
    args = ap.parse_args()
    names = args.apis.split(",")
    if args.only != "socket":
        conn, mid = sans_io_setup()
        specs = request_bodies(mid)
        if "ConsumerGroupHeartbeat" in names:
            specs["ConsumerGroupHeartbeat"] = consumer_heartbeat(conn)
        for name in names:
            report("sans-IO", name, [sans_io_rate(conn, specs[name], args.count, args.batch)
                                     for _ in range(args.repeat)])
    if args.only != "sans-io":
        proc, host, port = start_server()
        try:
            sock = socket.create_connection((host, port))
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            specs = request_bodies(socket_setup(sock))
            for name in (n for n in names if n in specs):   # ConsumerGroupHeartbeat: sans-IO only
                report("socket", name, [socket_rate(sock, specs[name], args.count, proc.pid)
                                        for _ in range(args.repeat)])
            sock.close()
        finally:
            proc.terminate()
            proc.wait(10)


if __name__ == "__main__":
    main()
