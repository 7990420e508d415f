"""JSON Schema compatibility as Confluent's documented rules classify each change (Confluent's
"JSON Schema compatibility rules": an open content model accepts any extra property, so adding a
constrained one is incompatible backward; a closed one accepts none, so removing one is)."""
from __future__ import annotations

import json

import pytest

from .helpers import LEVELS, Env, allowed_at, error_code


def obj(props: dict, closed: bool = False, required=()) -> str:
    schema = {"type": "object", "properties": props}
    if closed:
        schema["additionalProperties"] = False
    if required:
        schema["required"] = list(required)
    return json.dumps(schema)


S = {"type": "string"}
I = {"type": "integer"}

# (old, new, BACKWARD ok, FORWARD ok)
PAIRS = [
    (obj({"a": S}, closed=True), obj({"a": S, "b": I}, closed=True), True, False),
    (obj({"a": S}), obj({"a": S, "b": I}), False, True),
    (obj({"a": S}), obj({"a": S, "b": {}}), True, True),
    (obj({"a": {"type": "string", "maxLength": 5}}), obj({"a": {"type": "string", "maxLength": 9}}), True, False),
    (obj({"a": S}), obj({"a": I}), False, False),
    (obj({"a": I}), obj({"a": {"type": "number"}}), True, False),
    (obj({"a": {"enum": ["x", "y"]}}), obj({"a": {"enum": ["x", "y", "z"]}}), True, False),
    (obj({"a": S}, required=["a"]), obj({"a": S}), True, False),
    (obj({"a": S}), obj({"a": {"type": ["string", "null"]}}), True, False),
    (obj({"a": {"type": "array", "items": S}}), obj({"a": {"type": "array", "items": S, "maxItems": 3}}), False, True),
    (obj({"a": S}), obj({"a": S}), True, True),
]


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("old,new,backward,forward", PAIRS)
def test_one_step(level, old, new, backward, forward):
    env = Env()
    env.registry.put_config("s", {"compatibility": level})
    env.register("s", old, "JSON")
    allowed = allowed_at(level, backward, forward)
    assert (not env.registry.compatibility("s", None, {"schema": new, "schemaType": "JSON"})) == allowed
    if not allowed:
        assert error_code(env.register, "s", new, "JSON") == (409, 409)


def test_transitive_over_three_versions():
    v1 = obj({"a": {"type": "string", "maxLength": 3}})
    v2 = obj({"a": {"type": "string", "maxLength": 9}})
    v3 = obj({"a": {"type": "string", "maxLength": 5}})   # narrower than v2 but wider than v1
    for level, ok in (("FORWARD", True), ("FORWARD_TRANSITIVE", False)):
        env = Env()
        env.register("s", v1, "JSON")
        env.register("s", v2, "JSON")
        env.registry.put_config("s", {"compatibility": level})
        if ok:
            assert env.register("s", v3, "JSON") == 3
        else:
            assert error_code(env.register, "s", v3, "JSON") == (409, 409)


def test_json_schemas_are_validated_and_canonical():
    env = Env()
    assert error_code(env.register, "s", '{"type": 5}', "JSON") == (422, 42201)
    assert error_code(env.register, "s", '"just a string"', "JSON") == (422, 42201)
    first = env.register("s", json.dumps({"type": "object", "properties": {"a": S}}, indent=2), "JSON")
    assert env.register("t", '{"type":"object","properties":{"a":{"type":"string"}}}', "JSON") == first
    assert env.registry.get_version("s", "1").schema == '{"type":"object","properties":{"a":{"type":"string"}}}'
    # the same text without schemaType is read as Avro, which it is not
    assert error_code(env.register, "u", '{"type":"object","properties":{"a":{"type":"string"}}}') == (422, 42201)


def test_references_resolve_into_the_referenced_schema():
    env = Env()
    address = json.dumps({"$id": "https://acme/address.json", "type": "object", "properties": {"city": S},
                          "additionalProperties": False})
    env.register("address", address, "JSON")
    person = json.dumps({"type": "object", "properties": {"home": {"$ref": "address.json"}}})
    refs = [{"name": "address.json", "subject": "address", "version": 1}]
    env.register("person", person, "JSON", references=refs)
    env.registry.put_config("person", {"compatibility": "FORWARD"})
    assert env.registry.compatibility("person", None, {"schema": person, "schemaType": "JSON", "references": refs}) == []
