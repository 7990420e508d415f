"""Top functions by self time from a ``py-spy record --format raw`` file (BENCHMARKS.md's profiles).

    python bench/py_spy_top.py RAW [--within FUNC] [-n 12]

Only samples whose stack passes through ``--within`` count (e.g. the measured loop), so set-up
is left out. Self time: the sample's innermost Python frame; lines of one function are merged."""
import argparse
import re
from collections import Counter

ap = argparse.ArgumentParser()
ap.add_argument("raw")
ap.add_argument("--within", default=None)
ap.add_argument("-n", type=int, default=12)
ap.add_argument("--inclusive", action="store_true", help="time in a function and what it calls")
args = ap.parse_args()
frame_re = re.compile(r"^(.*) \((.*?)(?::\d+)?\)$")
self_time, total = Counter(), 0
for line in open(args.raw):
    stack, _, count = line.rstrip("\n").rpartition(" ")
    frames = stack.split(";")
    if args.within and not any(f.startswith(args.within + " ") for f in frames):
        continue
    total += int(count)
    names = set()
    for frame in (frames if args.inclusive else frames[-1:]):
        m = frame_re.match(frame)
        names.add(f"{m.group(1)} ({m.group(2).split('site-packages/')[-1].split('reqpath/')[-1]})" if m else frame)
    for name in names:
        self_time[name] += int(count)
print(f"{total} samples")
for name, n in self_time.most_common(args.n):
    print(f"{100 * n / total:5.1f}%  {name}")
