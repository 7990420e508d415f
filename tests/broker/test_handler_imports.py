"""Handlers see the broker only through their context: nothing in ``kafkaemu/handlers/`` imports
from ``kafkaemu.broker`` but ``kafkaemu.broker.context`` (read from the source, TYPE_CHECKING
imports included)."""
import ast
from pathlib import Path

import pytest

import kafkaemu.handlers

HANDLERS = Path(kafkaemu.handlers.__file__).parent
ALLOWED = "kafkaemu.broker.context"


def imported_modules(path: Path) -> set[str]:
    """The absolute names of the modules ``path`` imports from (relative imports resolved)."""
    package = ["kafkaemu", "handlers"]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package[:len(package) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
                if not node.module:   # "from .. import broker": the names are modules
                    found.update(f"{base}.{a.name}" for a in node.names)
                    continue
            found.add(base)
    return found


def test_relative_imports_are_resolved():
    assert "kafkaemu.broker.context" in imported_modules(HANDLERS / "fetch.py")
    assert "kafkaemu.handlers.registry" in imported_modules(HANDLERS / "fetch.py")
    assert "kafkaemu.protocol.errors" in imported_modules(HANDLERS / "fetch.py")


@pytest.mark.parametrize("path", sorted(HANDLERS.glob("*.py")), ids=lambda p: p.name)
def test_handlers_import_only_the_context_from_the_broker(path):
    reached = [m for m in imported_modules(path)
               if (m == "kafkaemu.broker" or m.startswith("kafkaemu.broker.")) and m != ALLOWED]
    assert not reached, f"{path.name} imports {reached}; handlers get what they need from the RequestContext"
