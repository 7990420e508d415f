"""kafkaemu/testing/parent_watch.py: a child dies with the process that started it, however that one
dies, and a released watch leaves the child alone."""
import subprocess

from kafkaemu.testing.parent_watch import ParentWatch

from .orphans import alive, kill, orphan_of_killed_parent, orphans_of_killed_parent, wait_gone

STARTS_A_SLEEPER = """
import signal, subprocess, sys
from kafkaemu.testing.parent_watch import ParentWatch
child = subprocess.Popen(["sleep", "3600"], start_new_session=True)
watch = ParentWatch(child.pid)
print(child.pid, flush=True)
"""


def test_a_watched_child_dies_when_its_parent_is_killed():
    pid = orphan_of_killed_parent(STARTS_A_SLEEPER)
    try:
        assert wait_gone(pid)
    finally:
        kill(pid)


def test_a_child_that_ignores_the_signal_is_killed_after_the_grace():
    code = """
import signal, subprocess, sys
from kafkaemu.testing.parent_watch import ParentWatch
child = subprocess.Popen([sys.executable, "-c", "import signal, time, sys; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
                          "print('ready', flush=True); time.sleep(3600)"], stdout=subprocess.PIPE, text=True,
                         start_new_session=True)
assert child.stdout.readline() == "ready\\n"
watch = ParentWatch(child.pid, signum=signal.SIGTERM, grace_s=0.5)
print(child.pid, flush=True)
"""
    pid = orphan_of_killed_parent(code)
    try:
        assert wait_gone(pid)
    finally:
        kill(pid)


def test_a_released_watch_leaves_the_child_alone():
    child = subprocess.Popen(["sleep", "3600"])
    try:
        watch = ParentWatch(child.pid)
        watchdog = watch.pid
        watch.release()
        assert not alive(watchdog)
        assert child.poll() is None
    finally:
        child.kill()
        child.wait()


def test_a_child_started_later_does_not_keep_the_watched_one_alive():
    """The pipe's write end is close-on-exec: a process the parent starts afterwards, inheriting every
    inheritable descriptor and outliving the parent, does not hold it."""
    code = STARTS_A_SLEEPER.replace(
        "print(child.pid, flush=True)",
        "other = subprocess.Popen(['sleep', '3600'], close_fds=False, start_new_session=True)\n"
        "print(child.pid, other.pid, flush=True)")
    watched, other = orphans_of_killed_parent(code)
    try:
        assert wait_gone(watched)
        assert alive(other)
    finally:
        kill(watched)
        kill(other)
