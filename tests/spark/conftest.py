"""A local SparkSession for the pipeline's unit tests (no connector, no broker); skipped without pyspark."""
from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

pyspark = pytest.importorskip("pyspark", reason="kafkaemu.spark tests need pyspark (pip install kafkaemu[spark])")


def _fetched_connector() -> Path | None:
    java_dir = str(Path(__file__).resolve().parents[2] / "integration" / "java")
    sys.path.insert(0, java_dir)
    try:
        import fetch_jars
        return fetch_jars.fetched_spark_connector()
    finally:
        sys.path.remove(java_dir)


@pytest.fixture(scope="session")
def spark(tmp_path_factory):
    if shutil.which("java") is None:
        pytest.skip("kafkaemu.spark tests need a Java runtime for pyspark")
    # Python workers must run this interpreter (the one with kafkaemu and its codecs installed).
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    from kafkaemu.spark.session import connector_config
    # The driver JVM is launched once per process: when Spark's Kafka connector has been fetched
    # (make java-deps), it is on the classpath from the start, so integration/spark can use this
    # session's JVM after these tests. Nothing is fetched here.
    jars = _fetched_connector()
    connector = connector_config(jars) if jars else {}
    builder = SparkSession.builder
    for key, value in connector.items():
        builder = builder.config(key, value)
    session = (builder.master("local[2]").appName("kafkaemu-spark-unit")
               .config("spark.ui.enabled", "false")
               .config("spark.sql.shuffle.partitions", "2")
               .config("spark.sql.session.timeZone", "UTC")
               .config("spark.sql.warehouse.dir", str(tmp_path_factory.mktemp("warehouse")))
               .config("spark.driver.extraJavaOptions", "-XX:+UseSerialGC")
               .getOrCreate())
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()
