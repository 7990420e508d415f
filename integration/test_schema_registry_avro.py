"""confluent-kafka's SchemaRegistryClient and its Avro serializers against kafkaemu's built-in
registry and broker: every client call the registry covers, with Confluent's error codes, and
records serialized with registry ids through the broker and back."""
from __future__ import annotations

import json

import pytest

from .schema_registry_helpers import consume, produce, unique

pytest.importorskip("fastavro", reason="confluent-kafka's Avro serializer needs fastavro (confluent-kafka[avro])")
pytest.importorskip("httpx2", reason="confluent-kafka's registry client needs httpx2 (confluent-kafka[schemaregistry])")

from confluent_kafka.schema_registry import (  # noqa: E402
    Schema, SchemaReference, SchemaRegistryClient, record_subject_name_strategy, topic_record_subject_name_strategy)
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer  # noqa: E402
from confluent_kafka.schema_registry.error import SchemaRegistryError  # noqa: E402

USER = json.dumps({"type": "record", "name": "User", "namespace": "com.acme", "fields": [
    {"name": "name", "type": "string"}, {"name": "age", "type": "int"}]})
USER_V2 = json.dumps({"type": "record", "name": "User", "namespace": "com.acme", "fields": [
    {"name": "name", "type": "string"}, {"name": "age", "type": "int"},
    {"name": "email", "type": ["null", "string"], "default": None}]})
USER_BAD = json.dumps({"type": "record", "name": "User", "namespace": "com.acme", "fields": [
    {"name": "name", "type": "string"}, {"name": "age", "type": "string"}]})


@pytest.fixture
def emulator(kafka_emulator_with_schema_registry):
    return kafka_emulator_with_schema_registry


@pytest.fixture
def client(emulator):
    return SchemaRegistryClient({"url": emulator.get_schema_registry_url()})


def fails_with(code: int, fn, *args, **kwargs) -> SchemaRegistryError:
    with pytest.raises(SchemaRegistryError) as info:
        fn(*args, **kwargs)
    assert info.value.error_code == code, info.value
    return info.value


def test_client_calls(client):
    subject = unique("calls") + "-value"
    first = client.register_schema(subject, Schema(USER, "AVRO"))
    assert client.register_schema(subject, Schema(USER, "AVRO")) == first
    assert sorted(client.get_schema_types()) == ["AVRO", "JSON", "PROTOBUF"]
    assert json.loads(client.get_schema(first).schema_str) == json.loads(USER)
    assert client.get_subjects_by_schema_id(first) == [subject]
    assert [(v.subject, v.version) for v in client.get_schema_versions(first)] == [(subject, 1)]
    found = client.lookup_schema(subject, Schema(USER, "AVRO"))
    assert (found.schema_id, found.version, found.subject) == (first, 1, subject)
    assert subject in client.get_subjects()
    second = client.register_schema(subject, Schema(USER_V2, "AVRO"))
    assert second != first
    latest = client.get_latest_version(subject)
    assert (latest.version, latest.schema_id) == (2, second)
    assert client.get_version(subject, 1).schema_id == first
    assert client.get_versions(subject) == [1, 2]
    assert client.get_referenced_by(subject, 1) == []
    # compatibility
    assert client.test_compatibility(subject, Schema(USER_V2, "AVRO")) is True
    assert client.test_compatibility(subject, Schema(USER_BAD, "AVRO")) is False
    assert client.test_compatibility_all_versions(subject, Schema(USER_BAD, "AVRO")) is False
    error = fails_with(409, client.register_schema, subject, Schema(USER_BAD, "AVRO"))
    assert error.http_status_code == 409
    assert client.get_compatibility() == "BACKWARD"
    fails_with(40408, client.get_compatibility, subject)
    assert client.set_compatibility(subject, "NONE") == {"compatibility": "NONE"}
    assert client.get_compatibility(subject) == "NONE"
    assert client.get_config(subject).compatibility_level.value == "NONE"
    client.register_schema(subject, Schema(USER_BAD, "AVRO"))
    client.delete_config(subject)
    fails_with(42203, client.set_compatibility, subject, "SOMETIMES")
    # modes
    assert client.get_global_mode() == "READWRITE"
    assert client.update_mode(subject, "READONLY") == "READONLY"
    assert client.get_mode(subject) == "READONLY"
    fails_with(42205, client.register_schema, subject, Schema('"string"', "AVRO"))
    assert client.delete_mode(subject) == "READONLY"
    fails_with(40409, client.get_mode, subject)
    assert client.get_contexts() == ["."]
    # deletes
    assert client.delete_version(subject, 3) == 3
    assert client.get_versions(subject) == [1, 2]
    assert client.delete_subject(subject) == [1, 2]
    assert subject not in client.get_subjects()
    assert subject in client.get_subjects(deleted=True)
    assert client.delete_subject(subject, permanent=True) == [1, 2, 3]
    fails_with(40401, client.get_versions, subject)


