"""pytest fixtures: ``kafka_emulator`` (one per session), ``clean_kafka_emulator`` (that one, reset
to empty before each test: cheap isolation), ``fresh_kafka_emulator`` (a new one per test) and
``kafka_emulator_factory`` (start emulators with settings of the test's own).

Settings come from, last wins: the ``kafkaemu_settings`` ini option (one ``NAME=VALUE`` a line,
BrokerConfig field names such as ``manual_clock=true`` or Kafka's names such as
``group.initial.rebalance.delay.ms=0``; ``subprocess_mode=true`` runs child processes), the
``kafkaemu_settings`` fixture (override it in a conftest.py), a ``@pytest.mark.kafkaemu(...)``
marker on the test (fresh and factory emulators only: the session's emulator is shared), and the
factory's keyword arguments.

Unless the test session configured structlog itself, kafkaemu logs at ``KAFKAEMU_LOG_LEVEL``
(debug, info, warning or error, in any case; default warning) so test output stays readable."""
from __future__ import annotations

import pytest

from ..config import SETTINGS
from ..logging import configure_default_logging
from .emulator import KafkaEmulator

_EMULATOR_ARGS = {"subprocess_mode", "schema_registry"}   # KafkaEmulator's own keywords (the rest: BrokerConfig)


def pytest_addoption(parser):
    parser.addini("kafkaemu_settings", type="linelist", default=[],
                  help="settings of the kafkaemu fixtures' emulators, one NAME=VALUE a line (BrokerConfig "
                       "field names, Kafka's names, or subprocess_mode=true)")


def pytest_configure(config):
    config.addinivalue_line("markers", "kafkaemu(**settings): settings of this test's fresh_kafka_emulator and "
                                       "kafka_emulator_factory emulators (BrokerConfig fields, extra={kafka name: "
                                       "value}, subprocess_mode)")
    try:
        configure_default_logging()
    except ValueError as exc:
        raise pytest.UsageError(f"KAFKAEMU_LOG_LEVEL: {exc}") from None


def parse_settings(lines: list[str]) -> dict:
    """KafkaEmulator keywords from ``NAME=VALUE`` lines; a name that is neither a field, a Kafka
    name nor ``subprocess_mode`` is a usage error naming it."""
    from ..broker_properties import kafka_defined
    from ..config import KAFKA_NAMES
    settings: dict = {}
    for line in lines:
        name, sep, value = line.partition("=")
        name, value = name.strip(), value.strip()
        if not sep or not name:
            raise pytest.UsageError(f"kafkaemu_settings: expected NAME=VALUE, got {line!r}")
        if name in _EMULATOR_ARGS:
            settings[name] = value.lower() == "true"
        elif name in SETTINGS:
            try:
                settings[name] = SETTINGS[name].parse(value, label=name)
            except ValueError as exc:
                raise pytest.UsageError(f"kafkaemu_settings: {exc}") from None
        elif name in KAFKA_NAMES or kafka_defined(name):   # every broker setting Kafka 4.4 defines
            settings.setdefault("extra", {})[name] = value
        else:
            raise pytest.UsageError(f"kafkaemu_settings: unknown setting {name!r} (kafkaemu serve --help lists them)")
    return settings


def merge(*layers: dict) -> dict:
    """Later layers win; their ``extra`` dicts (Kafka names) are merged, not replaced."""
    out: dict = {}
    for layer in layers:
        for key, value in layer.items():
            out[key] = {**out.get("extra", {}), **value} if key == "extra" else value
    return out


def _start(settings: dict) -> KafkaEmulator:
    try:
        return KafkaEmulator(**settings).start()
    except (TypeError, ValueError) as exc:
        raise pytest.UsageError(f"kafkaemu fixture settings {settings!r}: {exc}") from None


@pytest.fixture(scope="session")
def kafkaemu_settings(pytestconfig) -> dict:
    """The settings every fixture emulator starts with (from the ini option); override this
    fixture to compute them."""
    return parse_settings(pytestconfig.getini("kafkaemu_settings"))


@pytest.fixture(scope="session")
def kafka_emulator(kafkaemu_settings):
    emulator = _start(kafkaemu_settings)
    try:
        yield emulator
    finally:
        emulator.stop()


@pytest.fixture
def clean_kafka_emulator(kafka_emulator):
    """The session's emulator, reset before the test: no topics, groups, offsets, fault rules or
    version caps, every node running (see KafkaEmulator.reset; snapshots are kept)."""
    kafka_emulator.reset()
    return kafka_emulator


@pytest.fixture
def kafka_emulator_factory(request, kafkaemu_settings):
    """``make(**settings)`` starts an emulator with the ini settings, the test's ``kafkaemu``
    marker and ``settings`` (last wins); each is stopped after the test."""
    marked = [dict(m.kwargs) for m in reversed(list(request.node.iter_markers("kafkaemu")))]
    started: list[KafkaEmulator] = []

    def make(**settings) -> KafkaEmulator:
        emulator = _start(merge(kafkaemu_settings, *marked, settings))
        started.append(emulator)
        return emulator

    try:
        yield make
    finally:
        for emulator in started:
            emulator.stop()


@pytest.fixture
def fresh_kafka_emulator(kafka_emulator_factory):
    return kafka_emulator_factory()


@pytest.fixture(scope="session")
def kafka_emulator_with_schema_registry(kafkaemu_settings):
    """An emulator (one per session, with the ini settings) serving the built-in schema registry
    too: ``get_schema_registry_url()`` is its URL (docs/schema-registry.md)."""
    emulator = _start(merge(kafkaemu_settings, {"schema_registry": True}))
    try:
        yield emulator
    finally:
        emulator.stop()


@pytest.fixture
def clean_kafka_emulator_with_schema_registry(kafka_emulator_with_schema_registry):
    """That emulator, reset before the test: no topics, so no subjects, schemas or configs either."""
    kafka_emulator_with_schema_registry.reset()
    return kafka_emulator_with_schema_registry
