"""kafkaemu's imports as its source states them (read with ``ast``, nothing imported): what each
module imports, and the cycles among them. Used by the layering and import-cycle tests."""
from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

import kafkaemu

PACKAGE = Path(kafkaemu.__file__).parent
MODULES: dict[str, Path] = {}


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


for _path in sorted(PACKAGE.rglob("*.py")):
    MODULES[module_name(_path)] = _path


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or \
        (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


@cache
def imports(path: Path, type_checking: bool = True) -> frozenset[str]:
    """Absolute names of everything the module at ``path`` imports (see ``read_imports``)."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    return read_imports(path.read_text(), package, type_checking)


def read_imports(source: str, package: str, type_checking: bool = True) -> frozenset[str]:
    """Absolute names of everything ``source`` (a module of ``package``) imports, at any depth
    (functions included), relative imports resolved: ``from .x import y`` gives ``package.x`` and
    ``package.x.y`` (a module or a name). ``type_checking=False`` leaves out the imports under
    ``if TYPE_CHECKING:`` (never run)."""
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child) and not type_checking:
                for other in child.orelse:
                    visit_one(other)
                continue
            visit_one(child)

    def visit_one(node: ast.AST) -> None:
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            found.add(base)
            found.update(f"{base}.{a.name}" for a in node.names)
        visit(node)

    visit(ast.parse(source))
    return frozenset(found)


def _packages_of(name: str) -> list[str]:
    parts = name.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))]


def graph() -> dict[str, set[str]]:
    """Each kafkaemu module -> the kafkaemu modules that importing it runs (TYPE_CHECKING imports
    left out). Importing ``a.b.c`` also runs the packages ``a.b`` and ``a``, except the packages the
    importer is inside (Python runs those before the importer: ``from . import x`` needs no edge)."""
    edges: dict[str, set[str]] = {}
    for name, path in MODULES.items():
        inside = set(_packages_of(name)) | {name}
        targets = set()
        for imported in imports(path, type_checking=False):
            if imported not in MODULES:
                continue  # a name imported from a module, or not kafkaemu's
            targets.update(m for m in (*_packages_of(imported), imported) if m in MODULES and m not in inside)
        edges[name] = targets
    return edges


def top_level(edges: dict[str, set[str]]) -> dict[str, set[str]]:
    """The same graph between kafkaemu's top-level packages and modules (``kafkaemu.core``, ...)."""
    def top(name: str) -> str:
        return ".".join(name.split(".")[:2])
    out: dict[str, set[str]] = {}
    for source, targets in edges.items():
        out.setdefault(top(source), set()).update(top(t) for t in targets if top(t) != top(source))
    return out


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """One cycle through each strongly connected group of nodes, as ``[a, b, ..., a]``."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[set[str]] = []

    def connect(node: str) -> None:  # Tarjan's algorithm
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(edges.get(node, ())):
            if target not in index:
                connect(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            group = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.add(member)
                if member == node:
                    break
            if len(group) > 1:
                groups.append(group)

    for node in sorted(edges):
        if node not in index:
            connect(node)
    return [_cycle_through(min(group), group, edges) for group in groups]


def _cycle_through(start: str, group: set[str], edges: dict[str, set[str]]) -> list[str]:
    """The shortest path from ``start`` back to itself inside ``group`` (breadth first)."""
    came_from: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for target in sorted(edges[node] & group):
                if target == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(came_from[path[-1]])
                    return [*reversed(path), start]
                if target not in came_from:
                    came_from[target] = node
                    following.append(target)
        frontier = following
    raise AssertionError(f"no cycle through {start}")
