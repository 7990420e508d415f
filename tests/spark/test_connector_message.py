"""Where Spark's Kafka connector comes from, and what a user is told without it."""
import os
import shutil
import subprocess
import sys
import textwrap

import pytest

from kafkaemu.spark import session


@pytest.fixture
def no_connector_settings(monkeypatch):
    monkeypatch.delenv(session.JARS_ENV, raising=False)
    monkeypatch.delenv(session.PACKAGES_ENV, raising=False)


def test_a_jar_folder_lacking_jars_names_each_and_the_package(tmp_path, no_connector_settings):
    (tmp_path / "spark-sql-kafka-0-10_2.13-4.2.0.jar").write_bytes(b"")
    with pytest.raises(session.ConnectorUnavailable) as refused:
        session.connector_config(tmp_path)
    message = str(refused.value)
    for jar in ("spark-token-provider-kafka-0-10", "kafka-clients", "commons-pool2"):
        assert jar in message
    assert "spark-sql-kafka-0-10," not in message
    assert session.connector_package() in message and "spark.jars.packages" in message
    assert "fetch_jars" not in message and "integration/" not in message


def test_without_a_folder_the_session_resolves_the_package(no_connector_settings):
    assert session.connector_config() == {"spark.jars.packages": session.connector_package()}


def test_the_package_is_the_connector_maven_central_serves_for_this_pyspark():
    import pyspark
    group, artifact, version = session.connector_package().split(":")
    assert (group, artifact) == ("org.apache.spark", "spark-sql-kafka-0-10_2.13")
    assert version == session.connector_version()
    assert version.split(".")[0] == pyspark.__version__.split(".")[0]


def test_packages_setting_is_taken_as_given(monkeypatch):
    monkeypatch.delenv(session.JARS_ENV, raising=False)
    monkeypatch.setenv(session.PACKAGES_ENV, "g:a:1")
    assert session.connector_config() == {"spark.jars.packages": "g:a:1"}


PLAIN_SESSION = textwrap.dedent("""
    from pyspark.sql import SparkSession
    from kafkaemu.spark.consumer_lag import consumer_lag_batch
    from kafkaemu.spark.session import ConnectorUnavailable
    spark = SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false").getOrCreate()
    try:
        consumer_lag_batch(spark, "127.0.0.1:9")
    except ConnectorUnavailable as exc:
        print("REFUSED", exc)
    finally:
        spark.stop()
""")


def test_consumer_lag_on_a_plain_session_names_the_package_and_how_to_add_it(no_connector_settings):
    """A user's own SparkSession without the connector (its own process, so its JVM has no jars)."""
    if shutil.which("java") is None:
        pytest.skip("needs a Java runtime for pyspark")
    result = subprocess.run([sys.executable, "-c", PLAIN_SESSION], capture_output=True, text=True, timeout=240,
                            env={**os.environ, "PYSPARK_PYTHON": sys.executable})
    refused = [line for line in result.stdout.splitlines() if line.startswith("REFUSED ")]
    assert refused, f"{result.stdout}\n{result.stderr[-3000:]}"
    assert session.connector_package() in refused[0]
    assert "spark.jars.packages" in refused[0] and "local_session()" in refused[0]
    assert "JavaPackage" not in result.stdout + result.stderr
