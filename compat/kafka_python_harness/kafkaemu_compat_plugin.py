"""pytest plugin of kafkaemu's compat run (``-p kafkaemu_compat_plugin``): leaves out the tests that
start a JVM broker themselves, names them with the reason in the summary, and fails a run in which
no test passed (a suite that skipped everything proves nothing)."""
import pytest

# test file (relative to the suite's root) -> why the compat run leaves its tests out
LEFT_OUT = {
    "test/integration/test_ssl_integration.py":
        "its ssl_kafka fixture starts its own JVM broker over TLS (KafkaFixture.instance(transport='SSL') "
        "runs kafka-storage.sh and kafka.Kafka from KAFKA_ROOT, keytool for the certificates), even with KAFKA_URI",
}

_left_out = []
_passed = []


def pytest_collection_modifyitems(config, items):
    left = [item for item in items if item.nodeid.split("::")[0] in LEFT_OUT]
    if left:
        config.hook.pytest_deselected(items=left)
        items[:] = [item for item in items if item not in left]
        _left_out.extend(left)


def pytest_runtest_logreport(report):
    if report.when == "call" and report.passed:
        _passed.append(report.nodeid)


def pytest_terminal_summary(terminalreporter):
    if _left_out:
        terminalreporter.section("left out by kafkaemu's compat run")
        for item in _left_out:
            terminalreporter.write_line(f"{item.nodeid}: {LEFT_OUT[item.nodeid.split('::')[0]]}")
    if not _passed:
        terminalreporter.write_line("kafkaemu compat: no test passed, so the run fails", red=True)


def pytest_sessionfinish(session):
    if not _passed and session.exitstatus in (pytest.ExitCode.OK, pytest.ExitCode.NO_TESTS_COLLECTED):
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
