"""A large data directory (issue 12): restart time and RSS of ``kafkaemu serve --data-dir``.

Writes the data dir through the broker's own append path in a subprocess (``append_batch`` of
1 MiB batches of 1 KiB records into many partitions), then starts the server on it and measures:
process start to the first Metadata answer and to the first Fetch answer at offset 0 (an old
offset), RSS after the restart and after a Fetch sweep reading every byte, and the restart
after a clean stop (SIGTERM) and after a kill -9. The files are deleted at the end.

    python bench/bench_data_dir.py                       # 5 GB, 50 partitions (``make bench``)
    python bench/bench_data_dir.py --mb 512 --code DIR   # another checkout's code (e.g. the base commit)
"""
from __future__ import annotations

import argparse
import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOPIC = "big"
BATCH_RECORDS = 1024
RECORD_BYTES = 1000

WRITER = r"""
import sys, time
from kafkaemu.storage.data_dir import DataDir
from kafkaemu.storage.log_store import LogStore
from kafkaemu.storage.record_batch import build_batch
path, total, partitions, n, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
now = int(time.time() * 1000)
store = LogStore()
data_dir = DataDir(path)
data_dir.attach(store)
topic = store.get("big") or store.create_topic("big", partitions)
template = build_batch([(b"k%d" % i, bytes([65 + i % 26]) * size, [], now) for i in range(n)])
written = 0
while written < total:
    for plog in topic.partitions:
        plog.append_batch(template, now)
        written += len(template)
if hasattr(data_dir, "checkpoint") and sys.argv[6] == "close":
    data_dir.close()          # a clean shutdown (else: as killed, the recovery points of before)
"""


def rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def _request(api_key: int, version: int, body: dict, cid: int) -> bytes:
    from kafkaemu.protocol.envelope import encode_request
    return encode_request(api_key, version, body, correlation_id=cid, client_id="bench")


def _reply(sock, decoder, pending: list) -> bytes:
    while not pending:
        chunk = sock.recv(1 << 20)
        if not chunk:
            raise ConnectionError("closed")
        pending.extend(decoder.feed(chunk))
    return pending.pop(0)


def _fetch(partition: int, offset: int, max_bytes: int, cid: int) -> bytes:
    return _request(1, 11, {"replica_id": -1, "max_wait_ms": 0, "min_bytes": 1, "max_bytes": max_bytes,
                            "isolation_level": 0, "session_id": 0, "session_epoch": -1, "rack_id": "",
                            "forgotten_topics_data": [],
                            "topics": [{"topic": TOPIC, "partitions": [
                                {"partition": partition, "current_leader_epoch": -1, "fetch_offset": offset,
                                 "log_start_offset": -1, "partition_max_bytes": max_bytes}]}]}, cid)


def _records_of(reply: bytes):
    from kafkaemu.protocol.envelope import decode_response
    _, body = decode_response(1, 11, reply)
    part = body["responses"][0]["partitions"][0]
    return part["error_code"], part["records"] or b""


def start(code: str, path: str):
    env = dict(os.environ, PYTHONPATH=code)
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "kafkaemu", "serve", "--port", "0", "--log-level", "warning",
                             "--data-dir", path], stdout=subprocess.PIPE, text=True, env=env, cwd=code)
    port = int(proc.stdout.readline().rsplit(":", 1)[1])
    from kafkaemu.wire.framing import FrameDecoder
    sock = socket.create_connection(("127.0.0.1", port))
    decoder, pending = FrameDecoder(1 << 30), []
    sock.sendall(_request(3, 1, {"topics": None}, 1))
    _reply(sock, decoder, pending)
    t_meta = time.perf_counter() - t0
    sock.sendall(_fetch(0, 0, 1 << 20, 2))
    err, records = _records_of(_reply(sock, decoder, pending))
    t_fetch = time.perf_counter() - t0
    assert err == 0 and records, f"no records at offset 0 (error {err})"
    return proc, sock, (decoder, pending), t_meta, t_fetch


def start_empty(code: str) -> float:
    """Process start to the first Metadata answer with an empty data dir: the same start without
    data (interpreter, imports, internal topics), which the machine's load swings most."""
    path = tempfile.mkdtemp(prefix="kafkaemu-bench-datadir-empty-")
    try:
        env = dict(os.environ, PYTHONPATH=code)
        t0 = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-m", "kafkaemu", "serve", "--port", "0", "--log-level",
                                 "warning", "--data-dir", path], stdout=subprocess.PIPE, text=True, env=env, cwd=code)
        port = int(proc.stdout.readline().rsplit(":", 1)[1])
        from kafkaemu.wire.framing import FrameDecoder
        with socket.create_connection(("127.0.0.1", port)) as sock:
            sock.sendall(_request(3, 1, {"topics": None}, 1))
            _reply(sock, FrameDecoder(1 << 30), [])
        elapsed = time.perf_counter() - t0
        proc.terminate()
        proc.wait()
        return elapsed
    finally:
        shutil.rmtree(path, ignore_errors=True)


def sweep(sock, io, partitions: int) -> int:
    """Fetch every partition from offset 0 to its end in 8 MiB requests; returns the bytes read."""
    decoder, pending = io
    total, cid = 0, 10
    for p in range(partitions):
        offset = 0
        while True:
            cid += 1
            sock.sendall(_fetch(p, offset, 8 << 20, cid))
            err, records = _records_of(_reply(sock, decoder, pending))
            if err or not records:
                break
            total += len(records)
            pos, last = 0, offset
            while pos + 61 <= len(records):
                base, length = struct.unpack_from(">qi", records, pos)
                last = base + struct.unpack_from(">i", records, pos + 23)[0]
                pos += length + 12
            offset = last + 1
    return total


