"""`make compat`'s pieces (compat/): the suite's broker settings as kafkaemu settings, the pinned sdist
and what happens without it, the unpacked suite, and the plugin that leaves out the JVM-broker tests
and fails a run in which nothing passed. The run itself is `make compat`."""
import io
import os
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from compat import kafka_python_settings as settings
from compat import kafka_python_suite as suite
from kafkaemu.config import setting_named

REPO = Path(__file__).resolve().parents[1]
HARNESS = REPO / "compat" / "kafka_python_harness"


def test_each_suite_property_is_given_to_kafkaemu_or_says_why_not():
    names = [name for name, _value, _applied in settings.SUITE_PROPERTIES]
    assert len(names) == len(set(names))
    for name, _value, applied in settings.SUITE_PROPERTIES:
        assert applied, name
        if isinstance(applied, dict):
            for kafka_name in applied:
                setting_named(kafka_name)  # ValueError for a name kafkaemu does not have


def test_the_suite_settings_take_effect():
    config = settings.broker_config()
    for kafka_name, value in settings.kafkaemu_overrides().items():
        s = setting_named(kafka_name)
        assert s.get(config) == s.parse(value), kafka_name
    assert (config.num_partitions, config.offsets.topic_num_partitions) == (4, 2)
    assert (config.classic.min_session_timeout_ms, config.classic.initial_rebalance_delay_ms) == (1000, 0)
    assert config.authorization_enabled and config.allow_everyone_if_no_acl_found
    assert config.log_retention_ms == 168 * 3600 * 1000 and (config.host, config.port) == ("127.0.0.1", 0)


def test_a_changed_properties_file_is_reported_both_ways():
    template = "".join(f"{name}={value}\n" for name, value, _ in settings.SUITE_PROPERTIES
                       if name not in ("authorizer.class.name", "allow.everyone.if.no.acl.found"))
    template = "# comment=1\n{sasl_config}\n{acl_config}\n" + template
    assert settings.suite_properties_differ(template) == []
    changed = template.replace("num.io.threads=8\n", "") + "log.flush.interval.ms=1000\n"
    assert settings.suite_properties_differ(changed) == [
        "log.flush.interval.ms: in the suite's kafka.properties, not in compat/kafka_python_settings.py",
        "num.io.threads: in compat/kafka_python_settings.py, no longer in the suite's kafka.properties"]


def test_the_version_is_the_test_extras_exact_pin(tmp_path):
    assert "kafka-python==" + suite.pinned_version() in (REPO / "setup.cfg").read_text()
    loose = tmp_path / "setup.cfg"
    loose.write_text("[options.extras_require]\ntest =\n    pytest>=8\n    kafka-python>=3.0,<4\n")
    with pytest.raises(SystemExit, match="does not pin kafka-python exactly"):
        suite.pinned_version(loose)


