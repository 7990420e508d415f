"""pytest hooks of the differential suite: the run's summary counts the fields compared, and
``--fidelity=docs/fidelity.md`` writes that page from the run (``make fidelity``)."""
from __future__ import annotations

from .ledger import LEDGER


def pytest_addoption(parser) -> None:
    group = parser.getgroup("differential", "the differential suite against Apache Kafka 4.4.0")
    group.addoption("--fidelity", metavar="PATH", default=None,
                    help="write the differential suite's API x version table (docs/fidelity.md) to PATH")


def pytest_terminal_summary(terminalreporter) -> None:
    if LEDGER.exchanges:
        terminalreporter.write_line(LEDGER.summary())


def pytest_sessionfinish(session) -> None:
    path = session.config.getoption("--fidelity")
    if path and LEDGER.exchanges:
        from .fidelity import render
        with open(path, "w") as f:
            f.write(render(LEDGER))
