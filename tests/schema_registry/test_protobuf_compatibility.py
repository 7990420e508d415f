"""Protobuf compatibility as Confluent's protobuf diff classifies changes: fields and messages may
be added, fields removed or renamed (the wire has numbers, not names); a field's wire kind may not
change (int32 and string, int32 and sint32), a message type may not be swapped, a message not
removed, a package not changed."""
from __future__ import annotations

import base64

import pytest

from kafkaemu.schema_registry.protobuf_format import parse

from .helpers import LEVELS, Env, allowed_at, error_code

BASE = 'syntax = "proto3";\npackage p;\nmessage M {\n  string a = 1;\n  int32 b = 2;\n}\nmessage N {\n  int32 x = 1;\n}\n'


def edit(old: str, new: str) -> str:
    assert old in BASE
    return BASE.replace(old, new)


# (new schema, BACKWARD ok, FORWARD ok). FORWARD is the same comparison the other way round, so
# the rules that are not symmetric (a message added is fine, one removed is not) differ.
CHANGES = [
    (edit("int32 b = 2;", "int32 b = 2;\n  string c = 3;"), True, True),          # FIELD_ADDED
    (edit("  int32 b = 2;\n", ""), True, True),                                   # FIELD_REMOVED
    (edit("int32 b = 2;", "int32 renamed = 2;"), True, True),                     # FIELD_NAME_CHANGED
    (edit("int32 b = 2;", "int64 b = 2;"), True, True),                           # both GENERAL_NUMBER
    (edit("int32 b = 2;", "string b = 2;"), False, False),                         # FIELD_SCALAR_KIND_CHANGED
    (edit("int32 b = 2;", "sint32 b = 2;"), False, False),                         # GENERAL vs SIGNED number
    (edit("int32 b = 2;", "repeated int32 b = 2;"), False, False),                 # FIELD_NUMERIC_LABEL_CHANGED
    (edit("string a = 1;", "repeated string a = 1;"), True, True),                # FIELD_STRING_OR_BYTES_LABEL_CHANGED
    (edit("int32 b = 2;", "N b = 2;"), False, False),                              # FIELD_KIND_CHANGED
    (edit("message N {\n  int32 x = 1;\n}\n", ""), False, True),                  # MESSAGE_REMOVED
    (BASE + "message O {\n  bool y = 1;\n}\n", True, False),                      # MESSAGE_ADDED
    (edit("package p;", "package q;"), False, False),                              # PACKAGE_CHANGED
    (edit("string a = 1;\n  int32 b = 2;", "oneof o {\n    string a = 1;\n    int32 b = 2;\n  }"), False, True),
    (BASE, True, True),
]


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("new,backward,forward", CHANGES)
def test_changes(level, new, backward, forward):
    env = Env()
    env.registry.put_config("s", {"compatibility": level})
    env.register("s", BASE, "PROTOBUF")
    allowed = allowed_at(level, backward, forward)
    assert (not env.registry.compatibility("s", None, {"schema": new, "schemaType": "PROTOBUF"})) == allowed
    if not allowed:
        assert error_code(env.register, "s", new, "PROTOBUF") == (409, 409)


def test_transitive_checks_every_version():
    v1 = BASE
    v2 = edit("  int32 b = 2;\n", "")                 # b removed: fine
    v3 = edit("int32 b = 2;", "string b = 2;")         # b back, as a string: fine after v2, not after v1
    for level, ok in (("BACKWARD", True), ("BACKWARD_TRANSITIVE", False)):
        env = Env()
        env.registry.put_config("s", {"compatibility": level})
        env.register("s", v1, "PROTOBUF")
        env.register("s", v2, "PROTOBUF")
        if ok:
            assert env.register("s", v3, "PROTOBUF") == 3
        else:
            assert error_code(env.register, "s", v3, "PROTOBUF") == (409, 409)


def test_text_and_descriptor_forms_are_one_schema():
    env = Env()
    first = env.register("s", BASE, "PROTOBUF")
    serialized = parse(BASE, []).serialized()
    base64.b64decode(serialized)
    assert env.register("t", serialized, "PROTOBUF") == first
    assert env.registry.get_version("t", "1").schema == BASE.replace("package p;\n", "package p;\n\n")
    sv = env.registry.get_version("s", "1")
    assert env.registry.formatted(sv, "serialized") == serialized


def test_invalid_protobuf():
    env = Env()
    for bad in ("message {", 'syntax = "proto3";\nmessage M { Missing m = 1; }',
                'syntax = "proto3";\nimport "nowhere.proto";\nmessage M { int32 a = 1; }',
                'syntax = "proto3";\nmessage M { int32 a = 0; }'):
        assert error_code(env.register, "s", bad, "PROTOBUF") == (422, 42201), bad


def test_standard_options_are_kept_in_the_canonical_text():
    text = ('syntax = "proto3";\npackage p;\n\noption java_package = "com.acme";\noption java_multiple_files = true;\n\n'
            'message M {\n  option deprecated = true;\n  int32 a = 1 [json_name = "AA", deprecated = true];\n'
            '  repeated int32 b = 2 [packed = false];\n}\nenum E {\n  option allow_alias = true;\n  A = 0;\n'
            '  B = 0 [deprecated = true];\n}\n')
    parsed = parse(text, [])
    assert parsed.canonical() == text
    assert parse(parsed.serialized(), []).canonical() == text
