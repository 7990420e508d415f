"""What the differential suite compared, for the test run's summary and docs/fidelity.md."""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from .compare import Difference
from .known import Known


@dataclass
class Found:
    scenario: str
    label: str
    difference: Difference
    known: Known | None


@dataclass
class Cell:
    """One API at one version."""
    exchanges: int = 0
    fields: int = 0
    found: list[Found] = field(default_factory=list)


class Ledger:
    def __init__(self) -> None:
        self.cells: dict[tuple[str, int], Cell] = defaultdict(Cell)
        self.normalised: dict[str, str] = {}
        self.scenarios: set[str] = set()
        self.advertised: dict[str, dict[str, tuple[int, int] | None]] = {}   # api -> broker -> range

    @property
    def fields(self) -> int:
        return sum(c.fields for c in self.cells.values())

    @property
    def exchanges(self) -> int:
        return sum(c.exchanges for c in self.cells.values())

    def matched(self) -> set:
        return {f.known for c in self.cells.values() for f in c.found if f.known is not None}

    def record(self, api: str, version: int, scenario: str, label: str, fields: int, found: list[Found]) -> None:
        cell = self.cells[(api, version)]
        cell.exchanges += 1
        cell.fields += fields
        cell.found.extend(found)
        self.scenarios.add(scenario)

    def summary(self) -> str:
        different = sum(1 for c in self.cells.values() if c.found)
        return (f"differential: {self.fields} fields compared in {self.exchanges} exchanges of "
                f"{len(self.scenarios)} scenarios; {len(self.cells)} API versions, {different} with differences")


LEDGER = Ledger()
