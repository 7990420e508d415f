"""The topology a test hands the streams task assignor (its TopologyDescriber)."""
from __future__ import annotations


class Topology:
    """The assignor's view of a topology: each subtopology's task count, and which are stateful."""

    def __init__(self, sizes: dict[str, int] | None = None, stateful: set[str] | None = None):
        self.sizes: dict[str, int] = {} if sizes is None else sizes
        self.stateful: set[str] = set() if stateful is None else stateful

    def subtopologies(self) -> list[str]:
        return list(self.sizes)

    def max_num_input_partitions(self, subtopology_id: str) -> int:
        return self.sizes[subtopology_id]

    def is_stateful(self, subtopology_id: str) -> bool:
        return subtopology_id in self.stateful

    def __repr__(self) -> str:
        return f"Topology({self.sizes}, stateful={sorted(self.stateful)})"

    def tasks(self) -> list[tuple[str, int]]:
        return [(s, p) for s, n in self.sizes.items() for p in range(n)]
