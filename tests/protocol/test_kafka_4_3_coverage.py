"""Every API a Kafka 4.3 broker offers clients, at 4.3's versions: kafkaemu's range against 4.3's.

An API is for clients when its definition lists the ``broker`` listener, less the inter-broker ones
(the share coordinator's state RPCs); WriteTxnMarkers stays in (Admin.abortTransaction sends it).
4.3 advertises a version marked ``latestVersionUnstable`` only with unstable.api.versions.enable,
so its range stops below it. kafkaemu may answer older versions than 4.3 (clients older than
KIP-896), never fewer newer ones. APIs other branches of issue 18 are building are listed in
PENDING with their owner until they land; the test fails if one is registered and still listed.

``python -m tests.protocol.test_kafka_4_3_coverage`` prints the table.
"""
from __future__ import annotations

import json
import sys

import pytest

from kafkaemu.handlers import REGISTRY
from kafkaemu.protocol.api_keys import ApiKey
from tests.protocol.test_spec_vs_reference import REFERENCES, reference_dir

INTER_BROKER = {ApiKey(k) for k in (83, 84, 85, 86, 87)}   # share coordinator state RPCs
# api key -> (the max version it waits for, who brings it)
PENDING = {
}


def kafka_4_3_client_apis() -> dict[int, tuple[str, int, int]] | None:
    """api key -> (name, min, max) a Kafka 4.3 broker advertises to clients; None without the reference."""
    root = reference_dir()
    if root is None:
        return None
    apis = {}
    for path in (root / REFERENCES[0] / "client").glob("*Request.json"):
        spec = json.loads("\n".join(line for line in path.read_text().splitlines()
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
        elif key in PENDING:
            status = f"pending ({PENDING[key][1]})"
        else:
            status = "MISSING"
        rows.append((key, name, f"{low}-{high}", ours, status))
    return rows


@pytest.fixture(scope="module")
def apis():
    found = kafka_4_3_client_apis()
    if found is None:
        pytest.skip("Apache Kafka 4.3's message definitions not found (../shared/reference/kafka-4.3-message-specs)")
    return found


def test_every_client_api_of_kafka_4_3_is_answered_at_its_versions(apis):
    missing = [row for row in table(apis) if row[4] == "MISSING"]
    assert not missing, "client APIs of Kafka 4.3 kafkaemu does not answer at 4.3's versions: " + \
        "; ".join(f"{name} ({key}) 4.3 {theirs}, kafkaemu {ours}" for key, name, theirs, ours, _ in missing)


def test_pending_apis_are_still_pending(apis):
    """An API that landed leaves PENDING, so the first test guards it from then on."""
    done = [key for key, (high, _) in PENDING.items() if REGISTRY.get(key) and REGISTRY.get(key).max_version >= high]
    assert not done, f"registered at their 4.3 versions, remove from PENDING: {done}"
    assert set(PENDING) <= set(apis)


def test_no_version_beyond_kafka_4_3(apis):
    """A version newer than 4.3's would be one no 4.3 client sends and the reference does not define."""
    beyond = [(k, lo, hi) for k, lo, hi in REGISTRY.versions() if k in apis and hi > apis[k][2]]
    assert not beyond


if __name__ == "__main__":
    found = kafka_4_3_client_apis()
    if found is None:
        sys.exit("Apache Kafka 4.3's message definitions not found (../shared/reference/kafka-4.3-message-specs)")
    print(f"{'key':>4}  {'API':<32} {'Kafka 4.3':<10} {'kafkaemu':<9} status")
    for row in table(found):
        print(f"{row[0]:>4}  {row[1]:<32} {row[2]:<10} {row[3]:<9} {row[4]}")
