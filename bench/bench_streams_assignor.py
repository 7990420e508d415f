"""The streams groups' sticky task assignor (core/streams/assignor.py) on a large group, for
BENCHMARKS.md (``make bench``): 1,000 members (250 processes of 4) and 1,000 tasks (10 subtopologies
of 100 partitions, half of them stateful, one standby replica), timed for a new group, the same
group given its assignment back, and that group after one member joins on a new process.
Median of ``--repeat`` runs, in ms."""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from kafkaemu.core.streams.assignor import MemberSpec, assign, in_kafka_order  # noqa: E402


class Topology:
    def __init__(self, subtopologies: int, partitions: int):
        self.subs = [str(i) for i in range(subtopologies)]
        self.partitions = partitions

    def subtopologies(self) -> list[str]:
        return self.subs

    def max_num_input_partitions(self, subtopology_id: str) -> int:
        return self.partitions

    def is_stateful(self, subtopology_id: str) -> bool:
        return int(subtopology_id) % 2 == 0


def timed(fn) -> tuple[float, object]:
    start = time.perf_counter()
    out = fn()
    return (time.perf_counter() - start) * 1000, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--processes", type=int, default=250)
    ap.add_argument("--members-per-process", type=int, default=4)
    ap.add_argument("--subtopologies", type=int, default=10)
    ap.add_argument("--partitions", type=int, default=100)
    ap.add_argument("--standbys", type=int, default=1)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()

    topology = Topology(args.subtopologies, args.partitions)
    members = in_kafka_order({f"member-{p}-{m}": MemberSpec(f"process-{p}")
                              for p in range(args.processes) for m in range(args.members_per_process)})
    fresh, sticky, join = [], [], []
    for _ in range(args.repeat):
        ms, first = timed(lambda: assign(members, topology, args.standbys))
        fresh.append(ms)
        given_back = {m: MemberSpec(s.process_id, first[m].active_tasks, first[m].standby_tasks)
                      for m, s in members.items()}
        sticky.append(timed(lambda: assign(given_back, topology, args.standbys))[0])
        joined = in_kafka_order(dict(given_back, **{"member-new": MemberSpec("process-new")}))
        join.append(timed(lambda: assign(joined, topology, args.standbys))[0])
    tasks = args.subtopologies * args.partitions
    print(f"sticky task assignor, {len(members)} members x {tasks} tasks, {args.standbys} standby "
          f"(median of {args.repeat}):")
    print(f"  new group                      {statistics.median(fresh):8.1f} ms")
    print(f"  assignment given back          {statistics.median(sticky):8.1f} ms")
    print(f"  one member joins (new process) {statistics.median(join):8.1f} ms")


if __name__ == "__main__":
    main()
