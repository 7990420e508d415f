"""The Spark pipeline's refusal names every jar that is missing, not only the connector's."""
import sys

import pytest

from kafkaemu.spark import session


@pytest.fixture
def no_companion_jars(tmp_path, monkeypatch):
    """No integration/java/lib to take kafka-clients and commons-pool2 from."""
    monkeypatch.setattr(session, "_JAVA_LIB", tmp_path / "java" / "lib")
    monkeypatch.delitem(sys.modules, "fetch_jars", raising=False)


def test_a_jar_folder_lacking_the_kafka_client_jars_names_them_all(tmp_path, monkeypatch, no_companion_jars):
    folder = tmp_path / "jars"
    folder.mkdir()
    (folder / "spark-sql-kafka-0-10_2.13-4.0.0.jar").write_bytes(b"")
    monkeypatch.setenv(session.JARS_ENV, str(folder))
    with pytest.raises(session.ConnectorUnavailable) as refused:
        session.connector_config()
    message = str(refused.value)
    for jar in ("spark-token-provider-kafka-0-10", "kafka-clients", "commons-pool2"):
        assert jar in message
    assert "spark-sql-kafka-0-10," not in message and "fetch_jars.py" in message


def test_without_any_setting_the_message_names_every_jar(monkeypatch):
    monkeypatch.delenv(session.JARS_ENV, raising=False)
    monkeypatch.delenv(session.PACKAGES_ENV, raising=False)
    with pytest.raises(session.ConnectorUnavailable) as refused:
        session.connector_config()
    for jar in ("spark-sql-kafka-0-10", "spark-token-provider-kafka-0-10", "kafka-clients", "commons-pool2"):
        assert jar in str(refused.value)
