"""No import cycles in kafkaemu: between modules (imports inside functions count, ``if
TYPE_CHECKING:`` ones never run and do not), nor between its top-level packages, so each package
can be read, tested and replaced with only what is below it."""
from tests.import_graph import cycles, graph, read_imports, top_level


def describe(found: list[list[str]]) -> str:
    return "; ".join(" -> ".join(cycle) for cycle in found)


SOURCE = """
from __future__ import annotations
import json
from typing import TYPE_CHECKING
from . import sibling
from ..other import name
if TYPE_CHECKING:
    from ..broker import Broker
else:
    from .runtime import Thing

def later():
    from ...protocol.spec import FieldSpec
"""


def test_the_imports_are_read_as_python_runs_them():
    run = {"__future__", "__future__.annotations", "json", "typing", "typing.TYPE_CHECKING",
           "kafkaemu.pkg.sub", "kafkaemu.pkg.sub.sibling", "kafkaemu.pkg.other", "kafkaemu.pkg.other.name",
           "kafkaemu.pkg.sub.runtime", "kafkaemu.pkg.sub.runtime.Thing",
           "kafkaemu.protocol.spec", "kafkaemu.protocol.spec.FieldSpec"}  # a function's imports count
    assert read_imports(SOURCE, "kafkaemu.pkg.sub", type_checking=False) == run
    typed = {"kafkaemu.pkg.broker", "kafkaemu.pkg.broker.Broker"}
    assert read_imports(SOURCE, "kafkaemu.pkg.sub") == run | typed


def test_importing_a_module_runs_its_packages():
    edges = graph()
    assert "kafkaemu.protocol.primitives" in edges["kafkaemu.protocol.fastcodec"]
    assert {"kafkaemu.core.consumer.assignors", "kafkaemu.core.consumer", "kafkaemu.core"} <= edges["kafkaemu.config"]
    assert "kafkaemu.protocol" not in edges["kafkaemu.protocol.fastcodec"]  # its own package is under way
    assert "kafkaemu.storage" not in edges["kafkaemu.storage.record_batch"]   # from . import compression


def test_cycles_are_found_and_named():
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set(), "e": {"e2"}, "e2": {"e"}}
    assert describe(cycles(edges)) == "a -> b -> c -> a; e -> e2 -> e"


def test_no_module_imports_itself_through_others():
    found = cycles(graph())
    assert not found, f"import cycles: {describe(found)}"


def test_no_package_imports_itself_through_others():
    found = cycles(top_level(graph()))
    assert not found, f"import cycles between kafkaemu's packages: {describe(found)}"
