"""A field's default: what a version without the field decodes to and what encoding leaves out
(tagged fields at their default), worked out from the spec text once for both codecs. (Nothing here
imports ``construct``: the generated codecs the server runs use these without it.)"""
from __future__ import annotations

from .spec import FieldSpec

ZERO_UUID = bytes(16)


def _prim_default(typ: str, raw: str | None, nullable: bool):
    if raw == "null":
        return None
    if typ in ("int8", "int16", "int32", "int64", "uint16", "uint32"):
        return int(raw, 0) if raw is not None else 0
    if typ == "float64":
        return float(raw) if raw is not None else 0.0
    if typ == "bool":
        return raw == "true"
    if typ == "string":
        if raw is None:
            return ""
        return "" if raw == '""' else raw
    if typ == "uuid":
        return ZERO_UUID
    if typ == "records":
        return None
    if typ == "bytes":
        return b""
    raise ValueError(f"no default for {typ}")


def field_default(f: FieldSpec, version: int):
    if f.is_array:
        return None if f.default == "null" else []
    if f.is_struct:
        if f.default == "null":
            return None
        return {c.name: field_default(c, version) for c in f.fields if version in c.versions}
    return _prim_default(f.type, f.default, version in f.nullable)


def shape_default(f: FieldSpec):
    """The default of a field in the one shape all versions share (every child included)."""
    if f.is_array:
        return None if f.default == "null" else []
    if f.is_struct:
        if f.default == "null":
            return None
        return {c.name: shape_default(c) for c in f.fields}
    return _prim_default(f.type, f.default, False)


def is_default(value, default) -> bool:
    """True when ``value`` equals a field's default; a struct only compares the fields its
    version has, so a struct given in the newest shape still counts as default."""
    if isinstance(default, dict):
        if not isinstance(value, dict):
            return value is None and default is None
        return all(is_default(value.get(k, d), d) for k, d in default.items())
    return value == default
