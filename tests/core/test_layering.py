"""The core's shape: it is pure (no storage, wire, server or handlers), and its classic, consumer and
offsets packages meet only through the shared modules (context, group_api, timers, ...)."""
import ast
from pathlib import Path

import pytest

import kafkaemu.core

CORE = Path(kafkaemu.core.__file__).parent
PACKAGES = ("classic", "consumer", "offsets", "transactions")
OUTSIDE_THE_CORE = ("kafkaemu.storage", "kafkaemu.wire", "kafkaemu.server", "kafkaemu.handlers",
                    "kafkaemu.broker", "kafkaemu.testing")


def module_name(path: Path) -> str:
    parts = path.relative_to(CORE.parent.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path) -> set[str]:
    """Absolute names of every module ``path`` imports (relative imports resolved)."""
    package = module_name(path).rsplit(".", 0 if path.name == "__init__.py" else 1)[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            found.add(base)
            found.update(f"{base}.{a.name}" for a in node.names)
    return found


MODULES = sorted(CORE.rglob("*.py"))


def test_the_imports_are_resolved():
    assert "kafkaemu.core.group_api" in imports(CORE / "offsets" / "manager.py")
    assert "kafkaemu.core.classic.group" in imports(CORE / "classic" / "manager.py")


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(CORE)))
def test_the_core_imports_no_storage_wire_server_or_handlers(path):
    assert not [name for name in imports(path) if name.startswith(OUTSIDE_THE_CORE)]


@pytest.mark.parametrize("package", PACKAGES)
def test_the_group_packages_do_not_import_each_other(package):
    others = tuple(f"kafkaemu.core.{p}" for p in PACKAGES if p != package)
    for path in (CORE / package).rglob("*.py"):
        assert not [n for n in imports(path) if n.startswith(others)], path