def test_client_errors(client):
    subject = unique("errors")
    fails_with(40401, client.get_latest_version, subject)
    fails_with(40401, client.lookup_schema, subject, Schema(USER, "AVRO"))
    fails_with(40403, client.get_schema, 987654)
    client.register_schema(subject, Schema(USER, "AVRO"))
    fails_with(40402, client.get_version, subject, 9)
    fails_with(40403, client.lookup_schema, subject, Schema(USER_V2, "AVRO"))
    fails_with(42201, client.register_schema, subject, Schema('{"type": "record"}', "AVRO"))
    fails_with(42201, client.register_schema, subject, Schema("not json", "AVRO"))
    fails_with(40405, client.delete_subject, subject, permanent=True)
    fails_with(40407, client.delete_version, subject, 1, permanent=True)


def test_avro_serializer_round_trip_with_auto_registration(emulator, client):
    topic = unique("avro-users")
    serializer = AvroSerializer(client, USER)
    users = [{"name": f"user-{i}", "age": i} for i in range(20)]
    produce(emulator, topic, users, serializer)
    assert client.get_latest_version(f"{topic}-value").version == 1
    reader = SchemaRegistryClient({"url": emulator.get_schema_registry_url()})   # no cached schemas
    assert consume(emulator, topic, 20, AvroDeserializer(reader)) == users


def test_use_latest_version_and_evolution(emulator, client):
    topic = unique("avro-latest")
    client.register_schema(f"{topic}-value", Schema(USER, "AVRO"))
    client.register_schema(f"{topic}-value", Schema(USER_V2, "AVRO"))
    serializer = AvroSerializer(client, USER_V2, conf={"auto.register.schemas": False, "use.latest.version": True})
    produce(emulator, topic, [{"name": "a", "age": 1, "email": "a@x"}], serializer)
    old_writer = AvroSerializer(client, USER)   # auto-registers: the same id as version 1
    produce(emulator, topic, [{"name": "b", "age": 2}], old_writer)
    # a deserializer reading with the latest schema resolves the old record to it
    latest = AvroDeserializer(SchemaRegistryClient({"url": emulator.get_schema_registry_url()}), USER_V2)
    assert consume(emulator, topic, 2, latest) == [{"name": "a", "age": 1, "email": "a@x"},
                                                   {"name": "b", "age": 2, "email": None}]
    assert client.get_versions(f"{topic}-value") == [1, 2]


@pytest.mark.parametrize("strategy,subject", [
    (None, "{topic}-value"),
    (topic_record_subject_name_strategy, "{topic}-com.acme.User"),
    (record_subject_name_strategy, "com.acme.User"),
])
def test_subject_name_strategies(emulator, client, strategy, subject):
    topic = unique("avro-strategy")
    conf = {"subject.name.strategy": strategy} if strategy else {}
    produce(emulator, topic, [{"name": "s", "age": 3}], AvroSerializer(client, USER, conf=conf))
    assert subject.format(topic=topic) in client.get_subjects()
    assert consume(emulator, topic, 1, AvroDeserializer(client)) == [{"name": "s", "age": 3}]


