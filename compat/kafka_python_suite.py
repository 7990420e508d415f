"""`make compat`: kafka-python's own integration suite, unmodified, against kafkaemu.

    python -m compat.kafka_python_suite [--cache-dir DIR] [PYTEST_ARGS...]

Takes the sdist of the kafka-python version setup.cfg pins from ``.cache/compat/`` (downloading it
with pip from PyPI the first time), unpacks it into a temporary directory, adds the two harness
files the sdist lacks (compat/kafka_python_harness/), starts kafkaemu in this process with the
suite's broker settings (compat/kafka_python_settings.py) and runs the suite's ``test/integration``
with the sdist's own pytest configuration, pointed at kafkaemu by ``KAFKA_URI``. Exits with pytest's
status. Without the sdist and without PyPI it says what is missing and exits 0: a skip, never a pass.
"""
from __future__ import annotations

import argparse
import configparser
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
HARNESS = Path(__file__).resolve().parent / "kafka_python_harness"
# harness file -> where it goes in the unpacked sdist
HARNESS_FILES = {"package_init.py": "test/__init__.py", "service.py": "test/service.py"}
# The broker version the suite is told it talks to: kafkaemu answers as Apache Kafka 4.4 does.
KAFKA_VERSION = "4.4.0"
SUITE = "test/integration"
RUN_LIMIT_S = 600  # the suite's own pytest-timeout stops one stuck test after 300 s
UNREACHABLE = re.compile(r"NewConnectionError|ConnectTimeout|ReadTimeout|Max retries exceeded|ProxyError|"
                         r"Temporary failure in name resolution|Name or service not known|Network is unreachable|"
                         r"Connection refused|No route to host|SSLError")


class Skip(Exception):
    """What is missing for the run, said instead of running it."""


def pinned_version(setup_cfg: Path = REPO / "setup.cfg") -> str:
    """The exact kafka-python version setup.cfg's test extras pin (``kafka-python==X``)."""
    parser = configparser.ConfigParser()
    parser.read(setup_cfg)
    for line in parser["options.extras_require"].get("test", "").splitlines():
        if match := re.fullmatch(r"kafka-python\s*==\s*([0-9][0-9A-Za-z.]*)", line.split("#")[0].strip()):
            return match.group(1)
    raise SystemExit(f"compat: {setup_cfg} does not pin kafka-python exactly (kafka-python==VERSION)")


def sdist(version: str, cache_dir: Path) -> Path:
    """The cached sdist of kafka-python ``version``, downloaded with pip when not cached yet."""
    cached = cache_dir / f"kafka-python-{version}.tar.gz"
    if cached.is_file():
        return cached
    cache_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=cache_dir) as download:
        done = subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:",
                               "--retries", "1", "--timeout", "15", "--disable-pip-version-check",
                               "--dest", download, f"kafka-python=={version}"],
                              capture_output=True, text=True)
        got = sorted(Path(download).glob("*.tar.gz"))
        if done.returncode != 0 or len(got) != 1:
            output = done.stdout + done.stderr
            last = next((line.strip() for line in reversed(output.splitlines()) if line.strip()), "no output")
            if network := next((line.strip() for line in output.splitlines() if UNREACHABLE.search(line)), None):
                raise Skip(f"kafka-python {version}'s sdist is not cached ({cached}) and PyPI cannot be reached "
                           f"(pip download: {network[:300]}); put kafka-python-{version}.tar.gz from PyPI there "
                           "to run it")
            raise SystemExit(f"compat: pip could not download kafka-python {version}'s sdist: {last}")
        os.replace(got[0], cached)  # whole or not at all: a half download never looks cached
    return cached


