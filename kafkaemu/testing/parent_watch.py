"""Make a child process die with the process that started it, even when that one is SIGKILLed.

``ParentWatch(pid)`` starts a watchdog process (this file run as a script) whose stdin is the read
end of a pipe; only the starting process holds the write end. The kernel closes that end when the
starting process dies, however it dies (kill -9, a crash, an exit without ``stop()``), so the
watchdog reads end-of-file and signals the child: ``signum`` (SIGKILL unless told), then SIGKILL if
the child has not exited ``grace_s`` seconds later. ``release()`` is the clean stop: it ends the
watchdog without signalling the child, which the caller then stops itself.

Why a process rather than Linux's PR_SET_PDEATHSIG: that signal fires when the *thread* that started
the child exits (a fixture run on a worker thread would kill its broker early), it needs a
``preexec_fn`` (unsafe in a threaded parent) and it exists only on Linux; the pipe works on every
POSIX system. On Linux the watchdog holds a pidfd of the child from its start, so a child that exits
on its own and whose PID is then reused is never mistaken for it.

A process forked from the starting process without exec holds the write end too: the child then
lives until that one has exited as well. Processes started with exec (``subprocess``) do not, as
the write end is close-on-exec.
"""
from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import time


class ParentWatch:
    """A watchdog that signals process ``pid`` once the process that made this object has died."""

    def __init__(self, pid: int, *, signum: int = signal.SIGKILL, grace_s: float = 0) -> None:
        read_end, self._write_end = os.pipe()   # both close-on-exec: no other child inherits them
        try:
            # its own session: a Ctrl-C or a signal to the starting process's group leaves it to do its job
            self._process = subprocess.Popen(
                [sys.executable, "-I", "-S", __file__, str(pid), str(int(signum)), str(grace_s)],
                stdin=read_end, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        except BaseException:
            os.close(self._write_end)
            raise
        finally:
            os.close(read_end)

    @property
    def pid(self) -> int:
        return self._process.pid

    def release(self) -> None:
        """End the watchdog, leaving the child alone (the caller stops it)."""
        if self._process.poll() is None:
            self._process.kill()   # before the pipe closes, so that it never signals the child
        self._process.wait()
        if self._write_end >= 0:
            os.close(self._write_end)
            self._write_end = -1


def _open(pid: int) -> int | None:
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):   # not Linux, or a kernel before 5.3, or the child is gone
        return None


def _send(pid: int, pidfd: int | None, signum: int) -> None:
    try:
        if pidfd is None:
            os.kill(pid, signum)
        else:
            signal.pidfd_send_signal(pidfd, signum)
    except ProcessLookupError:
        pass


def _exits_within(pid: int, pidfd: int | None, seconds: float) -> bool:
    if pidfd is not None:   # readable once the process has exited
        poller = select.poll()
        poller.register(pidfd, select.POLLIN)
        return bool(poller.poll(seconds * 1000))
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.1)
    return False


def _watch(pid: int, signum: int, grace_s: float) -> None:
    pidfd = _open(pid)
    while os.read(0, 4096):   # nothing is ever written: this returns b"" when the starting process is gone
        pass
    _send(pid, pidfd, signum)
    if signum != signal.SIGKILL and not _exits_within(pid, pidfd, grace_s):
        _send(pid, pidfd, signal.SIGKILL)


if __name__ == "__main__":
    _watch(int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]))
