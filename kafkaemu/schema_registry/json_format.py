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
        self._owner_map: dict[int, object] | None = None

    def canonical(self) -> str:
        return json.dumps(self.document, separators=_COMPACT)

    def normalized(self) -> str:
        return json.dumps(self.document, separators=_COMPACT, sort_keys=True)

    def _owners(self) -> dict[int, object]:
        """id(node) -> the document holding it, for every object and array of this schema's
        document and of the documents it references."""
        if self._owner_map is None:
            owners: dict[int, object] = {}
            for root in [self.document, *self.referenced.values()]:
                if id(root) in owners:
                    continue
                stack = [root]
                while stack:
                    node = stack.pop()
                    if isinstance(node, (dict, list)) and id(node) not in owners:
                        owners[id(node)] = root
                        stack.extend(node.values() if isinstance(node, dict) else node)
            self._owner_map = owners
        return self._owner_map

    def resolve(self, schema):
        """``schema`` with its ``$ref`` followed, within the document that holds it (a fragment)
        or into a referenced schema (by reference name or ``$id``); as written when unresolved."""
        if not (isinstance(schema, dict) and isinstance(schema.get("$ref"), str)):
            return schema
        root = self._owners().get(id(schema), self.document)
        for _ in range(64):
            target, _, fragment = schema["$ref"].partition("#")
            if target:
                root = self.referenced.get(target) or next(
                    (doc for name, doc in self.referenced.items() if name.endswith("/" + target)), None)
                if root is None:
                    return schema
            try:
                found = _pointer(root, fragment)
            except (KeyError, IndexError, ValueError, TypeError):
                return schema
            if not (isinstance(found, dict) and isinstance(found.get("$ref"), str)):
                return found
            schema = found
        return schema

    def read_errors(self, writer: "JsonSchema") -> list[str]:
        # each schema's $refs are followed in its own documents (the writer's in the writer's)
        found = json_diff.incompatible(writer.document, self.document, writer.resolve, self.resolve)
        return [f"{{errorType:'{kind}', description:'The new schema has a change of type {kind} at "
                f"path '{path}', which is incompatible'}}" for kind, path in found]


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
