"""JSON Schema compatibility over ``$ref``s (issue 28): each schema's references are followed in its
own document, so a change made through ``#/definitions/X`` or around a ``$ref`` cycle is judged as
the same change written inline; pairs are memoised as Confluent's SchemaDiff memoises them, so
sharing definitions costs the pairs, not the paths to them; and a check that would still need more
than its work budget stops with Confluent's request-timeout answer."""
from __future__ import annotations

import json

import pytest

from kafkaemu.schema_registry import json_diff, json_format

from .helpers import Env, error_code

STRING, INTEGER = {"type": "string"}, {"type": "integer"}


def _backward_refused(old: dict, new: dict) -> tuple[int, int] | None:
    env = Env()
    env.register("s", json.dumps(old), "JSON")
    try:
        env.register("s", json.dumps(new), "JSON")
    except Exception:
        return error_code(env.register, "s", json.dumps(new), "JSON")
    return None


def obj(field) -> dict:
    return {"type": "object", "properties": {"f": field}}


def defined(field) -> dict:
    return {"definitions": {"X": field}, **obj({"$ref": "#/definitions/X"})}


def cycle(field) -> dict:
    node = {"type": "object", "properties": {"f": field, "next": {"$ref": "#/definitions/X"}}}
    return {"definitions": {"X": node}, "$ref": "#/definitions/X"}


def test_a_change_through_definitions_is_refused_as_inline():
    assert _backward_refused(obj(STRING), obj(INTEGER)) == (409, 409)
    assert _backward_refused(defined(STRING), defined(INTEGER)) == (409, 409)


def test_a_change_inside_a_ref_cycle_is_refused():
    assert _backward_refused(cycle(STRING), cycle(INTEGER)) == (409, 409)


def test_unchanged_refs_and_cycles_stay_compatible():
    assert _backward_refused(defined(STRING), {**defined(STRING), "title": "renamed"}) is None
    assert _backward_refused(cycle(STRING), {**cycle(STRING), "description": "same"}) is None


def test_the_old_schemas_refs_are_not_read_in_the_new_document():
    """The new document defines X differently under another name; the old one's X is its own."""
    old = defined(STRING)
    new = {"definitions": {"X": INTEGER, "Y": STRING}, **obj({"$ref": "#/definitions/Y"})}
    assert _backward_refused(old, new) is None
    new = {"definitions": {"X": STRING, "Y": INTEGER}, **obj({"$ref": "#/definitions/Y"})}
    assert _backward_refused(old, new) == (409, 409)


def _masking(t0_id: str, t1_id: str) -> dict:
    """Confluent's testRecursiveOneOfMemoizationDoesNotMaskIncompatibility: the type changes of T0.id
    and T1.id sit behind a cycle T0 -> T2 -> T0; one memoised pass caches (T0, T0) as compatible
    while the cycle back into it is assumed so."""
    def node(id_type: str, target: str) -> dict:
        return {"type": "object", "additionalProperties": True,
                "properties": {"id": {"type": id_type}, "ref": {"oneOf": [{"$ref": f"#/definitions/{target}"}]}}}
    return {"$schema": "http://json-schema.org/draft-07/schema#", "type": "object", "additionalProperties": True,
            "definitions": {"T0": node(t0_id, "T2"), "T1": node(t1_id, "T2"), "T2": node("integer", "T0")},
            "properties": {"root": {"oneOf": [{"$ref": "#/definitions/T0"}, {"$ref": "#/definitions/T1"}]}}}


def _incompatible(old: dict, new: dict) -> list:
    a, b = json_format.parse(json.dumps(old), []), json_format.parse(json.dumps(new), [])
    return json_diff.incompatible(a.document, b.document, a.resolve, b.resolve)


def test_memoised_pairs_do_not_mask_a_change_behind_a_cycle():
    assert _incompatible(_masking("integer", "boolean"), _masking("boolean", "number"))
    assert not _incompatible(_masking("integer", "boolean"), _masking("integer", "boolean"))


def probe(depth: int, leaf: str, name: str) -> dict:
    definitions = {f"{name}0": obj({"type": leaf})}
    for level in range(1, depth + 1):
        definitions[f"{name}{level}"] = {"anyOf": [{"$ref": f"#/definitions/{name}{level - 1}"}] * 2}
    return {"definitions": definitions, "$ref": f"#/definitions/{name}{depth}"}


@pytest.mark.parametrize("depth", [10, 16, 60])
def test_shared_definitions_cost_pairs_not_paths(depth):
    """4^depth comparisons before; within the budget at any depth now."""
    found = _incompatible(probe(depth, "string", "d"), probe(depth, "integer", "e"))
    assert [kind for kind, _ in found] == ["COMBINED_TYPE_SUBSCHEMAS_CHANGED"]


def wide(count: int, leaf: str) -> dict:
    return {"anyOf": [{"type": "object", "properties": {f"f{i}": {"type": leaf}}, "required": [f"f{i}"],
                       "additionalProperties": False} for i in range(count)]}


def test_a_check_past_its_budget_stops_and_is_answered_as_a_request_timeout():
    with pytest.raises(json_diff.BudgetExceeded):
        _incompatible(wide(460, "string"), wide(460, "integer"))
    assert _incompatible(wide(40, "string"), wide(40, "integer"))   # the same shape, smaller, is judged
    env = Env()
    env.register("s", json.dumps(wide(460, "string")), "JSON")
    assert error_code(env.register, "s", json.dumps(wide(460, "integer")), "JSON") == (504, 504)
    assert error_code(env.registry.compatibility, "s", None,
                      {"schema": json.dumps(wide(460, "integer")), "schemaType": "JSON"}) == (504, 504)
    assert env.registry.versions("s") == [1]
