"""The registry's schema work as pure functions of schema texts: parsing a schema with its resolved
references, its canonical and normalized forms, Protobuf's serialized descriptor and the
compatibility check. An operation's steps (registry.py) yield these as jobs; the served registry
runs them in its worker process (worker.py), the synchronous methods here and now. Arguments and
results are plain data (texts, lists), so they cross to the worker as they are.

A source is (schema type, text, resolved references: [(name, text)], dependencies first)."""
from __future__ import annotations

from collections import OrderedDict

from . import errors as E
from .compatibility import errors as compatibility_errors
from .json_diff import BudgetExceeded
from .schema_types import InvalidSchema, parse

PARSED_CACHE = 1000   # parsed schemas kept, in each process (a transitive check parses every live version)
_parsed: OrderedDict[tuple, object] = OrderedDict()


def parsed(source: tuple):
    """The parsed schema of a source (kept for the next job); 42201 when it is not one."""
    schema_type, text, resolved = source
    key = (schema_type, text, tuple(tuple(r) for r in resolved))
    found = _parsed.get(key)
    if found is not None:
        _parsed.move_to_end(key)
        return found
    try:
        found = parse(schema_type, text, [tuple(r) for r in resolved])
    except InvalidSchema as exc:
        raise E.invalid_schema(str(exc)) from None
    except RecursionError:
        raise E.invalid_schema("Invalid schema: nested too deeply") from None
    _parsed[key] = found
    if len(_parsed) > PARSED_CACHE:
        _parsed.popitem(last=False)
    return found


def new_forms(source: tuple, validate: bool) -> tuple[str, str]:
    """The canonical and normalized texts of a schema being registered or looked up, after
    Confluent's validateAsNew checks when ``validate``."""
    schema = parsed(source)
    if validate:
        try:
            getattr(schema, "validate_new", lambda: None)()
        except InvalidSchema as exc:
            raise E.invalid_schema(str(exc)) from None
    return schema.canonical(), schema.normalized()


def serialized(source: tuple) -> str:
    """A Protobuf schema's descriptor, base64 (``format=serialized``)."""
    return parsed(source).serialized()


def problems(level: str, source: tuple, previous: list) -> list[str]:
    """Why the schema may not follow the previous versions ((version, source)s, oldest first) at
    ``level``; empty when it may. A check past its work budget answers as Confluent's request
    timeout does (504)."""
    schema = parsed(source)
    try:
        return compatibility_errors(level, schema, [(version, parsed(src)) for version, src in previous])
    except BudgetExceeded as exc:
        raise E.request_timed_out(str(exc)) from None
    except RecursionError:
        raise E.invalid_schema("Invalid schema: nested too deeply") from None
