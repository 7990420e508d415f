"""confluent-kafka's JSON Schema and Protobuf serializers through kafkaemu's broker and registry:
auto-registration, use.latest.version, references (Protobuf imports registered as subjects by the
serializer itself) and the registry's answers for each type."""
from __future__ import annotations

import json

import pytest

from .schema_registry_helpers import consume, produce, unique

pytest.importorskip("httpx2", reason="confluent-kafka's registry client needs httpx2 (confluent-kafka[schemaregistry])")
pytest.importorskip("jsonschema", reason="confluent-kafka's JSON serializer needs jsonschema (confluent-kafka[json])")
pytest.importorskip("google.protobuf", reason="confluent-kafka's Protobuf serializer needs protobuf "
                                              "(confluent-kafka[protobuf])")

from confluent_kafka.schema_registry import Schema, SchemaRegistryClient  # noqa: E402
from confluent_kafka.schema_registry.error import SchemaRegistryError  # noqa: E402
from confluent_kafka.schema_registry.json_schema import JSONDeserializer, JSONSerializer  # noqa: E402
from confluent_kafka.schema_registry.protobuf import ProtobufDeserializer, ProtobufSerializer  # noqa: E402
from google.protobuf import descriptor_pb2, descriptor_pool  # noqa: E402
from google.protobuf.message_factory import GetMessageClass  # noqa: E402

ORDER = {"$schema": "http://json-schema.org/draft-07/schema#", "title": "Order", "type": "object",
         "properties": {"id": {"type": "integer"}, "item": {"type": "string"}}, "required": ["id"],
         "additionalProperties": False}


@pytest.fixture
def emulator(kafka_emulator_with_schema_registry):
    return kafka_emulator_with_schema_registry


@pytest.fixture
def client(emulator):
    return SchemaRegistryClient({"url": emulator.get_schema_registry_url()})


def test_schema_types(client):
    assert sorted(client.get_schema_types()) == ["AVRO", "JSON", "PROTOBUF"]


def test_json_serializer_round_trip(emulator, client):
    topic = unique("json-orders")
    orders = [{"id": i, "item": f"thing-{i}"} for i in range(10)]
    produce(emulator, topic, orders, JSONSerializer(json.dumps(ORDER), client))
    registered = client.get_latest_version(f"{topic}-value")
    assert registered.schema.schema_type == "JSON"
    assert json.loads(registered.schema.schema_str) == ORDER
    reader = SchemaRegistryClient({"url": emulator.get_schema_registry_url()})
    assert consume(emulator, topic, 10, JSONDeserializer(None, schema_registry_client=reader)) == orders
    # a closed content model may gain an optional property (BACKWARD), not lose one
    wider = {**ORDER, "properties": {**ORDER["properties"], "note": {"type": "string"}}}
    assert client.test_compatibility(f"{topic}-value", Schema(json.dumps(wider), "JSON")) is True
    narrower = {**ORDER, "properties": {"id": {"type": "integer"}}}
    assert client.test_compatibility(f"{topic}-value", Schema(json.dumps(narrower), "JSON")) is False
    with pytest.raises(SchemaRegistryError) as info:
        client.register_schema(f"{topic}-value", Schema(json.dumps(narrower), "JSON"))
    assert info.value.error_code == 409
    client.register_schema(f"{topic}-value", Schema(json.dumps(wider), "JSON"))
    fresh = SchemaRegistryClient({"url": emulator.get_schema_registry_url()})   # no cached latest version
    serializer = JSONSerializer(json.dumps(wider), fresh, conf={"auto.register.schemas": False,
                                                                "use.latest.version": True})
    produce(emulator, topic, [{"id": 99, "item": "x", "note": "n"}], serializer)
    assert consume(emulator, topic, 11, JSONDeserializer(None, schema_registry_client=reader))[-1]["note"] == "n"


def _message_classes():
    """Two .proto files built as descriptors (no protoc needed): acme/money.proto and an order
    importing it and google/protobuf/timestamp.proto."""
    F = descriptor_pb2.FieldDescriptorProto
    from google.protobuf import timestamp_pb2
    pool = descriptor_pool.DescriptorPool()
    ts = descriptor_pb2.FileDescriptorProto()
    timestamp_pb2.DESCRIPTOR.CopyToProto(ts)
    pool.Add(ts)
    money = descriptor_pb2.FileDescriptorProto(name="acme/money.proto", package="acme", syntax="proto3")
    m = money.message_type.add(name="Money")
    m.field.add(name="currency", number=1, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL)
    m.field.add(name="units", number=2, type=F.TYPE_INT64, label=F.LABEL_OPTIONAL)
    pool.Add(money)
    order = descriptor_pb2.FileDescriptorProto(name="acme/order.proto", package="acme", syntax="proto3",
                                               dependency=["acme/money.proto", "google/protobuf/timestamp.proto"])
    o = order.message_type.add(name="Order")
    o.field.add(name="id", number=1, type=F.TYPE_INT32, label=F.LABEL_OPTIONAL)
    o.field.add(name="price", number=2, type=F.TYPE_MESSAGE, type_name=".acme.Money", label=F.LABEL_OPTIONAL)
    o.field.add(name="tags", number=3, type=F.TYPE_STRING, label=F.LABEL_REPEATED)
    o.field.add(name="at", number=4, type=F.TYPE_MESSAGE, type_name=".google.protobuf.Timestamp",
                label=F.LABEL_OPTIONAL)
    pool.Add(order)
    return GetMessageClass(pool.FindMessageTypeByName("acme.Order"))


