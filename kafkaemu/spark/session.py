"""Spark's Kafka connector for a SparkSession: a local session that has it, or a clear reason why not.

Spark's Kafka source and sink (``org.apache.spark:spark-sql-kafka-0-10_2.13``, which brings
``spark-token-provider-kafka-0-10``, ``kafka-clients`` and ``commons-pool2``) are not part of
pyspark. A session gets them when it starts, from the first of:

1. a folder of jars (``local_session(jars=...)`` or ``KAFKAEMU_SPARK_JARS``), as a source checkout's
   ``make java-deps`` fills ``.cache/spark-kafka-<version>_<scala>/`` from Maven Central;
2. ``KAFKAEMU_SPARK_PACKAGES``: a ``spark.jars.packages`` list of Maven coordinates;
3. ``spark.jars.packages`` with :func:`connector_package`: Spark resolves it from Maven Central
   when the session starts.

A session that is already running cannot take jars any more: :func:`require_connector` checks one
and raises :class:`ConnectorUnavailable` naming the package and how to add it.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

JARS_ENV = "KAFKAEMU_SPARK_JARS"
PACKAGES_ENV = "KAFKAEMU_SPARK_PACKAGES"
CONNECTOR_ARTIFACT = "spark-sql-kafka-0-10"
_FOLDER_JARS = ("spark-sql-kafka-0-10", "spark-token-provider-kafka-0-10", "kafka-clients", "commons-pool2")
# pyspark releases whose connector Maven Central does not serve, and the served connector used
# instead (integration/spark passes with it against that pyspark).
_CONNECTOR_SERVED_INSTEAD = {"4.2.1": "4.2.0", "4.3.0": "4.2.0"}


class ConnectorUnavailable(RuntimeError):
    pass


def _pyspark_version() -> str:
    import pyspark
    return pyspark.__version__


def _scala_binary() -> str:
    import pyspark
    jars = Path(pyspark.__file__).parent / "jars"
    for jar in jars.glob("scala-library-*.jar"):
        version = jar.name[len("scala-library-"):-len(".jar")]
        return ".".join(version.split(".")[:2])
    return "2.13"


def connector_version() -> str:
    """The connector release for the installed pyspark: its own version where Maven Central has it."""
    version = _pyspark_version()
    return _CONNECTOR_SERVED_INSTEAD.get(version, version)


def connector_package() -> str:
    """``org.apache.spark:spark-sql-kafka-0-10_<scala>:<version>``, for ``spark.jars.packages``."""
    return f"org.apache.spark:{CONNECTOR_ARTIFACT}_{_scala_binary()}:{connector_version()}"


def how_to_add() -> str:
    return (f"start the session with .config(\"spark.jars.packages\", \"{connector_package()}\") (Spark "
            f"fetches it from Maven Central), or with kafkaemu.spark.session.local_session(), which does that")


def connector_config(jars: str | os.PathLike | None = None) -> dict[str, str]:
    """The Spark conf entries that put the connector on a new session's classpath.

    Raises ConnectorUnavailable when a jar folder is named but lacks one of the connector's jars.
    """
    folder = jars or os.environ.get(JARS_ENV)
    if folder:
        found = sorted(Path(folder).glob("*.jar"))
        missing = [name for name in _FOLDER_JARS if not any(j.name.startswith((name + "-", name + "_")) for j in found)]
        if missing:
            named = f"{JARS_ENV}={folder}" if jars is None else str(folder)
            raise ConnectorUnavailable(
                f"{named} lacks the jar(s) {', '.join(missing)}: Spark's Kafka connector "
                f"{connector_package()} with its dependencies; or leave the folder out and {how_to_add()}")
        return {"spark.jars": ",".join(str(j) for j in found)}
    packages = os.environ.get(PACKAGES_ENV, "").strip()
    if packages and packages not in ("1", "true", "yes"):
        return {"spark.jars.packages": packages}
    return {"spark.jars.packages": connector_package()}


def has_connector(spark) -> bool:
    """Whether the session's driver can load Spark's Kafka source."""
    try:
        # Resolving the "kafka" format loads the provider; building the relation contacts no broker.
        spark.read.format("kafka").option("kafka.bootstrap.servers", "127.0.0.1:9").option("subscribe", "t").load()
    except Exception:
        return False
    return True


def require_connector(spark) -> None:
    """Raise ConnectorUnavailable, naming the package and how to add it, unless ``spark`` has the connector."""
    if not has_connector(spark):
        raise ConnectorUnavailable(
            f"this SparkSession has no Kafka connector ({connector_package()}), and a running session "
            f"cannot take one: {how_to_add()}")


def local_session(app_name: str = "kafkaemu", *, cores: int = 2, jars: str | os.PathLike | None = None,
                  extra: dict[str, str] | None = None):
    """A ``local[cores]`` SparkSession with the connector (see the module's doc for where it comes
    from); raises ConnectorUnavailable when it cannot be had."""
    conf = connector_config(jars)
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession
    builder = (SparkSession.builder.master(f"local[{cores}]").appName(app_name)
               .config("spark.ui.enabled", "false")
               .config("spark.ui.showConsoleProgress", "false")
               .config("spark.sql.shuffle.partitions", str(cores))
               .config("spark.sql.session.timeZone", "UTC"))
    for key, value in {**conf, **(extra or {})}.items():
        builder = builder.config(key, value)
    running = SparkSession.getActiveSession()
    try:
        spark = builder.getOrCreate()
    except Exception as exc:  # spark.jars.packages that Spark could not resolve ends the JVM at start
        raise ConnectorUnavailable(
            f"Spark could not start with its Kafka connector ({conf}): {str(exc).splitlines()[0]}; with no "
            f"route to Maven Central, give local_session(jars=FOLDER) a folder with the jars "
            f"{', '.join(_FOLDER_JARS)}") from exc
    if not has_connector(spark):
        if running is None:
            spark.stop()
            raise ConnectorUnavailable(f"Spark's Kafka connector did not load from {conf}: the jars do not fit "
                                       f"pyspark {_pyspark_version()}")
        raise ConnectorUnavailable("a SparkSession was already running in this process without Spark's Kafka "
                                   "connector, and a running session cannot take jars: stop it first")
    return spark
