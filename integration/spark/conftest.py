"""Spark against kafkaemu: one local[2] SparkSession with Spark's Kafka connector for the module.

The connector comes from Maven Central through integration/java/fetch_jars.py (``make java-deps``
fetches it once into .cache/spark-kafka-<version>_<scala>/); every test here skips, naming what is
missing, when it cannot be had (no Java, no Maven, no route to Maven Central)."""
from __future__ import annotations

import shutil
import uuid

import pytest

pytest.importorskip("pyspark", reason="Spark tests need pyspark (pip install kafkaemu[spark])")

from kafkaemu.spark.session import ConnectorUnavailable, local_session  # noqa: E402

from integration.java_runs import fetch_jars_module  # noqa: E402


@pytest.fixture(scope="session")
def spark(tmp_path_factory):
    if shutil.which("java") is None:
        pytest.skip("Spark tests need a Java runtime")
    with fetch_jars_module() as fetch_jars:
        try:
            jars = fetch_jars.ensure_spark_connector()
        except fetch_jars.Unavailable as exc:
            pytest.skip(f"Spark tests need Spark's Kafka connector from Maven Central: {exc}")
    try:
        session = local_session("kafkaemu-spark-it", jars=jars, extra={
            "spark.sql.warehouse.dir": str(tmp_path_factory.mktemp("warehouse")),
            "spark.driver.extraJavaOptions": "-XX:+UseSerialGC",
        })
    except ConnectorUnavailable as exc:
        pytest.skip(f"{exc} (make java-deps fetches the connector before any Spark test starts one)")
    session.sparkContext.setLogLevel("WARN")
    yield session
    session.stop()


@pytest.fixture
def topic_name():
    def make(prefix="spark"):
        return f"{prefix}-{uuid.uuid4().hex[:8]}"
    return make
