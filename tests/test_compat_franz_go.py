"""The franz-go run's pieces (compat/franz_go_*.py): the suite's CI settings as kafkaemu settings and
their check against the workflow the module ships, the counting of ``go test -json`` events, and
what happens without Go or without the module proxy. The run itself is `make compat`."""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from compat import franz_go_settings as settings
from compat import franz_go_suite as suite
from kafkaemu.broker_properties import kafka_defined
from kafkaemu.config import KAFKA_NAMES, setting_named

REPO = Path(__file__).resolve().parents[1]


def test_each_suite_variable_is_given_to_kafkaemu_or_says_why_not():
    variables = [var for var, _value, _use in settings.SUITE_ENVIRONMENT + settings.TEST_ENVIRONMENT]
    assert len(variables) == len(set(variables))
    for var, _value, use in settings.SUITE_ENVIRONMENT + settings.TEST_ENVIRONMENT:
        assert use, var
    for name in settings.kafkaemu_overrides():
        assert name in KAFKA_NAMES or kafka_defined(name), name


def test_the_suite_settings_take_effect():
    config = settings.broker_config()
    overrides = settings.kafkaemu_overrides()
    assert overrides["group.coordinator.rebalance.protocols"] == "classic,consumer,share"
    assert len(overrides) == sum(use == settings.GIVEN for _var, _value, use in settings.SUITE_ENVIRONMENT)
    for name, value in overrides.items():
        if name in KAFKA_NAMES:
            s = setting_named(name)
            assert s.get(config) == s.parse(value), name
        else:
            assert config.kafka_settings[name] == value, name
    assert setting_named("node.id").get(config) == 1
    assert setting_named("group.share.delivery.count.limit").get(config) == 10
    assert (config.host, config.port) == ("127.0.0.1", 0)


def test_the_tests_get_the_ci_variables_with_kafkaemu_as_the_seed():
    assert settings.test_environment("127.0.0.1:5555") == {
        "KGO_TEST_RF": "1", "KGO_TEST_STABLE_FETCH": "true", "KGO_SEEDS": "127.0.0.1:5555"}


def workflow(environment, test_environment, job=settings.JOB):
    compose = "".join(f"                {var}: {value}\n" for var, value in environment)
    env = "".join(f"          {var}: {value}\n" for var, value in test_environment)
    return ("jobs:\n"
            "  integration-test-kfake:\n    steps:\n      - run: go test ./...\n        env:\n"
            "          KGO_SEEDS: 127.0.0.1:9092\n          KGO_OTHER: x\n"
            f"  {job}:\n    steps:\n      - run: |\n          cat > docker-compose.yml << 'EOF'\n"
            f"              environment:\n{compose}          EOF\n      - run: go test ./...\n        env:\n{env}"
            "  integration-test-redpanda:\n    steps:\n      - run: go test\n        env:\n          KGO_TEST_RF: 3\n")


def as_pairs(table):
    return [(var, value) for var, value, _use in table]


def test_the_ci_workflow_is_compared_with_the_tables_both_ways():
    same = workflow(as_pairs(settings.SUITE_ENVIRONMENT), as_pairs(settings.TEST_ENVIRONMENT))
    assert settings.suite_settings_differ(same) == []   # other jobs' variables are not the suite's broker
    environment = [(var, "7" if var == "KAFKA_GROUP_SHARE_DELIVERY_COUNT_LIMIT" else value)
                   for var, value in as_pairs(settings.SUITE_ENVIRONMENT) if var != "KAFKA_OPTS"]
    changed = workflow(environment + [("KAFKA_NUM_PARTITIONS", "3")], as_pairs(settings.TEST_ENVIRONMENT))
    where = f"franz-go's {settings.WORKFLOW}"
    assert settings.suite_settings_differ(changed) == [
        f"KAFKA_NUM_PARTITIONS: in {where}, not in compat/franz_go_settings.py",
        f"KAFKA_OPTS: in compat/franz_go_settings.py, no longer in {where}",
        f"KAFKA_GROUP_SHARE_DELIVERY_COUNT_LIMIT: 7 in {where}, 10 in compat/franz_go_settings.py"]
    with pytest.raises(ValueError, match="has no job integration-test-kafka"):
        settings.suite_settings_differ(workflow([], [], job="integration-test-other"))


