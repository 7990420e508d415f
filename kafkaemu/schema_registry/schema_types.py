"""The schema types the registry takes, each behind one small interface: ``parse(text, references)``
returns a parsed schema with ``canonical()`` (the text stored and served, so the same schema
registered twice is the same), ``normalized()`` (for ``normalize=true``) and
``read_errors(writer)`` (why a reader of this schema cannot read data written with ``writer``;
empty when it can). ``references`` are the referenced schemas already resolved, dependencies
first: a list of (name, schema text)."""
from __future__ import annotations

from typing import Callable, Protocol

from .errors import InvalidSchema


class ParsedSchema(Protocol):
    schema_type: str

    def canonical(self) -> str: ...

    def normalized(self) -> str: ...

    def read_errors(self, writer: "ParsedSchema") -> list[str]: ...


PARSERS: dict[str, Callable[[str, list], ParsedSchema]] = {}


def _load() -> None:
    from . import avro_format
    PARSERS["AVRO"] = avro_format.parse
    try:
        from . import json_format
        PARSERS["JSON"] = json_format.parse
    except ImportError:   # pragma: no cover - jsonschema is a dependency
        pass
    try:
        from . import protobuf_format
        PARSERS["PROTOBUF"] = protobuf_format.parse
    except ImportError:   # pragma: no cover - protobuf is a dependency
        pass


def schema_types() -> list[str]:
    if not PARSERS:
        _load()
    return sorted(PARSERS)


def parse(schema_type: str, text: str, references: list) -> ParsedSchema:
    if not PARSERS:
        _load()
    parser = PARSERS.get(schema_type)
    if parser is None:
        raise InvalidSchema(f"Invalid schema type {schema_type}")
    return parser(text, references)
