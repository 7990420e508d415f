"""Every API a Kafka 4.4.0 broker offers clients, at 4.4's versions: kafkaemu's range against 4.4's.

An API is for clients when its definition lists the ``broker`` listener, less the inter-broker ones
(the share coordinator's state RPCs, UnregisterController); WriteTxnMarkers stays in
(Admin.abortTransaction sends it). 4.4 advertises a version marked ``latestVersionUnstable`` only
with unstable.api.versions.enable, so its range stops below it. The definitions are read from
Kafka 4.4.0's kafka-clients jar (``python -m kafka_reference fetch``; the tests skip without it).
APIs kafkaemu does not answer yet are listed in NOT_ANSWERED with the reason (docs/kafka_4_4.md);
the test fails if one is registered at 4.4's versions and still listed.

``python -m tests.protocol.test_kafka_4_4_coverage`` prints the table.
"""
from __future__ import annotations

import json
import sys
import zipfile

import pytest

from kafka_reference.broker import JARS, KAFKA_VERSION
from kafkaemu.handlers import REGISTRY
from kafkaemu.protocol.api_keys import ApiKey

INTER_BROKER = {ApiKey(k) for k in (83, 84, 85, 86, 87)} | {94}   # share coordinator state RPCs, UnregisterController
# api key -> (the max version kafkaemu lacks, why)
NOT_ANSWERED: dict[int, tuple[int, str]] = {
}
CLIENTS_JAR = JARS / f"kafka-clients-{KAFKA_VERSION}.jar"


def kafka_4_4_client_apis() -> dict[int, tuple[str, int, int]] | None:
    """api key -> (name, min, max) a Kafka 4.4 broker advertises to clients; None without the jar."""
    if not CLIENTS_JAR.exists():
        return None
    apis = {}
    with zipfile.ZipFile(CLIENTS_JAR) as jar:
        for entry in jar.namelist():
            if not (entry.startswith("common/message/") and entry.endswith("Request.json")):
                continue
            spec = json.loads("\n".join(line for line in jar.read(entry).decode().splitlines()
                                        if not line.lstrip().startswith("//")))
            if "broker" not in (spec.get("listeners") or []) or spec["apiKey"] in INTER_BROKER:
                continue
            low, _, high = spec["validVersions"].partition("-")
            high = int(high or low) - (1 if spec.get("latestVersionUnstable") else 0)
            apis[spec["apiKey"]] = (spec["name"].removesuffix("Request"), int(low), high)
    return apis


def table(apis) -> list[tuple[int, str, str, str, str]]:
    rows = []
    for key, (name, low, high) in sorted(apis.items()):
        api = REGISTRY.get(key)
        ours = f"{api.min_version}-{api.max_version}" if api else "-"
        if api and api.max_version >= high and api.min_version <= low:
            status = "ok"
        elif key in NOT_ANSWERED:
            status = f"not answered ({NOT_ANSWERED[key][1]})"
        else:
            status = "MISSING"
        rows.append((key, name, f"{low}-{high}", ours, status))
    return rows


@pytest.fixture(scope="module")
def apis():
    found = kafka_4_4_client_apis()
    if found is None:
        pytest.skip(f"Kafka {KAFKA_VERSION}'s clients jar not found ({CLIENTS_JAR}): `python -m kafka_reference fetch` "
                    "(Maven) copies it")
    return found


def test_every_client_api_of_kafka_4_4_is_answered_at_its_versions(apis):
    missing = [row for row in table(apis) if row[4] == "MISSING"]
    assert not missing, "client APIs of Kafka 4.4 kafkaemu does not answer at 4.4's versions: " + \
        "; ".join(f"{name} ({key}) 4.4 {theirs}, kafkaemu {ours}" for key, name, theirs, ours, _ in missing)


def test_pending_apis_are_still_pending(apis):
    """An API that landed leaves NOT_ANSWERED, so the first test guards it from then on."""
    done = [key for key, (high, _) in NOT_ANSWERED.items() if REGISTRY.get(key) and REGISTRY.get(key).max_version >= high]
    assert not done, f"registered at their 4.4 versions, remove from NOT_ANSWERED: {done}"
    assert set(NOT_ANSWERED) <= set(apis)


def test_no_version_outside_kafka_4_4s(apis):
    """A version newer than 4.4's would be one no 4.4 client sends and the reference does not define;
    one older than 4.4's oldest is one Kafka 4 removed (KIP-896) and answers by closing the connection."""
    outside = [(k, lo, hi) for k, lo, hi in REGISTRY.versions() if k in apis and not apis[k][1] <= lo <= hi <= apis[k][2]]
    assert not outside


if __name__ == "__main__":
    found = kafka_4_4_client_apis()
    if found is None:
        sys.exit(f"Kafka {KAFKA_VERSION}'s clients jar not found ({CLIENTS_JAR}): python -m kafka_reference fetch")
    print(f"{'key':>4}  {'API':<32} {'Kafka 4.4':<10} {'kafkaemu':<9} status")
    for row in table(found):
        print(f"{row[0]:>4}  {row[1]:<32} {row[2]:<10} {row[3]:<9} {row[4]}")
