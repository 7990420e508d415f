"""``make test`` says what it installs before it installs anything."""
import pathlib
import shutil
import subprocess

import pytest

REPO = pathlib.Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("target", ["test", "integration"])
def test_make_says_up_front_that_it_installs_pyspark_and_chromium(target):
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    plan = subprocess.run(["make", "-n", "-C", str(REPO), target], capture_output=True, text=True, timeout=60)
    first = [line for line in plan.stdout.splitlines() if not line.startswith("make")][0]
    assert first.startswith("echo") and "pyspark" in first and "chromium" in first


def test_make_run_serves_kafka_the_control_api_and_the_web_page_and_prints_where():
    import os
    import signal
    import urllib.request
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    if not (REPO / ".venv" / ".installed-run").exists():
        pytest.skip("no .venv with kafkaemu installed (make run installs it; this test does not)")
    proc = subprocess.Popen(["make", "-s", "-C", str(REPO), "run", "PORT=0", "CONTROL_PORT=0"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        lines = [proc.stdout.readline() for _ in range(3)]
        assert lines[0].startswith("kafkaemu listening on 127.0.0.1:"), (lines, proc.stderr.read() if not lines[0] else "")
        assert lines[1].startswith("kafkaemu control on http://127.0.0.1:"), lines
        control = lines[1].split()[-1]
        assert lines[2] == f"kafkaemu web page on {control}/\n", lines
        with urllib.request.urlopen(control + "/api/clock", timeout=10) as resp:
            assert "now_ms" in resp.read().decode()
        with urllib.request.urlopen(lines[2].split()[-1], timeout=10) as resp:
            assert resp.status == 200 and "<!doctype html>" in resp.read().decode().lower()
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.communicate(timeout=30)
