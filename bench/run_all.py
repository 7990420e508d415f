"""`make bench`: run every bench/bench_*.py in turn and print what each measures. With ``--record``,
the scripts that record their tables (bench_peer.py) write them into BENCHMARKS.md."""
import subprocess
import sys
from pathlib import Path

RECORDING = {"bench_peer.py"}   # scripts that take --record

here = Path(__file__).resolve().parent
record = "--record" in sys.argv[1:]
failed = []
for script in sorted(here.glob("bench_*.py")):
    print(f"== {script.name}", flush=True)
    extra = ["--record"] if record and script.name in RECORDING else []
    if subprocess.call([sys.executable, str(script), *extra]) != 0:
        failed.append(script.name)
if failed:
    print("failed:", ", ".join(failed))
    sys.exit(1)