def unpack(archive: Path, into: Path) -> Path:
    """The sdist unpacked under ``into`` with the harness files added; its root directory."""
    with tarfile.open(archive) as tar:
        if hasattr(tarfile, "data_filter"):
            tar.extractall(into, filter="data")
        else:  # Python < 3.11.4: the archive is the one pip checked against PyPI's hash
            tar.extractall(into)
    roots = [p for p in into.iterdir() if p.is_dir()]
    if len(roots) != 1 or not (roots[0] / SUITE).is_dir():
        raise SystemExit(f"compat: {archive} does not hold kafka-python's {SUITE}")
    root = roots[0]
    for source, target in HARNESS_FILES.items():
        if (root / target).exists():
            raise SystemExit(f"compat: {archive} now ships {target}; use it instead of kafkaemu's harness file")
        shutil.copyfile(HARNESS / source, root / target)
    return root


def check_settings(root: Path) -> None:
    """When the sdist ships the suite's kafka.properties, compat/kafka_python_settings.py must name
    exactly its properties."""
    from compat.kafka_python_settings import suite_properties_differ
    properties = root / "servers" / "resources" / "default" / "kafka.properties"
    if properties.is_file() and (differences := suite_properties_differ(properties.read_text())):
        raise SystemExit("compat: the suite's broker settings changed:\n  " + "\n  ".join(differences))


def left_out_files_exist(root: Path) -> None:
    spec = importlib.util.spec_from_file_location("kafkaemu_compat_plugin", HARNESS / "kafkaemu_compat_plugin.py")
    plugin = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(plugin)
    missing = [name for name in plugin.LEFT_OUT if not (root / name).is_file()]
    if missing:
        raise SystemExit(f"compat: the suite no longer has {', '.join(missing)}; update LEFT_OUT "
                         "in compat/kafka_python_harness/kafkaemu_compat_plugin.py")


def run_suite(root: Path, bootstrap: str, pytest_args: list[str]) -> int:
    no_jvm_broker = root.parent / "no-kafka-bin"
    no_jvm_broker.mkdir()  # KafkaFixture insists that KAFKA_ROOT exists even for an external broker
    env = {**os.environ, "KAFKA_URI": f"tcp://{bootstrap}", "KAFKA_VERSION": KAFKA_VERSION,
           "KAFKA_ROOT": str(no_jvm_broker),
           "PYTHONPATH": os.pathsep.join(filter(None, [str(HARNESS), os.environ.get("PYTHONPATH")]))}
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:kafkaemu",
               "-p", "kafkaemu_compat_plugin", "-q", "-rfEs", *pytest_args, SUITE]
    proc = subprocess.Popen(command, cwd=root, env=env)
    try:
        return proc.wait(RUN_LIMIT_S)
    except subprocess.TimeoutExpired:
        print(f"compat: the suite ran past {RUN_LIMIT_S} s and was stopped", file=sys.stderr)
        return 1
    finally:  # stopped, interrupted or failed here: pytest does not outlive the broker it tests
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m compat.kafka_python_suite", description=__doc__.split("\n")[0])
    parser.add_argument("--cache-dir", type=Path, default=REPO / ".cache" / "compat",
                        help="where the sdist is kept (default .cache/compat)")
    args, pytest_args = parser.parse_known_args(argv)
    version = pinned_version()
    try:
        archive = sdist(version, args.cache_dir)
    except Skip as missing:
        print(f"compat: SKIPPED kafka-python {version}'s integration suite: {missing}")
        return 0
    from compat.kafka_python_settings import broker_config
    from kafkaemu.testing import KafkaEmulator
    with tempfile.TemporaryDirectory(prefix="kafkaemu-compat-") as work:
        root = unpack(archive, Path(work))
        check_settings(root)
        left_out_files_exist(root)
        with KafkaEmulator(config=broker_config()) as kafka:
            print(f"compat: kafka-python {version}'s {SUITE} against kafkaemu at {kafka.bootstrap_server} "
                  f"(KAFKA_VERSION={KAFKA_VERSION})", flush=True)
            return run_suite(root, kafka.bootstrap_server, pytest_args)


if __name__ == "__main__":
    sys.exit(main())
