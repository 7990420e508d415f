"""CLIENT_METRICS subscriptions kept in the data directory (``<data dir>/client-metrics.json``),
rewritten whole on every change (as the controller's config records, they survive a restart)."""
from __future__ import annotations

import os

from ..logging import get_logger
from .files import write_atomically

FILE = "client-metrics.json"
log = get_logger("kafkaemu.telemetry")


def load(data_dir: str) -> dict[str, dict[str, str]]:
    """The subscriptions a previous run stored; none without a file. A file that does not parse is
    moved aside with a warning, so a damaged file does not stop the broker."""
    import json   # (with a data dir only)
    path = os.path.join(data_dir, FILE)
    try:
        with open(path, encoding="utf-8") as f:
            return {str(name): {str(k): str(v) for k, v in configs.items()}
                    for name, configs in json.load(f)["subscriptions"].items()}
    except FileNotFoundError:
        return {}
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        os.replace(path, path + ".corrupt")
        log.warning("client_metrics_file_unreadable", path=path, error=str(exc), kept_as=path + ".corrupt")
        return {}


def save(data_dir: str, subscriptions: dict[str, dict[str, str]]) -> None:
    import json   # (with a data dir only)
    data = json.dumps({"version": 1, "subscriptions": subscriptions}, indent=1).encode()
    write_atomically(os.path.join(data_dir, FILE), data)
