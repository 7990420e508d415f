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
