"""Whether a process outlives the Python process that started it: ``orphan_of_killed_parent(code)``
runs ``code`` in a child Python process, which prints the PID of the process it started; the child
is then killed with SIGKILL (no clean-up runs) and that PID returned. ``wait_gone(pid)`` waits,
bounded, until that process has exited."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def orphan_of_killed_parent(code: str) -> int:
    """``code`` ends with printing the PID of what it started (then it sleeps)."""
    return orphans_of_killed_parent(code)[0]


def orphans_of_killed_parent(code: str) -> list[int]:
    """``code`` ends with printing the PIDs of what it started on one line, space separated."""
    parent = subprocess.Popen([sys.executable, "-c", textwrap.dedent(code) + "\nimport time\ntime.sleep(3600)\n"],
                              stdout=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        line = parent.stdout.readline()   # blocks until the child has started what it starts
        assert line.split() and all(p.isdigit() for p in line.split()), \
            f"the parent printed {line!r} (exit status {parent.poll()})"
        return [int(p) for p in line.split()]
    finally:
        os.kill(parent.pid, signal.SIGKILL)
        parent.wait()
        parent.stdout.close()


def alive(pid: int) -> bool:
    """True while ``pid`` runs (a zombie, exited but not yet reaped, has not)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except FileNotFoundError:
        return False
    except OSError:   # no /proc
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True


def wait_gone(pid: int, limit_s: float = 60) -> bool:
    """Whether ``pid`` has exited within ``limit_s`` (a bound on waiting, not a speed asserted)."""
    deadline = time.monotonic() + limit_s
    while alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def kill(pid: int) -> None:
    """Clean up after a test that failed: the orphan's end."""
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
