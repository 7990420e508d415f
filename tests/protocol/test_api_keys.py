"""``ApiKey`` names every API as Apache Kafka's ``ApiKeys`` does: each request kafkaemu specifies
has its member, and (with ``../shared`` present) every request of Kafka 4.3's definitions too."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from kafkaemu.protocol.api_keys import ApiKey
from kafkaemu.protocol.catalog import catalog

REPO = Path(__file__).resolve().parents[2]
CANDIDATES = [base / "shared" / "reference" / "kafka-4.3-message-specs" / "client"
              for base in (REPO.parent, REPO.parent.parent)]   # a checkout beside shared/, or a worktree


def upper_snake(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).upper()


def test_every_request_kafkaemu_specifies_has_its_member():
    for key, spec in catalog().requests.items():
        assert ApiKey(key).name == upper_snake(spec.name[:-len("Request")]), spec.name


def test_members_are_ints_on_the_wire():
    assert ApiKey.PRODUCE == 0 and ApiKey.API_VERSIONS == 18 and ApiKey.SHARE_GROUP_HEARTBEAT == 76
    assert {ApiKey.FETCH: "x"}.get(1) == "x"


def test_the_members_are_kafka_4_3s_requests():
    reference = next((c for c in CANDIDATES if c.is_dir()), None)
    if reference is None:
        pytest.skip(f"Kafka 4.3's message definitions not found at {' or '.join(map(str, CANDIDATES))}")
    expected = {}
    for path in reference.glob("*Request.json"):
        text = "\n".join(line for line in path.read_text().splitlines() if not line.lstrip().startswith("//"))
        message = json.loads(text)
        expected[message["apiKey"]] = upper_snake(message["name"][:-len("Request")])
    assert {m.value: m.name for m in ApiKey} == expected
