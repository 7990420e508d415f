"""What the data-directory tests share (integration/test_storage_faults.py too): a store on a data
directory, and a small tmpfs to fill for a full disk."""
from __future__ import annotations

import errno
import os
import subprocess
from contextlib import contextmanager

import pytest

from kafkaemu.storage.data_dir import DataDir
from kafkaemu.storage.log_store import LogStore


def open_store(path, tail_cache_bytes: int = 0) -> LogStore:
    """A store on the data directory ``path``; reads go to the files unless a tail budget is given."""
    store = LogStore()
    DataDir(str(path), tail_cache_bytes).attach(store)
    return store


@contextmanager
def small_tmpfs(tmp_path, size: str):
    """A tmpfs of ``size`` (as mount's size=, e.g. "512k") at ``tmp_path/disk``: writes past it fail
    with ENOSPC. Root only: skips where it cannot be mounted."""
    mount = tmp_path / "disk"
    mount.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root")
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(mount)], capture_output=True)
    if done.returncode:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode().strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def fill(path) -> None:
    """Write a filler file at ``path`` until the disk is full."""
    with open(path, "wb", buffering=0) as f:
        try:
            while True:
                f.write(b"\0" * 4096)
        except OSError as exc:
            assert exc.errno == errno.ENOSPC
