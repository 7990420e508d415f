"""Whole-file writes of the data directory's small files (checkpoints, snapshots, topics.json)."""
from __future__ import annotations

import os


def write_atomically(path: str, data: bytes) -> None:
    """``path`` holds ``data`` or, when the write fails (a full disk), what it held before: the
    data goes to ``<path>.tmp``, renamed over ``path``; a failed ``.tmp`` is removed to give its
    space back, and the OSError raised."""
    tmp = path + ".tmp"
    try:
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
