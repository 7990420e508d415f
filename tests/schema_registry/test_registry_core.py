"""The registry's operations over the _schemas topic: ids, versions, deletes, configs, modes,
references and the records Confluent would write."""
from __future__ import annotations

import json

from kafkaemu.schema_registry.registry import SchemaRegistry

from .helpers import Env, error_code, record

V1 = record("R", ("a", "int"))
V2 = record("R", ("a", "int"), ("b", "string", "x"))


def test_ids_are_global_and_the_same_schema_keeps_its_id():
    env = Env()
    assert env.register("s1", V1) == 1
    assert env.register("s1", V1) == 1                      # registered again: the same id, no new version
    assert env.register("s2", json.dumps(json.loads(V1), indent=2)) == 1   # other text, same schema, other subject
    assert env.register("s1", V2) == 2
    assert env.registry.versions("s1") == [1, 2]
    assert env.registry.versions("s2") == [1]
    assert env.register("p", '{"type": "string"}') == env.register("q", '"string"') == 3
    assert env.registry.schema_by_id(3).schema == '"string"'
    assert env.registry.subjects() == ["p", "q", "s1", "s2"]


def test_records_are_confluents_keys_and_values():
    env = Env()
    env.register("s", V1)
    env.registry.put_config("s", {"compatibility": "full"})
    env.registry.put_mode(None, {"mode": "READONLY"})
    env.registry.put_mode(None, {"mode": "READWRITE"})
    env.registry.delete_subject("s")
    records = env.records()
    assert records[0] == ({"keytype": "SCHEMA", "subject": "s", "version": 1, "magic": 1},
                          {"subject": "s", "version": 1, "id": 1, "schema": json.dumps(json.loads(V1),
                           separators=(",", ":")), "deleted": False})
    assert records[1] == ({"keytype": "CONFIG", "subject": "s", "magic": 0}, {"compatibilityLevel": "FULL"})
    assert records[2] == ({"keytype": "MODE", "magic": 0}, {"mode": "READONLY"})
    assert records[4] == ({"keytype": "DELETE_SUBJECT", "subject": "s", "magic": 0}, {"subject": "s", "version": 1})
    topic = env.broker.store.get("_schemas")
    assert len(topic.partitions) == 1 and topic.configs["cleanup.policy"] == "compact"


def test_a_new_registry_reads_the_same_state_from_the_topic():
    env = Env()
    env.register("s", V1)
    env.register("s", V2)
    env.register("t", '"int"')
    env.registry.delete_version("s", "1")
    env.registry.put_config(None, {"compatibility": "FORWARD"})
    again = SchemaRegistry(env.broker.store, env.clock)
    assert again.versions("s") == [2]
    assert again.versions("s", deleted=True) == [1, 2]
    assert again.get_config(None)["compatibilityLevel"] == "FORWARD"
    assert again.register("u", {"schema": '"long"'})["id"] == 4   # ids continue above every id stored


def test_lookup_finds_the_version_of_a_schema():
    env = Env()
    env.register("s", V1)
    env.register("s", V2)
    found = env.registry.lookup("s", {"schema": json.dumps(json.loads(V1), indent=1)})
    assert (found.version, found.id) == (1, 1)
    assert error_code(env.registry.lookup, "s", {"schema": '"int"'}) == (404, 40403)
    assert error_code(env.registry.lookup, "nope", {"schema": V1}) == (404, 40401)


def test_versions_by_number_and_latest_and_their_errors():
    env = Env()
    env.register("s", V1)
    env.register("s", V2)
    assert env.registry.get_version("s", "latest").version == 2
    assert env.registry.get_version("s", "-1").version == 2
    assert env.registry.get_version("s", "1").id == 1
    assert error_code(env.registry.get_version, "s", "3") == (404, 40402)
    assert error_code(env.registry.get_version, "x", "1") == (404, 40401)
    for bad in ("0", "abc", "-2", str(2**31)):
        assert error_code(env.registry.get_version, "s", bad) == (422, 42202)


def test_soft_then_permanent_deletes():
    env = Env()
    env.register("s", V1)
    env.register("s", V2)
    assert error_code(env.registry.delete_version, "s", "1", permanent=True) == (404, 40407)
    assert env.registry.delete_version("s", "1") == 1
    assert error_code(env.registry.delete_version, "s", "1") == (404, 40406)
    assert env.registry.versions("s") == [2]
    assert error_code(env.registry.get_version, "s", "1") == (404, 40402)
    assert env.registry.get_version("s", "1", deleted=True).id == 1
    assert env.registry.schema_by_id(1).id == 1            # a soft-deleted version keeps its id readable
    assert error_code(env.registry.delete_subject, "s", permanent=True) == (404, 40405)
    assert env.registry.delete_subject("s") == [2]
    assert env.registry.subjects() == [] and env.registry.subjects(deleted=True) == ["s"]
    assert env.registry.subjects(deleted_only=True) == ["s"]
    assert error_code(env.registry.versions, "s") == (404, 40401)
    assert error_code(env.registry.delete_subject, "s") == (404, 40404)
    assert env.registry.delete_subject("s", permanent=True) == [1, 2]
    assert env.registry.subjects(deleted=True) == []
    assert error_code(env.registry.schema_by_id, 1) == (404, 40403)
    assert error_code(env.registry.delete_subject, "s") == (404, 40401)
    # registering again after a soft delete: a new version, the same id
    env.register("t", V1)
    env.registry.delete_subject("t")
    assert env.register("t", V1) == 3
    assert env.registry.versions("t") == [2]


