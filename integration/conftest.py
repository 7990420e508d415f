"""Fixtures the integration tests share."""
from __future__ import annotations

import pytest

from .java_runs import client_jars, compiled_classpath


@pytest.fixture(scope="session")
def java_classpath() -> str:
    """The compiled Java case runners and the kafka-clients jars (skips when Java or the jars are missing)."""
    return compiled_classpath()


@pytest.fixture(scope="session")
def java_lib() -> str:
    """The kafka-clients jars, for the single-file programs of integration/java_security/."""
    return client_jars()


from .differential.fixtures import differential, kafka44  # noqa: E402,F401  (the differential suite's brokers)
from .differential.report import (  # noqa: E402,F401  (its option and summary)
    pytest_addoption, pytest_sessionfinish, pytest_terminal_summary)
