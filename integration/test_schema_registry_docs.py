"""The examples of docs/schema-registry.md run as written: each Python block in a fresh
interpreter, and the curl lines against a served registry with the answers they show."""
from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from kafkaemu.testing import KafkaEmulator

DOC = Path(__file__).resolve().parents[1] / "docs" / "schema-registry.md"
TEXT = DOC.read_text()
PYTHON_BLOCKS = re.findall(r"```python\n(.*?)```", TEXT, re.S)


@pytest.mark.parametrize("index", range(len(PYTHON_BLOCKS)))
def test_python_examples_run(index):
    result = subprocess.run([sys.executable, "-c", PYTHON_BLOCKS[index]], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-3000:]
    if "print(registry.get_subjects())" in PYTHON_BLOCKS[index]:
        assert "['orders-value', 'users-value']" in result.stdout


def test_curl_examples_answer_as_shown():
    if shutil.which("curl") is None:
        pytest.skip("the curl examples need curl on PATH")
    block = TEXT.split("With curl (every line answers as shown):", 1)[1].split("\n## ", 1)[0]
    commands, current = [], ""
    for line in block.splitlines():
        line = line.strip()
        if not line or line.startswith("URL="):
            continue
        current += " " + line.rstrip("\\").strip() if line.endswith("\\") or current else line
        if not line.endswith("\\"):
            commands.append(current.strip())
            current = ""
    with KafkaEmulator(schema_registry=True) as emulator:
        for command in commands:
            shell, _, shown = command.partition("#")
            result = subprocess.run(["bash", "-c", shell], capture_output=True, text=True, timeout=30,
                                    env={"URL": emulator.get_schema_registry_url(), "PATH": "/usr/bin:/bin"})
            answer = json.loads(result.stdout)
            shown = shown.strip()
            if "..." not in shown:
                assert answer == json.loads(shown), command
            else:
                assert isinstance(answer, dict) and answer["subject"] == "orders-value", command
