"""GROUP config resources (share.*, consumer.*) kept in the data directory
(``<data dir>/group-configs.json``), rewritten whole on every change: Kafka keeps them as the
controller's config records, so they survive a restart."""
from __future__ import annotations

import json
import os

from ..logging import get_logger
from .files import write_atomically

FILE = "group-configs.json"
log = get_logger("kafkaemu.share_groups")


def load(data_dir: str) -> dict[str, dict[str, str]]:
    """The configs a previous run stored, by group; none without a file. A file that does not parse
    is moved aside with a warning, so a damaged file does not stop the broker."""
    path = os.path.join(data_dir, FILE)
    try:
        with open(path, encoding="utf-8") as f:
            return {str(group): {str(k): str(v) for k, v in configs.items()}
                    for group, configs in json.load(f)["groups"].items()}
    except FileNotFoundError:
        return {}
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        os.replace(path, path + ".corrupt")
        log.warning("group_configs_file_unreadable", path=path, error=str(exc), kept_as=path + ".corrupt")
        return {}


def save(data_dir: str, configs: dict[str, dict[str, str]]) -> None:
    data = json.dumps({"version": 1, "groups": {g: c for g, c in configs.items() if c}}, indent=1).encode()
    write_atomically(os.path.join(data_dir, FILE), data)
