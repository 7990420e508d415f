"""The examples of the README and docs/ as written: every fenced ``sh`` block is run by bash (errors
stop it) from the repository's root, with this interpreter's ``kafkaemu`` on the PATH; every ``python``
block is valid Python, and the README's run as written (a test file by pytest). (The other Python
blocks of docs/ are fragments of a test: they use a producer, consumers or certificate files the
reader brings.)"""
import os
import pathlib
import re
import shutil
import subprocess
import sys

import pytest

REPO = pathlib.Path(__file__).resolve().parents[1]
DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
BLOCK = re.compile(r"^```sh\n(.*?)^```", re.S | re.M)


def shell_blocks():
    for doc in DOCS:
        for n, match in enumerate(BLOCK.finditer(doc.read_text())):
            yield pytest.param(match.group(1), id=f"{doc.relative_to(REPO)}#{n + 1}")


def test_the_docs_have_shell_examples():
    assert list(shell_blocks())


@pytest.mark.parametrize("block", list(shell_blocks()))
def test_a_shell_example_runs_as_written(block, tmp_path):
    bin_dir = pathlib.Path(sys.executable).parent
    if not (bin_dir / "kafkaemu").exists():
        pytest.skip(f"no kafkaemu command beside {sys.executable} (pip install -e . installs it)")
    tools = ["bash", "curl"] + ["java", "javac"] * ("javac " in block) + ["kcat"] * ("kcat " in block)
    missing = [tool for tool in tools if shutil.which(tool) is None]
    if missing:
        pytest.skip(f"this shell example needs {', '.join(missing)}")
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}", "TMPDIR": str(tmp_path)}
    done = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", block], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"exit {done.returncode}\n{done.stdout}\n{done.stderr}"


PYTHON_BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


def python_blocks():
    for doc in DOCS:
        for n, match in enumerate(PYTHON_BLOCK.finditer(doc.read_text())):
            yield pytest.param(match.group(1), id=f"{doc.relative_to(REPO)}#{n + 1}")


@pytest.mark.parametrize("block", list(python_blocks()))
def test_a_python_example_is_valid_python(block):
    compile(block, "<doc>", "exec")


def readme_python_blocks():
    return [p for p in python_blocks() if p.id.startswith("README.md#")]


def test_the_readme_has_python_quick_starts():
    assert len(readme_python_blocks()) >= 4


@pytest.mark.parametrize("block", readme_python_blocks())
def test_a_readme_python_example_runs_as_written(block, tmp_path):
    """A block with a ``def test_`` is a test file, run by pytest (with kafkaemu's plugin, as
    installed); any other is a script. Spark's needs Java and the connector jars: without them
    it skips, naming what is missing."""
    if "kafkaemu.spark" in block:
        if shutil.which("java") is None:
            pytest.skip("this example needs java")
        pytest.importorskip("pyspark", reason="this example needs pyspark (pip install 'kafkaemu[spark]')")
    if "def test_" in block:
        (tmp_path / "test_readme_example.py").write_text(block)
        command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_readme_example.py"]
    else:
        command = [sys.executable, "-c", block]
    done = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    if done.returncode != 0 and "ConnectorUnavailable" in done.stderr:
        pytest.skip("Spark's Kafka connector: " + done.stderr.strip().splitlines()[-1])
    assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"