def test_the_module_cache_copy_of_the_workflow_matches_when_present():
    """The pinned release's own workflow, when a run has cached it, says what the tables say."""
    module_dir = REPO / ".cache" / "compat" / "go-mod" / "github.com" / "twmb" / f"franz-go@{suite.FRANZ_GO_VERSION}"
    if not (module_dir / settings.WORKFLOW).is_file():
        pytest.skip(f"franz-go {suite.FRANZ_GO_VERSION} is not in .cache/compat/go-mod (make compat downloads it)")
    suite.check_settings(module_dir)


def test_go_test_events_are_counted_by_top_level_test():
    events = [
        {"Action": "run", "Test": "TestA"}, {"Action": "pass", "Test": "TestA"},
        {"Action": "run", "Test": "TestB"}, {"Action": "output", "Test": "TestB", "Output": "b: bad\n"},
        {"Action": "output", "Test": "TestB/sub", "Output": "sub: worse\n"},
        {"Action": "fail", "Test": "TestB/sub"}, {"Action": "fail", "Test": "TestB"},
        {"Action": "pass", "Test": "TestC/sub"}, {"Action": "skip", "Test": "TestC"},
        {"Action": "output", "Output": "FAIL\n"}, {"Action": "fail"},
    ]
    counts, failed = suite.tally(events)
    assert (counts["pass"], counts["fail"], counts["skip"]) == (1, 1, 1)
    assert failed == {"TestB": ["b: bad\n", "sub: worse\n"]}
    assert suite.summary_line(counts) == f"franz-go {suite.FRANZ_GO_VERSION} kgo: 1 passed, 1 failed, 1 skipped"


def run_suite_module(tmp_path, **env):
    environ = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]), **env}
    return subprocess.run([sys.executable, "-m", "compat.franz_go_suite", "--cache-dir", str(tmp_path / "cache")],
                          cwd=REPO, env=environ, capture_output=True, text=True, timeout=300)


def test_without_go_it_skips_naming_it(tmp_path):
    no_go = tmp_path / "bin"
    no_go.mkdir()
    done = run_suite_module(tmp_path, PATH=str(no_go))
    assert done.returncode == 0, done.stderr
    assert f"compat: SKIPPED franz-go {suite.FRANZ_GO_VERSION}'s kgo integration tests: the go command is not " \
           "installed" in done.stdout


needs_go = pytest.mark.skipif(shutil.which("go") is None, reason="the go command is not installed")


@needs_go
def test_without_the_module_proxy_or_a_cached_module_it_skips_naming_what_is_missing(tmp_path):
    done = run_suite_module(tmp_path, GOPROXY="http://127.0.0.1:9", GONOSUMDB="*", GOFLAGS="")  # nothing on port 9
    assert done.returncode == 0, done.stderr
    assert f"compat: SKIPPED franz-go {suite.FRANZ_GO_VERSION}'s kgo integration tests" in done.stdout
    assert "the Go module proxy cannot be reached" in done.stdout and "connection refused" in done.stdout
    assert str(tmp_path / "cache" / "go-mod") in done.stdout


@needs_go
def test_a_reachable_proxy_without_the_module_fails_rather_than_skips(tmp_path):
    (tmp_path / "proxy").mkdir()
    done = run_suite_module(tmp_path, GOPROXY=(tmp_path / "proxy").as_uri(), GONOSUMDB="*", GOFLAGS="")
    assert done.returncode == 1 and "SKIPPED" not in done.stdout
    assert f"compat: go could not download {suite.MODULE}@{suite.FRANZ_GO_VERSION}" in done.stderr


def test_a_go_older_than_the_module_needs_skips_naming_both_versions(tmp_path):
    said = "go: go.mod requires go >= 1.99.0 (running go 1.26.8; GOTOOLCHAIN=local)\n"
    done = subprocess.CompletedProcess(["go", "mod", "download"], 1, stdout="", stderr=said)
    with pytest.raises(suite.Skip, match=r"needs a newer go command: requires go >= 1\.99\.0 \(running go 1\.26\.8\)$"):
        suite._fail_or_skip("the modules", done, tmp_path)
