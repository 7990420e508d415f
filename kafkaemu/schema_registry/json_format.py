"""JSON Schema through ``jsonschema``: the text must be a schema its draft's metaschema accepts (the
draft named by ``$schema``, else draft 7 as Confluent's default); the canonical text is the JSON
re-serialized without whitespace in the order sent (Confluent's JsonSchema.canonicalString);
compatibility is Confluent's difference rules (json_diff), with ``$ref`` resolved inside the
document and into the referenced schemas (by reference name or by their ``$id``)."""
from __future__ import annotations

import json

import jsonschema
import jsonschema.exceptions
import jsonschema.validators

from . import json_diff
from .errors import InvalidSchema

_COMPACT = (",", ":")


def _pointer(document, fragment: str):
    node = document
    for part in [p for p in fragment.lstrip("/").split("/") if p]:
        part = part.replace("~1", "/").replace("~0", "~")
        node = node[int(part)] if isinstance(node, list) else node[part]
    return node


class JsonSchema:
    schema_type = "JSON"

    def __init__(self, document, referenced: dict) -> None:
        self.document = document
        self.referenced = referenced   # reference name or $id -> document

    def canonical(self) -> str:
        return json.dumps(self.document, separators=_COMPACT)

    def normalized(self) -> str:
        return json.dumps(self.document, separators=_COMPACT, sort_keys=True)

    def _resolver(self, root):
        def resolve(schema):
            seen = 0
            current_root = root
            while isinstance(schema, dict) and isinstance(schema.get("$ref"), str) and seen < 64:
                seen += 1
                target, _, fragment = schema["$ref"].partition("#")
                if target:
                    current_root = self.referenced.get(target) or next(
                        (doc for name, doc in self.referenced.items() if name.endswith("/" + target)), None)
                    if current_root is None:
                        return schema   # unresolved: compared as written
                try:
                    schema = _pointer(current_root, fragment)
                except (KeyError, IndexError, ValueError, TypeError):
                    return schema
            return schema
        return resolve

    def read_errors(self, writer: "JsonSchema") -> list[str]:
        # one document resolves $refs inside both schemas: each schema's own refs point into itself
        found = json_diff.incompatible(writer.document, self.document, _two_roots(writer, self))
        return [f"{{errorType:'{kind}', description:'The new schema has a change of type {kind} at "
                f"path '{path}', which is incompatible'}}" for kind, path in found]


def _two_roots(old: JsonSchema, new: JsonSchema):
    old_resolve, new_resolve = old._resolver(old.document), new._resolver(new.document)

    def resolve(schema):
        resolved = new_resolve(schema)
        if resolved is schema and isinstance(schema, dict) and "$ref" in schema:
            return old_resolve(schema)
        return resolved
    return resolve


def parse(text: str, references: list) -> JsonSchema:
    referenced = {}
    try:
        for name, ref_text in references:
            doc = json.loads(ref_text)
            referenced[name] = doc
            if isinstance(doc, dict) and isinstance(doc.get("$id"), str):
                referenced[doc["$id"]] = doc
        document = json.loads(text)
        if not isinstance(document, (dict, bool)):
            raise InvalidSchema("Invalid schema: a JSON schema is an object or a boolean")
        validator = jsonschema.validators.validator_for(document, default=jsonschema.Draft7Validator)
        validator.check_schema(document)
    except jsonschema.exceptions.SchemaError as exc:
        raise InvalidSchema(f"Invalid schema: {exc.message}") from exc
    except ValueError as exc:
        raise InvalidSchema(f"Invalid schema: {exc}") from exc
    return JsonSchema(document, referenced)
