"""Client quotas kept in the data directory (``<data dir>/client-quotas.json``), rewritten whole on
every change (as the controller's quota records, they survive a restart)."""
from __future__ import annotations

import os

from ..logging import get_logger
from ..core.quotas.entities import from_json, to_json
from .files import write_atomically

FILE = "client-quotas.json"
log = get_logger("kafkaemu.quotas")


def load(data_dir: str) -> dict:
    """The quotas a previous run stored; none without a file. A file that does not parse is moved
    aside with a warning, so a damaged file does not stop the broker."""
    import json   # (with a data dir only)
    path = os.path.join(data_dir, FILE)
    try:
        with open(path, encoding="utf-8") as f:
            return from_json(json.load(f)["quotas"])
    except FileNotFoundError:
        return {}
    except (OSError, ValueError, KeyError, TypeError) as exc:
        os.replace(path, path + ".corrupt")
        log.warning("client_quotas_file_unreadable", path=path, error=str(exc), kept_as=path + ".corrupt")
        return {}


def save(data_dir: str, entries: dict) -> None:
    import json   # (with a data dir only)
    data = json.dumps({"version": 1, "quotas": to_json(entries)}, indent=1).encode()
    write_atomically(os.path.join(data_dir, FILE), data)
