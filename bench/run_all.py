"""`make bench`: run every bench/bench_*.py in turn and print what each measures."""
import subprocess
import sys
from pathlib import Path

here = Path(__file__).resolve().parent
failed = []
for script in sorted(here.glob("bench_*.py")):
    print(f"== {script.name}", flush=True)
    if subprocess.call([sys.executable, str(script)]) != 0:
        failed.append(script.name)
if failed:
    print("failed:", ", ".join(failed))
    sys.exit(1)
