"""``ApiKey`` names every API as Apache Kafka's ``ApiKeys`` does: each request kafkaemu specifies
has its member, and (with Kafka 4.4.0's clients jar fetched) every request of Kafka 4.4's definitions too."""
from __future__ import annotations

import json
import re

import pytest

from kafkaemu.protocol.api_keys import ApiKey
from kafkaemu.protocol.catalog import catalog



def upper_snake(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).upper()


def test_every_request_kafkaemu_specifies_has_its_member():
    for key, spec in catalog().requests.items():
        assert ApiKey(key).name == upper_snake(spec.name[:-len("Request")]), spec.name


def test_members_are_ints_on_the_wire():
    assert ApiKey.PRODUCE == 0 and ApiKey.API_VERSIONS == 18 and ApiKey.SHARE_GROUP_HEARTBEAT == 76
    assert {ApiKey.FETCH: "x"}.get(1) == "x"


def test_the_members_are_kafka_4_4s_requests():
    """Every request of Kafka 4.4.0's definitions (its kafka-clients jar, ``python -m kafka_reference fetch``)."""
    import zipfile
    from kafka_reference.broker import JARS, KAFKA_VERSION
    jar = JARS / f"kafka-clients-{KAFKA_VERSION}.jar"
    if not jar.exists():
        pytest.skip(f"Kafka {KAFKA_VERSION}'s clients jar not found ({jar}): `python -m kafka_reference fetch` copies it")
    expected = {}
    with zipfile.ZipFile(jar) as archive:
        for entry in archive.namelist():
            if entry.startswith("common/message/") and entry.endswith("Request.json"):
                text = "\n".join(line for line in archive.read(entry).decode().splitlines()
                                 if not line.lstrip().startswith("//"))
                message = json.loads(text)
                expected[message["apiKey"]] = upper_snake(message["name"][:-len("Request")])
    assert {m.value: m.name for m in ApiKey} == expected
