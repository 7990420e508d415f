"""`kafkaemu serve` raises its soft open-files limit to the hard one at start-up (one connection
is one file descriptor); an emulator in a test process leaves that process's limit alone."""
import subprocess
import sys
from pathlib import Path

import pytest

resource = pytest.importorskip("resource", reason="needs POSIX resource limits")

LOW = 256


def _limits(pid: int) -> tuple[str, str]:
    for line in Path(f"/proc/{pid}/limits").read_text().splitlines():
        if line.startswith("Max open files"):
            soft, hard = line.split()[3:5]
            return soft, hard
    raise AssertionError("no open-files line")


def _lower_soft_limit():
    resource.setrlimit(resource.RLIMIT_NOFILE, (LOW, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))


@pytest.mark.skipif(not Path("/proc/self/limits").exists(), reason="needs /proc/<pid>/limits (Linux)")
def test_serve_raises_a_low_soft_limit_to_the_hard_limit():
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    if hard != resource.RLIM_INFINITY and hard <= LOW:
        pytest.skip(f"the hard open-files limit ({hard}) is not above {LOW}")
    proc = subprocess.Popen([sys.executable, "-m", "kafkaemu", "serve", "--port", "0", "--log-level", "info"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=_lower_soft_limit)
    try:
        assert "listening on" in proc.stdout.readline()
        soft, reported_hard = _limits(proc.pid)
        assert soft == reported_hard and soft != str(LOW)
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=10)
    assert "open_files_limit_raised" in err


def test_the_emulator_leaves_its_test_process_limit_alone():
    from kafkaemu.testing.emulator import KafkaEmulator
    before = resource.getrlimit(resource.RLIMIT_NOFILE)
    with KafkaEmulator():
        assert resource.getrlimit(resource.RLIMIT_NOFILE) == before
