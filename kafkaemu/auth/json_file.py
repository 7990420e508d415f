"""The security state's files in the data directory (ACLs, SCRAM credentials, delegation tokens):
JSON, rewritten whole and synced on every change."""
from __future__ import annotations

import os


def write(path: str, data, indent: int | None = None) -> None:
    """``path`` holds ``data`` as JSON: written to ``<path>.tmp``, synced, renamed over ``path``."""
    import json   # (with a data dir only)
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(data, f, indent=indent)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
