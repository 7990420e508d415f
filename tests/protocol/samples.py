"""Sample values for every message spec, and the one-shape normalisation of decoded messages.

Kept independent of ``kafkaemu.protocol.codegen`` (defaults are worked out again here from the
spec text) so the round-trip tests do not just compare the codec with itself.
"""
from __future__ import annotations

import random

from kafkaemu.protocol.catalog import catalog
from kafkaemu.protocol.spec import FieldSpec, MessageSpec

INT_RANGES = {
    "int8": (-(2**7), 2**7 - 1), "int16": (-(2**15), 2**15 - 1),
    "int32": (-(2**31), 2**31 - 1), "int64": (-(2**63), 2**63 - 1),
    "uint16": (0, 2**16 - 1), "uint32": (0, 2**32 - 1),
}
TEXTS = ["grüße-✓", "topic.a_b-1", "消费者组", "x" * 40, "C1"]


def all_messages() -> list[tuple[str, MessageSpec]]:
    """(kind, spec) of every request, response and data/header spec in the catalogue."""
    cat = catalog()
    out = [("request", s) for s in cat.requests.values()]
    out += [("response", s) for s in cat.responses.values()]
    out += [("data", s) for s in cat.others.values()]
    return out


def all_cases() -> list[tuple[str, str, int]]:
    """(kind, message name, version) of every codec."""
    return [(kind, s.name, v) for kind, s in all_messages() for v in s.version_list]


def codec_for(kind: str, name: str, version: int):
    cat = catalog()
    if kind == "data":
        return cat.data(name, version)
    table = cat.requests if kind == "request" else cat.responses
    spec = next(s for s in table.values() if s.name == name)
    return cat.request(spec.api_key, version) if kind == "request" else cat.response(spec.api_key, version)


def spec_for(kind: str, name: str) -> MessageSpec:
    return next(s for k, s in all_messages() if k == kind and s.name == name)


def prim_default(f: FieldSpec):
    raw = f.default
    if raw == "null":
        return None
    t = f.element_type
    if t in INT_RANGES:
        return int(raw, 0) if raw else 0
    if t == "float64":
        return float(raw) if raw else 0.0
    if t == "bool":
        return raw == "true"
    if t == "string":
        return "" if raw in (None, '""') else raw
    if t == "uuid":
        return bytes(16)
    if t == "records":
        return None
    if t == "bytes":
        return b""
    raise AssertionError(t)


def default_of(f: FieldSpec):
    """A field's default in the one shape every version decodes to."""
    if f.is_array:
        return None if f.default == "null" else []
    if f.is_struct:
        return None if f.default == "null" else {c.name: default_of(c) for c in f.fields}
    return prim_default(f)


def _prim_sample(f: FieldSpec, rng: random.Random):
    t, default = f.element_type, prim_default(f) if not f.is_array else None
    if t in INT_RANGES:
        lo, hi = INT_RANGES[t]
        while True:
            v = rng.choice([lo, hi, rng.randint(lo, hi), rng.randint(max(lo, -100), min(hi, 100))])
            if v != default and v != 0:
                return v
    if t == "float64":
        return rng.choice([1.5, -2.25, 1e300])
    if t == "bool":
        return not default if not f.is_array else True
    if t == "string":
        v = rng.choice(TEXTS)
        return v if v != default else v + "!"
    if t == "uuid":
        return bytes(rng.randrange(1, 256) for _ in range(16))
    if t in ("bytes", "records"):
        return bytes(rng.randrange(256) for _ in range(rng.randint(1, 300)))
    raise AssertionError(t)


def sample(fields: list[FieldSpec], version: int, rng: random.Random, *, nulls: bool = False,
           n: int = 2) -> dict:
    """Values for the fields present at ``version``: all non-default (``nulls``: None where
    nullable), arrays with ``n`` elements."""
    out = {}
    for f in fields:
        if version not in f.versions:
            continue
        if nulls and version in f.nullable:
            out[f.name] = None
        elif f.is_array:
            if f.is_struct:
                out[f.name] = [sample(f.fields, version, rng, nulls=nulls, n=n) for _ in range(n)]
            else:
                out[f.name] = [_prim_sample(f, rng) for _ in range(n + 1)]
        elif f.is_struct:
            out[f.name] = sample(f.fields, version, rng, nulls=nulls, n=n)
        else:
            out[f.name] = _prim_sample(f, rng)
    return out


def normalise(fields: list[FieldSpec], obj: dict) -> dict:
    """``obj`` as decoding should return it: absent fields at their defaults, structs as dicts."""
    out = {}
    for f in fields:
        value = obj.get(f.name, default_of(f)) if f.name in obj else default_of(f)
        if f.is_struct and value is not None:
            if f.is_array:
                value = [normalise(f.fields, item) for item in value]
            else:
                value = normalise(f.fields, value)
        out[f.name] = value
    return out


def plain(obj):
    """Decoded ``Container``s and lists as plain dicts and lists, for comparison."""
    if isinstance(obj, dict):
        return {k: plain(v) for k, v in obj.items() if not str(k).startswith("_")}
    if isinstance(obj, list):
        return [plain(v) for v in obj]
    return obj


def with_tagged_at_default(fields: list[FieldSpec], version: int, obj: dict) -> dict:
    """A copy of ``obj`` whose tagged fields (at every depth) hold their defaults."""
    out = dict(obj)
    for f in fields:
        if f.name not in out or version not in f.versions:
            continue
        if version in f.tagged:
            out[f.name] = default_of(f)
        elif f.is_struct and out[f.name] is not None:
            if f.is_array:
                out[f.name] = [with_tagged_at_default(f.fields, version, x) for x in out[f.name]]
            else:
                out[f.name] = with_tagged_at_default(f.fields, version, out[f.name])
    return out


def without_tagged(fields: list[FieldSpec], version: int, obj: dict) -> dict:
    """A copy of ``obj`` with every tagged field (at every depth) left out."""
    out = {}
    for f in fields:
        if f.name not in obj or version in f.tagged:
            continue
        value = obj[f.name]
        if f.is_struct and value is not None:
            if f.is_array:
                value = [without_tagged(f.fields, version, x) for x in value]
            else:
                value = without_tagged(f.fields, version, value)
        out[f.name] = value
    return out


def has_tagged(fields: list[FieldSpec], version: int) -> bool:
    return any(version in f.versions and (version in f.tagged or has_tagged(f.fields, version))
               for f in fields)
