"""docs/security.md's table of what each API requires under the authorizer names every API the
broker implements, once, by its key and Kafka's name."""
from __future__ import annotations

import re
from pathlib import Path

from kafkaemu.handlers import REGISTRY
from kafkaemu.protocol.catalog import catalog

DOC = Path(__file__).resolve().parents[2] / "docs" / "security.md"


def table_rows() -> list[str]:
    text = DOC.read_text()
    start = text.index("| API (key) | the principal needs | when it does not |")
    rows = []
    for line in text[start:].splitlines()[2:]:
        if not line.startswith("|"):
            break
        rows.append(line.split("|")[1].strip())
    return rows


def test_the_authorization_table_lists_every_implemented_api_once():
    named = [(name, int(key)) for cell in table_rows() for name, key in re.findall(r"(\w+) \((\d+)\)", cell)]
    keys = [key for _, key in named]
    assert sorted(keys) == sorted({k for k, _, _ in REGISTRY.versions()})
    assert len(keys) == len(set(keys))
    assert all(catalog().api_name(key) == name for name, key in named), named