def test_protobuf_serializer_round_trip_with_references(emulator, client):
    Order = _message_classes()
    topic = unique("proto-orders")
    orders = [Order(id=i, price={"currency": "EUR", "units": 10 * i}, tags=["a", str(i)]) for i in range(5)]
    for o in orders:
        o.at.FromSeconds(1_700_000_000 + o.id)
    produce(emulator, topic, orders, ProtobufSerializer(Order, client, conf={"use.deprecated.format": False}))
    registered = client.get_latest_version(f"{topic}-value")
    assert registered.schema.schema_type == "PROTOBUF"
    assert "message Order {" in registered.schema.schema_str and "Money price = 2;" in registered.schema.schema_str
    assert [r.name for r in registered.schema.references] == ["acme/money.proto"]
    money_subject = registered.schema.references[0].subject
    assert "message Money" in client.get_latest_version(money_subject).schema.schema_str
    assert client.get_referenced_by(money_subject, 1) == [registered.schema_id]
    reader = SchemaRegistryClient({"url": emulator.get_schema_registry_url()})
    got = consume(emulator, topic, 5, ProtobufDeserializer(Order, conf={"use.deprecated.format": False},
                                                          schema_registry_client=reader))
    assert got == orders


def test_protobuf_text_registration_and_compatibility(client):
    subject = unique("proto-text")
    v1 = 'syntax = "proto3";\npackage p;\n\nmessage M {\n  string a = 1;\n  int32 b = 2;\n}\n'
    first = client.register_schema(subject, Schema(v1, "PROTOBUF"))
    assert client.get_schema(first).schema_str == v1                          # already canonical
    assert client.register_schema(subject, Schema(v1.replace("\n  ", " "), "PROTOBUF")) == first
    added = v1.replace("int32 b = 2;", "int32 b = 2;\n  repeated string c = 3;")
    assert client.test_compatibility(subject, Schema(added, "PROTOBUF")) is True
    retyped = v1.replace("int32 b = 2;", "string b = 2;")
    assert client.test_compatibility(subject, Schema(retyped, "PROTOBUF")) is False
    with pytest.raises(SchemaRegistryError) as info:
        client.register_schema(subject, Schema("message {", "PROTOBUF"))
    assert info.value.error_code == 42201


@pytest.mark.parametrize("strategy,subject", [
    ("topic", "{topic}-value"), ("topic_record", "{topic}-{record}"), ("record", "{record}")])
@pytest.mark.parametrize("kind", ["json", "protobuf"])
def test_subject_name_strategies(emulator, client, kind, strategy, subject):
    from confluent_kafka.schema_registry import (record_subject_name_strategy, topic_record_subject_name_strategy,
                                                 topic_subject_name_strategy)
    fn = {"topic": topic_subject_name_strategy, "topic_record": topic_record_subject_name_strategy,
          "record": record_subject_name_strategy}[strategy]
    topic = unique(f"{kind}-strategy")
    reader = SchemaRegistryClient({"url": emulator.get_schema_registry_url()})
    if kind == "json":
        record_name = f"Order{uuid_suffix(topic)}"
        schema = {**ORDER, "title": record_name}
        value = {"id": 5, "item": "x"}
        produce(emulator, topic, [value], JSONSerializer(json.dumps(schema), client,
                                                         conf={"subject.name.strategy": fn}))
        got = consume(emulator, topic, 1, JSONDeserializer(None, schema_registry_client=reader))
    else:
        Order = _message_classes()
        record_name = "acme.Order"
        value = Order(id=5, tags=["t"])
        produce(emulator, topic, [value], ProtobufSerializer(Order, client, conf={
            "use.deprecated.format": False, "subject.name.strategy": fn}))
        got = consume(emulator, topic, 1, ProtobufDeserializer(Order, conf={"use.deprecated.format": False},
                                                               schema_registry_client=reader))
    assert subject.format(topic=topic, record=record_name) in client.get_subjects()
    assert got == [value]


def uuid_suffix(topic: str) -> str:
    return topic.rsplit("-", 1)[1]


def test_protobuf_use_latest_version(emulator, client):
    Order = _message_classes()
    topic = unique("proto-latest")
    produce(emulator, topic, [Order(id=1)], ProtobufSerializer(Order, client, conf={"use.deprecated.format": False}))
    fresh = SchemaRegistryClient({"url": emulator.get_schema_registry_url()})
    latest = ProtobufSerializer(Order, fresh, conf={"use.deprecated.format": False, "auto.register.schemas": False,
                                                    "use.latest.version": True})
    produce(emulator, topic, [Order(id=2)], latest)
    assert client.get_versions(f"{topic}-value") == [1]
    got = consume(emulator, topic, 2, ProtobufDeserializer(Order, conf={"use.deprecated.format": False},
                                                          schema_registry_client=fresh))
    assert [o.id for o in got] == [1, 2]