def test_references(emulator, client):
    topic = unique("avro-refs")
    address = json.dumps({"type": "record", "name": "Address", "namespace": "com.acme",
                          "fields": [{"name": "city", "type": "string"}]})
    person = json.dumps({"type": "record", "name": "Person", "namespace": "com.acme",
                         "fields": [{"name": "name", "type": "string"}, {"name": "home", "type": "Address"}]})
    address_subject = unique("address")
    client.register_schema(address_subject, Schema(address, "AVRO"))
    schema = Schema(person, "AVRO", [SchemaReference("com.acme.Address", address_subject, 1)])
    person_id = client.register_schema(f"{topic}-value", schema)
    assert client.get_referenced_by(address_subject, 1) == [person_id]
    fails_with(42206, client.delete_version, address_subject, 1)
    got = client.get_schema(person_id)
    assert [(r.name, r.subject, r.version) for r in got.references] == [("com.acme.Address", address_subject, 1)]
    serializer = AvroSerializer(client, schema, conf={"auto.register.schemas": False, "use.latest.version": True})
    value = {"name": "p", "home": {"city": "Lyon"}}
    produce(emulator, topic, [value], serializer)
    assert consume(emulator, topic, 1, AvroDeserializer(SchemaRegistryClient(
        {"url": emulator.get_schema_registry_url()}))) == [value]


def test_metadata_and_rule_sets_as_sent(client):
    from confluent_kafka.schema_registry import (Metadata, MetadataProperties, MetadataTags, Rule, RuleKind,
                                                 RuleMode, RuleSet)
    subject = unique("contract")
    metadata = Metadata(MetadataTags({}), MetadataProperties({"owner": "team-a", "tier": "1"}), set())
    rules = RuleSet(domain_rules=[Rule("checkAge", None, RuleKind.CONDITION, RuleMode.WRITE, "CEL", None, None,
                                       "message.age >= 0", None, None, False)], migration_rules=[])
    client.register_schema(subject, Schema(USER, "AVRO", metadata=metadata, rule_set=rules))
    got = client.get_latest_version(subject).schema
    assert got.metadata.properties.properties == {"owner": "team-a", "tier": "1"}
    assert got.rule_set.domain_rules[0].expr == "message.age >= 0"
    assert client.get_latest_with_metadata(subject, {"owner": "team-a"}).version == 1
    fails_with(40403, client.get_latest_with_metadata, subject, {"owner": "someone-else"})


def test_more_client_calls(client):
    from confluent_kafka.schema_registry import ConfigCompatibilityLevel, Metadata, MetadataProperties, ServerConfig
    prefix = unique("more")
    full = client.register_schema_full_response(f"{prefix}-a", Schema(USER, "AVRO"))
    assert full.schema_id >= 1 and full.subject == f"{prefix}-a"
    client.register_schema(f"{prefix}-b", Schema('"long"', "AVRO"))
    assert client.get_subjects(subject_prefix=prefix) == [f"{prefix}-a", f"{prefix}-b"]
    client.delete_subject(f"{prefix}-b")
    assert client.get_subjects(subject_prefix=prefix) == [f"{prefix}-a"]
    assert client.get_subjects(subject_prefix=prefix, deleted_only=True) == [f"{prefix}-b"]
    defaults = Metadata(None, MetadataProperties({"owner": "team-b"}), None)
    config = ServerConfig(compatibility=ConfigCompatibilityLevel.FULL_TRANSITIVE, default_metadata=defaults)
    client.set_config(f"{prefix}-a", config)
    got = client.get_config(f"{prefix}-a")
    assert got.compatibility_level == ConfigCompatibilityLevel.FULL_TRANSITIVE
    assert got.default_metadata.properties.properties == {"owner": "team-b"}
    assert json.loads(client.get_schema(full.schema_id, subject_name=f"{prefix}-a", fmt="resolved")
                      .schema_str) == json.loads(USER)
    assert [(v.subject, v.version) for v in client.get_schema_versions(full.schema_id, subject_name=f"{prefix}-a")] \
        == [(f"{prefix}-a", 1)]


def test_global_mode():
    # a registry of its own: READONLY on the global mode would hold every other test's subjects
    from kafkaemu.testing import KafkaEmulator
    with KafkaEmulator(schema_registry=True) as own:
        client = SchemaRegistryClient({"url": own.get_schema_registry_url()})
        assert client.update_global_mode("READONLY") == "READONLY"
        fails_with(42205, client.register_schema, "s", Schema('"int"', "AVRO"))
        fails_with(42205, client.set_compatibility, None, "NONE")
        assert client.update_global_mode("READWRITE") == "READWRITE"
        assert client.update_global_mode("IMPORT") == "IMPORT"   # nothing registered yet: allowed
        client.update_global_mode("READWRITE")
        client.register_schema("s", Schema('"int"', "AVRO"))
        fails_with(42205, client.update_global_mode, "IMPORT")
        assert client.update_global_mode("IMPORT", force=True) == "IMPORT"
