"""Avro compatibility at Confluent's seven levels. Expected answers follow the Avro specification's
schema resolution (a reader field missing from the writer needs a default; int promotes to long,
not back; a union reader takes a writer branch it has) and Confluent's level definitions (BACKWARD:
the new schema reads the old data; FORWARD: the old schema reads the new data; FULL: both;
_TRANSITIVE: against every live version, not the latest only)."""
from __future__ import annotations

import pytest

from .helpers import LEVELS, Env, allowed_at, error_code, record

A = record("R", ("a", "int"))
A_B_DEFAULT = record("R", ("a", "int"), ("b", "string", "x"))
A_B = record("R", ("a", "int"), ("b", "string"))
A_LONG = record("R", ("a", "long"))
A_STRING = record("R", ("a", "string"))
A_NULLABLE = record("R", ("a", ["null", "int"], None))
OTHER_NAME = record("S", ("a", "int"))

# (old, new, BACKWARD ok, FORWARD ok): single steps
PAIRS = [
    (A, A_B_DEFAULT, True, True),        # a field added with a default
    (A, A_B, False, True),               # added without default: the new reader lacks it in old data
    (A_B, A, True, False),               # removed without default: the old reader needs it
    (A_B_DEFAULT, A, True, True),        # removed with a default
    (A, A_LONG, True, False),            # int promotes to long, long does not narrow to int
    (A, A_STRING, False, False),         # no promotion between int and string
    (A, A_NULLABLE, True, False),        # a union reader takes the writer's int branch
    (A, OTHER_NAME, False, False),       # a record of another name
    ('"int"', '"long"', True, False),
    ('"string"', '"bytes"', True, True),  # string and bytes read each other
    ('{"type": "enum", "name": "E", "symbols": ["A", "B"]}',
     '{"type": "enum", "name": "E", "symbols": ["A", "B", "C"]}', True, False),
]


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("old,new,backward,forward", PAIRS)
def test_one_step(level, old, new, backward, forward):
    env = Env()
    env.registry.put_config("s", {"compatibility": level})
    env.register("s", old)
    allowed = allowed_at(level, backward, forward)
    verdict = env.registry.compatibility("s", "latest", {"schema": new})
    assert (not verdict) == allowed, verdict
    if allowed:
        assert env.register("s", new) >= 1
        assert env.registry.versions("s") == [1, 2]
    else:
        assert error_code(env.register, "s", new) == (409, 409)
        assert env.registry.versions("s") == [1]


# Three versions where the latest step is fine and an older one is not: only _TRANSITIVE refuses.
TRANSITIVE = {
    # v3 reads v2 (b is there) but not v1 data (b missing, no default)
    "BACKWARD": [A, A_B_DEFAULT, A_B],
    # v2 reads v3 data (b has a default in v2) but v1 cannot (b missing, no default in v1)
    "FORWARD": [A_B, A_B_DEFAULT, A],
    "FULL": [A, A_B_DEFAULT, A_B],
}


@pytest.mark.parametrize("kind", list(TRANSITIVE))
def test_transitive_levels_check_every_live_version(kind):
    v1, v2, v3 = TRANSITIVE[kind]
    plain, transitive = Env(), Env()
    for env, level in ((plain, "NONE"), (transitive, "NONE")):
        env.register("s", v1)
        env.register("s", v2)
    plain.registry.put_config("s", {"compatibility": kind})
    transitive.registry.put_config("s", {"compatibility": kind + "_TRANSITIVE"})
    assert plain.register("s", v3) == 3
    assert error_code(transitive.register, "s", v3) == (409, 409)
    # a soft-deleted version no longer counts
    transitive.registry.delete_version("s", "1")
    assert transitive.register("s", v3) == 3


def test_verbose_messages_name_the_old_version_and_the_level():
    env = Env()
    env.register("s", A)
    messages = env.registry.compatibility("s", None, {"schema": A_B})
    assert any("READER_FIELD_MISSING_DEFAULT_VALUE" in m for m in messages)
    assert "{oldSchemaVersion: 1}" in messages and "{compatibility: 'BACKWARD'}" in messages
    assert env.registry.compatibility("nothing", None, {"schema": A_B}) == []
    assert env.registry.compatibility("nothing", "latest", {"schema": A_B}) == []
    assert error_code(env.registry.compatibility, "s", "7", {"schema": A_B}) == (404, 40402)


@pytest.mark.parametrize("sent,served", [
    ('{"type": "string"}', '"string"'),
    ('{"type":"array","items":{"type":"int"}}', '{"type":"array","items":"int"}'),
    # Avro Java's Schema.toString(): key order, nested namespaces only where they change
    ('{"namespace": "com.acme", "fields": [{"type": {"symbols": ["A"], "type": "enum", "name": "E"}, "name": "f"},'
     ' {"name": "g", "type": {"type": "fixed", "size": 2, "name": "other.F"}}], "name": "Ok", "type": "record"}',
     '{"type":"record","name":"Ok","namespace":"com.acme","fields":[{"name":"f","type":{"type":"enum","name":"E",'
     '"symbols":["A"]}},{"name":"g","type":{"type":"fixed","name":"F","namespace":"other","size":2}}]}'),
])
def test_canonical_text_is_avro_javas(sent, served):
    env = Env()
    env.register("s", sent)
    assert env.registry.get_version("s", "1").schema == served


def test_names_are_validated_as_avro_java_does():
    assert error_code(Env().register, "s", record("1bad", ("a", "int"))) == (422, 42201)


@pytest.mark.parametrize("field_type,default,ok", [
    ("int", "x", False), ("int", 1, True), ("int", 2**31, False), ("long", 2**31, True), ("string", 1, False),
    (["null", "string"], None, True), (["null", "string"], "x", False),   # a union's default: its first branch
    (["string", "null"], "x", True), ("boolean", 0, False), ({"type": "array", "items": "int"}, [1, "a"], False),
    ({"type": "map", "values": "long"}, {"a": 1}, True), ("bytes", "\u00ff", True), ("double", 1, True),
])
def test_field_defaults_are_validated_on_registration(field_type, default, ok):
    env = Env()
    schema = record("R", ("a", field_type, default))
    if ok:
        assert env.register("s", schema) == 1
    else:
        assert error_code(env.register, "s", schema) == (422, 42201)
