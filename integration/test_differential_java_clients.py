"""What the Java client (kafka-clients 4.4.0) sees, against Apache Kafka 4.4.0 and against kafkaemu: each
scenario of integration/java/src/kafkaemu/jvm/Observations.java runs against both brokers and prints
its observations as one JSON line, compared field by field (integration/differential/). Skips, naming
what is missing, without Java, Maven or the reference broker."""
from __future__ import annotations

import itertools
import json

import pytest

from . import java_runs

NAMES = itertools.count(1)


# What each scenario must have reached on either broker for the comparison to mean anything: how many
# records each list of records read holds (12 written to 3 partitions; 12 more aborted in "transactions").
READ = {
    "produce-consume-commit": {"consumed": 12},
    "share-group": {"consumed": 12, "acknowledged": 12},
    "transactions": {"read_committed": 12, "read_uncommitted": 24},
}


def _java_observe(classpath: str, case: str):
    name = f"{case}-{next(NAMES)}"

    def observe(bootstrap: str) -> dict:
        result = java_runs.run_case(classpath, "Observations", case, bootstrap, name)
        java_runs.assert_passed(result, case)
        observed = [line for line in result.stdout.splitlines() if line.startswith("OBSERVED ")]
        assert len(observed) == 1, result.stdout
        seen = json.loads(observed[0].removeprefix("OBSERVED "))
        assert {key: len(seen[key]) for key in READ[case]} == READ[case], seen
        return seen
    return observe


def test_case_list_matches_runner(java_classpath):
    assert java_runs.listed_cases(java_classpath, "Observations") == ["produce-consume-commit", "share-group",
                                                                       "transactions"]


@pytest.mark.parametrize("case, scenario", [
    ("produce-consume-commit", "Java: create topic, idempotent produce, consume (consumer group), commit, describe"),
    ("share-group", "Java: share group reads from earliest, acknowledges, describe"),
    ("transactions", "Java: transactional commit and abort, read_committed and read_uncommitted"),
])
def test_java_client_sees_as_on_kafka(differential, java_classpath, case, scenario):
    differential.check_observed(_java_observe(java_classpath, case), scenario, "client: Java")