def test_configs():
    env = Env()
    assert env.registry.get_config(None) == {"compatibilityLevel": "BACKWARD"}
    assert error_code(env.registry.get_config, "s") == (404, 40408)
    assert env.registry.get_config("s", default_to_global=True)["compatibilityLevel"] == "BACKWARD"
    assert env.registry.put_config("s", {"compatibility": "full_transitive"}) == {"compatibility": "FULL_TRANSITIVE"}
    assert env.registry.get_config("s") == {"compatibilityLevel": "FULL_TRANSITIVE"}
    assert error_code(env.registry.put_config, "s", {"compatibility": "SIDEWAYS"}) == (422, 42203)
    metadata = {"properties": {"owner": "team-a"}}
    rules = {"domainRules": [{"name": "r", "kind": "CONDITION", "mode": "WRITE", "type": "CEL", "expr": "true"}]}
    env.registry.put_config("s", {"defaultMetadata": metadata, "overrideRuleSet": rules})
    assert env.registry.get_config("s") == {"compatibilityLevel": "FULL_TRANSITIVE", "defaultMetadata": metadata,
                                            "overrideRuleSet": rules}
    assert env.registry.delete_config("s")["compatibilityLevel"] == "FULL_TRANSITIVE"
    assert error_code(env.registry.delete_config, "s") == (404, 40401)


def test_modes_readonly_and_import():
    env = Env()
    assert env.registry.get_mode(None) == {"mode": "READWRITE"}
    assert error_code(env.registry.get_mode, "s") == (404, 40409)
    assert error_code(env.registry.put_mode, None, {"mode": "SOMETIMES"}) == (422, 42204)
    env.registry.put_mode("s", {"mode": "READONLY"})
    assert error_code(env.register, "s", V1) == (422, 42205)
    env.register("other", V1)                                # other subjects stay writable
    assert error_code(env.registry.put_mode, None, {"mode": "IMPORT"}) == (422, 42205)   # subjects exist
    env.registry.put_mode("imp", {"mode": "IMPORT"})
    assert env.register("imp", V2, id=100, version=5) == 100
    assert env.registry.get_version("imp", "5").id == 100
    assert error_code(env.register, "imp", '"int"', id=100, version=6) == (422, 42207)   # id taken by another schema
    assert error_code(env.register, "s2", '"int"', id=7) == (422, 42205)               # ids only in IMPORT mode
    assert env.registry.delete_mode("imp") == {"mode": "IMPORT"}
    assert env.register("next", '"bytes"') == 101            # new ids continue above imported ones
    # READONLY also holds configs; IMPORT over soft-deleted versions removes them for good
    assert error_code(env.registry.put_config, "s", {"compatibility": "NONE"}) == (422, 42205)
    env.registry.delete_subject("next")
    env.registry.put_mode("next", {"mode": "IMPORT"})
    assert env.registry.subjects(deleted=True).count("next") == 0


def test_references_and_referenced_by():
    env = Env()
    inner = record("com.acme.Inner", ("x", "int"))
    env.register("inner", inner)
    outer = json.dumps({"type": "record", "name": "Outer", "fields": [{"name": "i", "type": "com.acme.Inner"}]})
    refs = [{"name": "com.acme.Inner", "subject": "inner", "version": 1}]
    assert error_code(env.register, "outer", outer) == (422, 42201)   # Inner unknown without the reference
    outer_id = env.register("outer", outer, references=refs)
    assert env.registry.get_version("outer", "1").references == refs
    assert env.registry.get_version("outer", "1").schema == json.dumps(json.loads(outer), separators=(",", ":"))
    assert env.registry.referenced_by("inner", "1") == [outer_id]
    assert error_code(env.registry.delete_version, "inner", "1") == (422, 42206)
    assert error_code(env.registry.delete_subject, "inner") == (422, 42206)
    bad = [{"name": "x", "subject": "missing", "version": 1}]
    assert error_code(env.register, "outer2", outer, references=bad) == (422, 42201)


def test_metadata_and_rule_set_are_stored_and_returned_as_sent():
    env = Env()
    metadata = {"properties": {"owner": "a"}, "tags": {"a": ["PII"]}}
    rule_set = {"domainRules": [{"name": "r", "kind": "CONDITION", "mode": "WRITE", "type": "CEL", "expr": "true"}]}
    first = env.register("s", V1, metadata=metadata, ruleSet=rule_set)
    sv = env.registry.get_version("s", "1")
    assert (sv.metadata, sv.rule_set) == (metadata, rule_set)
    assert env.register("s", V1) != first                   # other metadata: another schema


def test_bad_requests():
    env = Env()
    assert error_code(env.registry.register, "s", {"schema": "{not json"}) == (422, 42201)
    assert error_code(env.registry.register, "s", {"schema": '{"type": "nope"}'}) == (422, 42201)
    assert error_code(env.registry.register, "s", {"schema": '"int"', "schemaType": "XML"}) == (422, 42201)
    assert error_code(env.registry.register, "s", {"schema": ""}) == (422, 42201)
    assert error_code(env.registry.register, "s", ["schema"]) == (422, 422)
    deep = "[" * 5000 + "]" * 5000
    assert error_code(env.registry.register, "s", {"schema": deep})[1] == 42201
    assert env.registry.subjects() == []


def test_the_last_version_deleted_for_good_takes_the_subjects_config_and_mode():
    env = Env()
    env.register("s", V1)
    env.registry.put_config("s", {"compatibility": "NONE"})
    env.registry.put_mode("s", {"mode": "READWRITE"})
    env.registry.delete_version("s", "1")
    env.registry.delete_version("s", "1", permanent=True)
    assert error_code(env.registry.get_config, "s") == (404, 40408)
    assert error_code(env.registry.get_mode, "s") == (404, 40409)
    assert env.records()[-2:] == [({"keytype": "MODE", "subject": "s", "magic": 0}, None),
                                  ({"keytype": "CONFIG", "subject": "s", "magic": 0}, None)]
