"""A local SparkSession for the pipeline's unit tests (no connector, no broker); skipped without pyspark."""
from __future__ import annotations

import os
import shutil
import sys

import pytest

pyspark = pytest.importorskip("pyspark", reason="kafkaemu.spark tests need pyspark (pip install kafkaemu[spark])")


@pytest.fixture(scope="session")
def spark(tmp_path_factory):
    if shutil.which("java") is None:
        pytest.skip("kafkaemu.spark tests need a Java runtime for pyspark")
    # Python workers must run this interpreter (the one with kafkaemu and its codecs installed).
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    from kafkaemu.spark.session import ConnectorUnavailable, connector_config
    try:
        # The driver JVM is launched once per process: if the connector is configured, it must be
        # on the classpath from the start so integration/spark can use it after these tests.
        connector = connector_config()
    except ConnectorUnavailable:
        connector = {}
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
