"""No handler keeps a branch for versions it never sees. A request below an API's oldest version
(or above its newest) closes the connection before any handler runs (KIP-896's removed versions;
``test_data_path_handlers.test_versions_kafka_4_removed_close_the_connection``), so a comparison of
the request's version with a constant that is true, or false, at every version the handler
registers for guards dead code: Produce v0-2's legacy message sets, Fetch v0-3's down-conversion,
ListOffsets v0's offset lists, OffsetCommit v1's client timestamps were such code."""
from __future__ import annotations

import ast
import operator
from pathlib import Path

import pytest

import kafkaemu.handlers
from kafkaemu.handlers.index import HANDLERS

HANDLER_DIR = Path(kafkaemu.handlers.__file__).resolve().parent
# what the handlers call the request's version: a local ``v`` or ``version``, or ``ctx.api_version``
VERSION_NAMES = {"v", "version", "api_version"}
OPS = {ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge, ast.Eq: operator.eq,
       ast.NotEq: operator.ne}


def _is_version(node: ast.AST) -> bool:
    return (isinstance(node, ast.Name) and node.id in VERSION_NAMES
            or isinstance(node, ast.Attribute) and node.attr == "api_version")


def _is_int(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and type(node.value) is int


def version_comparisons(source: str) -> list[ast.Compare]:
    """Comparisons of the request's version with integer constants only (``v >= 4``, ``2 <= v <= 4``)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare) and all(type(op) in OPS for op in node.ops):
            operands = [node.left, *node.comparators]
            if any(map(_is_version, operands)) and all(_is_version(o) or _is_int(o) for o in operands):
                found.append(node)
    return sorted(found, key=lambda node: (node.lineno, node.col_offset))


def outcome(node: ast.Compare, version: int) -> bool:
    values = [version if _is_version(o) else o.value for o in (node.left, *node.comparators)]
    return all(OPS[type(op)](a, b) for op, a, b in zip(node.ops, values, values[1:]))


def constant_comparisons(source: str, low: int, high: int) -> list[str]:
    """Each comparison whose outcome is the same at every version in [low, high]."""
    return [f"line {node.lineno}: {ast.unparse(node)}" for node in version_comparisons(source)
            if len({outcome(node, v) for v in range(low, high + 1)}) == 1]


def test_the_check_finds_a_branch_below_the_oldest_version():
    source = "def f(ctx, req):\n    v = ctx.api_version\n    x = 1 if v <= 3 else 2\n    y = ctx.api_version >= 9\n" \
             "    z = 2 <= v <= 3\n"
    assert constant_comparisons(source, 4, 18) == ["line 3: v <= 3", "line 5: 2 <= v <= 3"]
    assert constant_comparisons(source, 3, 18) == []
    assert constant_comparisons(source, 10, 18) == ["line 3: v <= 3", "line 4: ctx.api_version >= 9",
                                                    "line 5: 2 <= v <= 3"]


@pytest.mark.parametrize("module, low, high", sorted(HANDLERS.values()), ids=lambda x: str(x))
def test_no_handler_branches_on_a_version_it_never_sees(module, low, high):
    source = (HANDLER_DIR / f"{module}.py").read_text()
    assert constant_comparisons(source, low, high) == [], \
        f"handlers/{module}.py (v{low}-v{high}) compares its version where the outcome never changes"
