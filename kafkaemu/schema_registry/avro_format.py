"""Avro schemas through Apache ``avro``: its parser, its JSON form as the canonical text, and its
reader/writer compatibility checker (the Avro specification's schema resolution, as Confluent's
AvroSchema.isBackwardCompatible uses Avro Java's SchemaCompatibility)."""
from __future__ import annotations

import json

import avro.errors
import avro.name
import avro.schema
from avro.compatibility import ReaderWriterCompatibilityChecker, SchemaCompatibilityType

from .errors import InvalidSchema

_COMPACT = (",", ":")


class AvroSchema:
    schema_type = "AVRO"

    def __init__(self, schema: avro.schema.Schema, referenced: dict) -> None:
        self.schema = schema
        self._referenced = referenced   # fullname -> schema of the references, printed by name only

    def _names(self) -> avro.name.Names:
        names = avro.name.Names(validate_names=True)
        names.names = dict(self._referenced)
        return names

    def canonical(self) -> str:
        return json.dumps(_java_order(self.schema.to_json(self._names())), separators=_COMPACT)

    def normalized(self) -> str:
        # Confluent's normalize for Avro: the canonical JSON with no whitespace, properties in a
        # fixed order (Avro's own output order), which canonical() already gives.
        return self.canonical()

    def validate_new(self) -> None:
        """What Confluent checks of a schema being registered beyond parsing (AvroSchema's
        ``validateAsNew``): every field default is a value of the field's type (Avro Java's
        Schema.Parser with validateDefaults)."""
        _check_defaults(self.schema, set())

    def read_errors(self, writer: "AvroSchema") -> list[str]:
        result = ReaderWriterCompatibilityChecker().get_compatibility(self.schema, writer.schema)
        if result.compatibility is SchemaCompatibilityType.compatible:
            return []
        found = []
        for kind, message, location in zip(result.incompatibilities, sorted(result.messages),
                                           sorted(result.locations)):
            found.append(f"{{errorType:'{kind.name.upper()}', description:'{message}', "
                         f"additionalInfo:'{location}'}}")
        return found or ["{errorType:'INCOMPATIBLE', description:'reader cannot read data of the writer'}"]


_INT = (-2**31, 2**31 - 1)
_LONG = (-2**63, 2**63 - 1)


def _valid_default(schema, value) -> bool:
    """Avro Java's Schema.isValidDefault: a union's default is a value of its first branch."""
    kind = schema.type
    if kind in ("string", "bytes", "enum", "fixed"):
        return isinstance(value, str)
    if kind in ("int", "long"):
        low, high = _INT if kind == "int" else _LONG
        return isinstance(value, int) and not isinstance(value, bool) and low <= value <= high
    if kind in ("float", "double"):
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "null":
        return value is None
    if kind == "array":
        return isinstance(value, list) and all(_valid_default(schema.items, v) for v in value)
    if kind == "map":
        return isinstance(value, dict) and all(_valid_default(schema.values, v) for v in value.values())
    if kind == "union":
        return bool(schema.schemas) and _valid_default(schema.schemas[0], value)
    if kind in ("record", "error"):
        return isinstance(value, dict) and all(
            _valid_default(f.type, value[f.name]) if f.name in value else f.has_default for f in schema.fields)
    return True


def _check_defaults(schema, seen: set) -> None:
    if id(schema) in seen:
        return
    seen.add(id(schema))
    kind = schema.type
    if kind in ("record", "error"):
        for f in schema.fields:
            if f.has_default and not _valid_default(f.type, f.default):
                raise InvalidSchema(f"Invalid schema: Invalid default for field {f.name}: {json.dumps(f.default)} "
                                    f"not a {json.dumps(f.type.to_json())}")
            _check_defaults(f.type, seen)
    elif kind == "array":
        _check_defaults(schema.items, seen)
    elif kind == "map":
        _check_defaults(schema.values, seen)
    elif kind == "union":
        for branch in schema.schemas:
            _check_defaults(branch, seen)


# Avro Java's Schema.toString() order, so the text served is the one Confluent serves.
_SCHEMA_ORDER = ("type", "name", "namespace", "doc", "fields", "symbols", "items", "values", "size", "default")
_FIELD_ORDER = ("name", "type", "doc", "default", "order", "aliases")


def _ordered(obj: dict, order: tuple) -> dict:
    out = {k: obj[k] for k in order if k in obj}
    out.update((k, v) for k, v in obj.items() if k not in out)
    return out


def _java_order(node, field: bool = False, namespace: str | None = None):
    """Avro Java's layout: keys in its order, and a nested named type's namespace left out when it
    is the enclosing one (Java writes it only where it changes)."""
    if isinstance(node, list):
        return [_java_order(n, namespace=namespace) for n in node]
    if not isinstance(node, dict):
        return node
    out = _ordered(node, _FIELD_ORDER if field else _SCHEMA_ORDER)
    if not field and "name" in out and out.get("type") in ("record", "error", "enum", "fixed"):
        if namespace is not None and out.get("namespace") == namespace:
            del out["namespace"]
        namespace = node.get("namespace", namespace)
    for key in ("type", "items", "values"):
        if key in out:
            out[key] = _java_order(out[key], namespace=namespace)
    if isinstance(out.get("fields"), list) and not field:
        out["fields"] = [_java_order(f, field=True, namespace=namespace) for f in out["fields"]]
    return out


def parse(text: str, references: list) -> AvroSchema:
    names = avro.name.Names(validate_names=True)
    try:
        for _name, ref_text in references:
            avro.schema.make_avsc_object(json.loads(ref_text), names, validate_names=True)
        referenced = dict(names.names)
        data = json.loads(text)
        schema = avro.schema.make_avsc_object(data, names, validate_names=True)
    except (ValueError, TypeError, KeyError, AttributeError, avro.errors.AvroException) as exc:
        raise InvalidSchema(f"Invalid schema: {exc}") from exc
    return AvroSchema(schema, referenced)