def stop(proc, sock, kill: bool = False) -> None:
    sock.close()
    proc.send_signal(signal.SIGKILL if kill else signal.SIGTERM)
    proc.wait()


LOADER = r"""
import sys, time
from kafkaemu.broker import Broker
from kafkaemu.config import BrokerConfig
t = time.perf_counter()
Broker(BrokerConfig(data_dir=sys.argv[1]), int(time.time() * 1000))
print(time.perf_counter() - t)
"""


def load_seconds(code: str, path: str) -> float:
    """The broker's construction on the data dir alone (no interpreter start or imports, which
    swing with the machine's load); leaves the shutdown unclean, as a kill would."""
    out = subprocess.check_output([sys.executable, "-c", LOADER, path], env=dict(os.environ, PYTHONPATH=code),
                                  stderr=subprocess.DEVNULL, text=True, cwd=code)   # cwd: `-c` puts it first on sys.path
    return float(out.split()[-1])


def write(code: str, path: str, nbytes: int, partitions: int, batch_records: int, close: bool) -> None:
    subprocess.check_call([sys.executable, "-c", WRITER, path, str(nbytes), str(partitions), str(batch_records),
                           str(RECORD_BYTES), "close" if close else "kill"], env=dict(os.environ, PYTHONPATH=code),
                          cwd=code, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def run(code: str, mb: int, partitions: int, label: str, batch_records: int = BATCH_RECORDS,
        tail_mb: int = 256) -> dict:
    path = tempfile.mkdtemp(prefix="kafkaemu-bench-datadir-")
    try:
        t0 = time.perf_counter()
        write(code, path, mb << 20, partitions, batch_records, True)
        written = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(path) for f in fs)
        out = {"label": label, "mb": written / (1 << 20), "write_s": time.perf_counter() - t0}
        out["empty_meta_s"] = start_empty(code)
        proc, sock, io, out["meta_s"], out["fetch_s"] = start(code, path)
        out["rss_start"] = rss_mb(proc.pid)
        t = time.perf_counter()
        out["swept_mb"] = sweep(sock, io, partitions) / (1 << 20)
        out["sweep_s"] = time.perf_counter() - t
        out["rss_swept"] = rss_mb(proc.pid)
        stop(proc, sock)
        proc, sock, io, out["clean_meta_s"], out["clean_fetch_s"] = start(code, path)
        out["rss_clean"] = rss_mb(proc.pid)
        stop(proc, sock, kill=True)
        proc, sock, io, out["kill_meta_s"], out["kill_fetch_s"] = start(code, path)
        out["rss_kill"] = rss_mb(proc.pid)
        stop(proc, sock)
        out["load_clean_s"] = load_seconds(code, path)    # after the clean stop just above
        out["load_unclean_s"] = load_seconds(code, path)  # the previous load ended without a clean shutdown
        write(code, path, tail_mb << 20, partitions, batch_records, False)   # then killed while writing
        proc, sock, io, out["tail_meta_s"], out["tail_fetch_s"] = start(code, path)
        out["rss_tail"] = rss_mb(proc.pid)
        out["tail_mb"] = tail_mb
        stop(proc, sock)
        return out
    finally:
        shutil.rmtree(path, ignore_errors=True)


def report(r: dict) -> None:
    print(f"{r['label']}: {r['mb']:.0f} MB data dir written in {r['write_s']:.1f} s")
    print(f"  baseline, the same start on an empty data dir: Metadata {r['empty_meta_s'] * 1000:.0f} ms")
    print(f"  restart: Metadata {r['meta_s'] * 1000:.0f} ms, first Fetch at offset 0 {r['fetch_s'] * 1000:.0f} ms, "
          f"RSS {r['rss_start']:.0f} MB")
    print(f"  sweep: {r['swept_mb']:.0f} MB fetched in {r['sweep_s']:.1f} s, RSS after {r['rss_swept']:.0f} MB")
    print(f"  after a clean stop: Metadata {r['clean_meta_s'] * 1000:.0f} ms, Fetch {r['clean_fetch_s'] * 1000:.0f} ms, "
          f"RSS {r['rss_clean']:.0f} MB")
    print(f"  after kill -9: Metadata {r['kill_meta_s'] * 1000:.0f} ms, Fetch {r['kill_fetch_s'] * 1000:.0f} ms, "
          f"RSS {r['rss_kill']:.0f} MB   (goals: restart < 1 s, RSS < 300 MB at 5 GB)")
    print(f"  data dir load alone (Broker construction, no imports): after a clean stop "
          f"{r['load_clean_s'] * 1000:.0f} ms, after an unclean one {r['load_unclean_s'] * 1000:.0f} ms")
    print(f"  killed with {r['tail_mb']} MB written after the last checkpoint (recovered on start): Metadata "
          f"{r['tail_meta_s'] * 1000:.0f} ms, Fetch {r['tail_fetch_s'] * 1000:.0f} ms, RSS {r['rss_tail']:.0f} MB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=5 * 1024, help="data to write (MiB)")
    parser.add_argument("--partitions", type=int, default=50)
    parser.add_argument("--batch-records", type=int, default=BATCH_RECORDS, help="1 KB records per batch")
    parser.add_argument("--tail-mb", type=int, default=256, help="written after the last checkpoint, then killed")
    parser.add_argument("--code", default=HERE, help="the kafkaemu checkout the server runs (PYTHONPATH)")
    args = parser.parse_args()
    report(run(args.code, args.mb, args.partitions, f"data dir {args.mb} MiB x {args.partitions} partitions, "
               f"batches of {args.batch_records} x 1 KB", args.batch_records, args.tail_mb))


if __name__ == "__main__":
    main()
