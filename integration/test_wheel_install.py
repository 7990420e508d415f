"""kafkaemu as shipped: a wheel built from the checkout, installed into a fresh virtual environment
and run from a directory outside the checkout, serves real clients (the protocol specs travel
inside the package). An editable install finds them in the checkout.

pip takes the dependencies from its cache or PyPI (as ``make test`` does for the test venv)."""
import configparser
import os
import shutil
import signal
import subprocess
import sys
import urllib.request
import uuid
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SOURCES = ["kafkaemu", "protocol_specs", "setup.py", "setup.cfg", "pyproject.toml", "README.md"]


def clean_env() -> dict:
    """No way back to the checkout: no PYTHONPATH, no spec directory override."""
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "KAFKAEMU_PROTOCOL_SPECS", "PYTHONHOME")}


def run(*cmd, cwd, timeout=300) -> str:
    out = subprocess.run([str(c) for c in cmd], cwd=cwd, env=clean_env(), capture_output=True, text=True,
                         timeout=timeout)
    assert out.returncode == 0, f"{' '.join(map(str, cmd))} failed:\n{out.stdout}\n{out.stderr}"
    return out.stdout


def copy_sources(target: Path) -> Path:
    """The checkout's packaging inputs, so building leaves no build/ or egg-info in the checkout."""
    for name in SOURCES:
        source = REPO / name
        if source.is_dir():
            shutil.copytree(source, target / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copy2(source, target / name)
    return target


def fresh_venv(path: Path) -> Path:
    run(sys.executable, "-m", "venv", path, cwd=path.parent)
    return path / "bin"


def version_in_setup_cfg() -> str:
    parser = configparser.ConfigParser()
    parser.read(REPO / "setup.cfg")
    return parser["metadata"]["version"]


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    root = tmp_path_factory.mktemp("wheel")
    for name in ("src", "elsewhere"):
        (root / name).mkdir()
    src = copy_sources(root / "src")
    return root, src


@pytest.fixture(scope="module")
def wheel(workdir) -> Path:
    root, src = workdir
    run(sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", root / "dist", src, cwd=root)
    return next((root / "dist").glob("kafkaemu-*.whl"))


def test_the_installed_wheel_serves_real_clients(workdir, wheel):
    root, _ = workdir
    bin_dir = fresh_venv(root / "venv")
    run(bin_dir / "python", "-m", "pip", "install", "-q", wheel, cwd=root)
    here = root / "elsewhere"

    site = run(bin_dir / "python", "-c", "import kafkaemu.protocol.catalog as c; print(c.__file__); "
                                         "print(c.spec_dir())", cwd=here).split()
    assert all(path.startswith(str(root / "venv")) for path in site), site  # not the checkout
    assert site[1].endswith("site-packages/kafkaemu/protocol_specs")
    assert run(bin_dir / "kafkaemu", "--version", cwd=here).strip() == f"kafkaemu {version_in_setup_cfg()}"
    apis = run(bin_dir / "kafkaemu", "apis", cwd=here)
    assert any(line.split()[:2] == ["11", "JoinGroup"] for line in apis.splitlines())

    proc = subprocess.Popen([bin_dir / "kafkaemu", "serve", "--port", "0", "--control-port", "0"], cwd=here,
                            env=clean_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        assert line.startswith("kafkaemu listening on "), (line, "" if line else proc.stderr.read())
        control = proc.stdout.readline()
        assert control.startswith("kafkaemu control on http://"), control
        produce_consume_and_commit(line.split()[-1])
        the_web_page_is_served(control.split()[-1])
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err


def produce_consume_and_commit(bootstrap: str) -> None:
    from kafka import KafkaConsumer, KafkaProducer, TopicPartition
    topic, group = f"wheel-{uuid.uuid4().hex[:8]}", f"wheel-group-{uuid.uuid4().hex[:8]}"
    producer = KafkaProducer(bootstrap_servers=bootstrap)
    for i in range(3):
        producer.send(topic, f"record-{i}".encode()).get(timeout=30)
    producer.close()
    consumer = KafkaConsumer(topic, bootstrap_servers=bootstrap, group_id=group, auto_offset_reset="earliest",
                             enable_auto_commit=False, consumer_timeout_ms=15000)
    try:
        values = []
        for record in consumer:
            values.append(record.value)
            if len(values) == 3:
                break
        assert values == [b"record-0", b"record-1", b"record-2"]
        consumer.commit()
        assert consumer.committed(TopicPartition(topic, 0)) == 3
    finally:
        consumer.close()
    again = KafkaConsumer(bootstrap_servers=bootstrap, group_id=group, enable_auto_commit=False)
    try:  # the group's offset is the broker's, read back by a new member
        assert again.committed(TopicPartition(topic, 0)) == 3
    finally:
        again.close()


def the_web_page_is_served(control_url: str) -> None:
    """The page and its files come from the installed package (package data in the wheel)."""
    with urllib.request.urlopen(control_url + "/", timeout=10) as resp:
        page = resp.read().decode()
    assert resp.status == 200 and '<script src="/ui/page.js" defer></script>' in page
    assert 'class="gid">wheel-group-' in page                       # the group the clients made
    for name in ("page.js", "page.css", "icon.svg"):
        with urllib.request.urlopen(f"{control_url}/ui/{name}", timeout=10) as resp:
            assert resp.status == 200 and resp.read() == (REPO / "kafkaemu" / "control" / "ui" / name).read_bytes()


def test_the_wheel_installs_beside_a_projects_own_kafka_python(workdir, wheel):
    """kafkaemu requires no Kafka client: a project pinned to an older kafka-python keeps it, and
    that client talks to the kafkaemu installed beside it. Without its extra the schema registry
    says which extra to install, in one line."""
    root, _ = workdir
    bin_dir = fresh_venv(root / "pinned-venv")
    run(bin_dir / "python", "-m", "pip", "install", "-q", "kafka-python==2.2.15", cwd=root)
    run(bin_dir / "python", "-m", "pip", "install", "-q", wheel, cwd=root)
    here = root / "elsewhere"
    assert run(bin_dir / "python", "-c", "import kafka; print(kafka.__version__)", cwd=here).strip() == "2.2.15"
    run(bin_dir / "python", "-m", "pip", "check", cwd=root)

    proc = subprocess.Popen([bin_dir / "kafkaemu", "serve", "--port", "0"], cwd=here, env=clean_env(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        assert line.startswith("kafkaemu listening on "), (line, "" if line else proc.stderr.read())
        sent = run(bin_dir / "python", "-c", PINNED_CLIENT_ROUND_TRIP, line.split()[-1], cwd=here)
        assert sent.split() == ["2.2.15", "b'from-2.2.15'"], sent
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err

    refused = subprocess.run([bin_dir / "kafkaemu", "serve", "--port", "0", "--schema-registry-port", "0"], cwd=here,
                             env=clean_env(), capture_output=True, text=True, timeout=60)
    assert refused.returncode == 2, refused
    assert refused.stdout == ""
    assert refused.stderr.splitlines() == [
        "kafkaemu: the schema registry needs the schema-registry extra: pip install 'kafkaemu[schema-registry]' "
        "(missing: avro, jsonschema, proto_schema_parser)"], refused.stderr


# kafka-python 2.2.15, from the project's own virtual environment, against the kafkaemu beside it
PINNED_CLIENT_ROUND_TRIP = """
import sys, uuid
import kafka
from kafka import KafkaConsumer, KafkaProducer
bootstrap, topic = sys.argv[1], "pinned-" + uuid.uuid4().hex[:8]
producer = KafkaProducer(bootstrap_servers=bootstrap)
producer.send(topic, b"from-2.2.15").get(timeout=30)
producer.close()
consumer = KafkaConsumer(topic, bootstrap_servers=bootstrap, auto_offset_reset="earliest", consumer_timeout_ms=15000)
print(kafka.__version__, next(iter(consumer)).value)
consumer.close()
"""


def test_an_editable_install_finds_the_specs_in_the_checkout(workdir):
    root, src = workdir
    bin_dir = fresh_venv(root / "editable-venv")
    run(bin_dir / "python", "-m", "pip", "install", "-q", "-e", src, cwd=root)
    spec_dir = run(bin_dir / "python", "-c", "from kafkaemu.protocol.catalog import spec_dir; print(spec_dir())",
                   cwd=root / "elsewhere").strip()
    assert Path(spec_dir) == src / "protocol_specs"
    apis = run(bin_dir / "kafkaemu", "apis", cwd=root / "elsewhere")
    assert any(line.split()[:2] == ["12", "Heartbeat"] for line in apis.splitlines())
