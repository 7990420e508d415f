"""ACLs kept in the data directory (``<data dir>/acls.json``), rewritten whole on every change."""
from __future__ import annotations

import json
import os

from ..logging import get_logger
from . import json_file
from .acl import Acl

FILE = "acls.json"
log = get_logger("kafkaemu.authorizer")


def load(data_dir: str) -> list[Acl]:
    """The ACLs a previous run stored; none when there is no file. A file that does not parse is
    moved aside with a warning, so a damaged file does not stop the broker."""
    path = os.path.join(data_dir, FILE)
    try:
        with open(path, encoding="utf-8") as f:
            return [Acl.from_json(item) for item in json.load(f)["acls"]]
    except FileNotFoundError:
        return []
    except (OSError, ValueError, KeyError, TypeError) as exc:
        os.replace(path, path + ".corrupt")
        log.warning("acl_file_unreadable", path=path, error=str(exc), kept_as=path + ".corrupt")
        return []


def save(data_dir: str, acls: list[Acl]) -> None:
    json_file.write(os.path.join(data_dir, FILE), {"version": 1, "acls": [acl.to_json() for acl in acls]}, indent=1)
