"""Spark against kafkaemu: one local[2] SparkSession with Spark's Kafka connector for the module.

Every test here skips, naming KAFKAEMU_SPARK_JARS, when the connector cannot be had (see
kafkaemu/spark/session.py for where it comes from)."""
from __future__ import annotations

import shutil
import uuid

import pytest

pytest.importorskip("pyspark", reason="Spark tests need pyspark (pip install kafkaemu[spark])")

from kafkaemu.spark.session import ConnectorUnavailable, local_session  # noqa: E402


@pytest.fixture(scope="session")
def spark(tmp_path_factory):
    if shutil.which("java") is None:
        pytest.skip("Spark tests need a Java runtime")
    try:
        session = local_session("kafkaemu-spark-it", extra={
            "spark.sql.warehouse.dir": str(tmp_path_factory.mktemp("warehouse")),
            "spark.driver.extraJavaOptions": "-XX:+UseSerialGC",
        })
    except ConnectorUnavailable as exc:
        pytest.skip(str(exc))
    session.sparkContext.setLogLevel("WARN")
    yield session
    session.stop()


@pytest.fixture
def topic_name():
    def make(prefix="spark"):
        return f"{prefix}-{uuid.uuid4().hex[:8]}"
    return make
