"""pytest hooks of the differential suite: ``--differential-all`` (``make differential``) runs the
scenarios marked ``differential_full`` too, which ``make test`` leaves out for time; the run's
summary counts the fields compared; ``--fidelity=docs/fidelity.md`` writes that page from the run
(``make fidelity``)."""
from __future__ import annotations

import pytest

from .ledger import LEDGER


def pytest_addoption(parser) -> None:
    group = parser.getgroup("differential", "the differential suite against Apache Kafka 4.4.0")
    group.addoption("--differential-all", action="store_true", default=False,
                    help="also run the differential scenarios marked differential_full")
    group.addoption("--fidelity", metavar="PATH", default=None,
                    help="write the differential suite's API x version table (docs/fidelity.md) to PATH")


def pytest_configure(config) -> None:
    config.addinivalue_line("markers", "differential_full: a differential scenario only `make differential` runs")


def pytest_collection_modifyitems(config, items) -> None:
    if config.getoption("--differential-all"):
        return
    skip = pytest.mark.skip(reason="part of the full differential suite: make differential")
    for item in items:
        if "differential_full" in item.keywords:
            item.add_marker(skip)


def pytest_terminal_summary(terminalreporter) -> None:
    if LEDGER.exchanges:
        terminalreporter.write_line(LEDGER.summary())


def pytest_sessionfinish(session) -> None:
    path = session.config.getoption("--fidelity")
    if path and LEDGER.exchanges:
        from .fidelity import render
        with open(path, "w") as f:
            f.write(render(LEDGER))