def run_offline(cache_dir, index_url):
    env = {**os.environ, "PIP_CONFIG_FILE": os.devnull, "PIP_INDEX_URL": index_url, "PIP_FIND_LINKS": "",
           "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run([sys.executable, "-m", "compat.kafka_python_suite", "--cache-dir", str(cache_dir)],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=120)


def test_without_pypi_or_a_cached_sdist_it_skips_naming_what_is_missing(tmp_path):
    done = run_offline(tmp_path / "cache", "http://127.0.0.1:9/simple")  # nothing listens on port 9
    version = suite.pinned_version()
    assert done.returncode == 0, done.stderr
    assert f"compat: SKIPPED kafka-python {version}'s integration suite" in done.stdout
    assert "PyPI cannot be reached" in done.stdout and "Connection refused" in done.stdout
    assert str(tmp_path / "cache" / f"kafka-python-{version}.tar.gz") in done.stdout
    assert not list((tmp_path / "cache").iterdir())  # nothing half-downloaded left to look cached


def test_a_reachable_index_without_the_sdist_fails_rather_than_skips(tmp_path):
    (tmp_path / "index").mkdir()
    done = run_offline(tmp_path / "cache", (tmp_path / "index").as_uri())
    assert done.returncode == 1 and "SKIPPED" not in done.stdout
    assert "pip could not download kafka-python" in done.stderr


def make_sdist(path, files):
    with tarfile.open(path, "w:gz") as tar:
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(f"kafka_python-9.9/{name}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


def test_unpacking_adds_the_harness_files_the_sdist_lacks(tmp_path):
    archive = make_sdist(tmp_path / "s.tar.gz", {"test/integration/conftest.py": "", "test/testutil.py": ""})
    (tmp_path / "out").mkdir()
    root = suite.unpack(archive, tmp_path / "out")
    assert (root / "test" / "__init__.py").read_text() == (HARNESS / "package_init.py").read_text()
    assert (root / "test" / "service.py").read_text() == (HARNESS / "service.py").read_text()


@pytest.mark.parametrize("files, complaint", [
    ({"test/testutil.py": ""}, "does not hold kafka-python's test/integration"),
    ({"test/integration/conftest.py": "", "test/service.py": ""}, "now ships test/service.py"),
])
def test_an_unexpected_sdist_stops_the_run(tmp_path, files, complaint):
    archive = make_sdist(tmp_path / "s.tar.gz", files)
    (tmp_path / "out").mkdir()
    with pytest.raises(SystemExit, match=complaint):
        suite.unpack(archive, tmp_path / "out")


def run_plugin(tmp_path, other_test):
    suite_dir = tmp_path / "test" / "integration"
    suite_dir.mkdir(parents=True)
    (suite_dir / "test_ssl_integration.py").write_text("def test_needs_a_jvm():\n    assert False\n")
    (suite_dir / "test_other.py").write_text(other_test)
    env = {**os.environ, "PYTHONPATH": str(HARNESS)}
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "kafkaemu_compat_plugin",
                           "-q", "test/integration"], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=120)


def test_the_plugin_leaves_out_the_jvm_broker_tests_naming_why(tmp_path):
    done = run_plugin(tmp_path, "def test_fine():\n    pass\n")
    assert done.returncode == 0, done.stdout
    assert "1 passed, 1 deselected" in done.stdout
    assert "test_ssl_integration.py::test_needs_a_jvm: its ssl_kafka fixture starts its own JVM broker" in done.stdout


def test_a_run_in_which_nothing_passed_fails(tmp_path):
    done = run_plugin(tmp_path, "import pytest\n\n@pytest.mark.skip('no broker')\ndef test_skipped():\n    pass\n")
    assert done.returncode == 1 and "no test passed" in done.stdout


# a stand-in for the suite's racy test: its [1] fails on its first run (the race), [2] never passes
_RACY = '''import os
import pytest


@pytest.fixture
def fresh(tmp_path):
    return tmp_path


@pytest.mark.parametrize("max_in_flight", [1, 2])
def test_idempotent_producer_max_in_flight(fresh, max_in_flight):
    marker = os.path.join(os.environ["RACE_DIR"], "raced")
    assert not list(fresh.iterdir())   # a second run gets its own function-scoped fixtures
    (fresh / "used").write_text("")
    if max_in_flight == 2:
        assert False, "fails every time"
    if not os.path.exists(marker):
        open(marker, "w").close()
        assert False, "the client's race"
'''


def test_a_test_failed_by_a_known_client_race_runs_once_more_and_says_why(tmp_path):
    suite_dir = tmp_path / "test" / "integration"
    suite_dir.mkdir(parents=True)
    (suite_dir / "test_producer_integration.py").write_text(_RACY)
    (suite_dir / "test_other.py").write_text("def test_fails():\n    assert False\n")
    env = {**os.environ, "PYTHONPATH": str(HARNESS), "RACE_DIR": str(tmp_path)}
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "kafkaemu_compat_plugin",
                           "-q", "-rf", "test/integration"], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 1, done.stdout
    assert "2 failed, 1 passed" in done.stdout   # [1] passed on its second run; [2] and the other test failed
    assert "FAILED test/integration/test_producer_integration.py::test_idempotent_producer_max_in_flight[2]" \
        in done.stdout
    assert "FAILED test/integration/test_other.py::test_fails" in done.stdout
    assert "test_idempotent_producer_max_in_flight[1]: its consumer calls subscribe() right after" in done.stdout
    assert "test_idempotent_producer_max_in_flight[2]: its consumer" in done.stdout   # both were run twice
