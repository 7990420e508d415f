"""What the registry knows, rebuilt from the ``_schemas`` records alone (Confluent's lookup cache):
subjects and their versions, schemas by id, configs and modes. Pure data: parsing and
compatibility live elsewhere; the registry stores schemas already in canonical form."""
from __future__ import annotations

import json
from dataclasses import dataclass, field


@dataclass
class SchemaVersion:
    subject: str
    version: int
    id: int
    schema: str
    schema_type: str = "AVRO"
    references: list = field(default_factory=list)
    metadata: dict | None = None
    rule_set: dict | None = None
    deleted: bool = False

    @classmethod
    def from_value(cls, val: dict) -> "SchemaVersion":
        return cls(str(val["subject"]), int(val["version"]), int(val["id"]), str(val.get("schema", "")),
                   str(val.get("schemaType") or "AVRO"), list(val.get("references") or []),
                   val.get("metadata"), val.get("ruleSet"), bool(val.get("deleted", False)))

    def value(self) -> dict:
        """Confluent's SchemaValue (``schemaType`` left out for Avro, as Confluent does)."""
        return {"subject": self.subject, "version": self.version, "id": self.id,
                "schemaType": None if self.schema_type == "AVRO" else self.schema_type,
                "references": self.references, "metadata": self.metadata, "ruleSet": self.rule_set,
                "schema": self.schema, "deleted": self.deleted}

    def content_key(self) -> tuple:
        return content_key(self.schema_type, self.schema, self.references, self.metadata, self.rule_set)

    def answer(self, text: str | None = None) -> dict:
        """As GET /subjects/{s}/versions/{v} answers (``text``: the schema as formatted, else as stored)."""
        return {"subject": self.subject, "version": self.version, "id": self.id, **self.schema_fields(text)}

    def schema_fields(self, text: str | None = None) -> dict:
        """The schema's part of an answer, as GET /schemas/ids/{id}: its type (unless AVRO), references,
        metadata, rule set and text."""
        out: dict = {}
        if self.schema_type != "AVRO":
            out["schemaType"] = self.schema_type
        if self.references:
            out["references"] = self.references
        if self.metadata:
            out["metadata"] = self.metadata
        if self.rule_set:
            out["ruleSet"] = self.rule_set
        out["schema"] = self.schema if text is None else text
        return out


def content_key(schema_type: str, schema: str, references, metadata, rule_set) -> tuple:
    """What makes two registrations the same schema (and so the same id): Confluent's MD5 covers
    the canonical text, the references, the metadata and the rule set."""
    def dump(x):
        return json.dumps(x, sort_keys=True, separators=(",", ":")) if x else ""
    return schema_type, schema, dump(references), dump(metadata), dump(rule_set)


class RegistryState:
    def __init__(self) -> None:
        self.subjects: dict[str, dict[int, SchemaVersion]] = {}
        self.ids: dict[int, set[tuple[str, int]]] = {}   # id -> the (subject, version)s holding it
        self.by_content: dict[tuple, int] = {}
        self.configs: dict[str | None, dict] = {}
        self.modes: dict[str | None, str] = {}
        self.max_id = 0

    # -- applying records --------------------------------------------------------------------
    def apply(self, key: dict, val: dict | None) -> None:
        keytype = key.get("keytype")
        subject = key.get("subject")
        if keytype == "SCHEMA":
            self._apply_schema(str(subject), int(key["version"]), val)
        elif keytype == "CONFIG":
            if val is None:
                self.configs.pop(subject, None)
            else:
                self.configs[subject] = {k: v for k, v in val.items() if k != "subject"}
        elif keytype == "MODE":
            if val is None:
                self.modes.pop(subject, None)
            elif "mode" in val:
                self.modes[subject] = str(val["mode"])
        elif keytype == "DELETE_SUBJECT" and val is not None:
            upto = int(val.get("version", 0))
            for sv in self.subjects.get(str(subject), {}).values():
                if sv.version <= upto:
                    sv.deleted = True
        # NOOP, CONTEXT and the keys of features not emulated are not state

    def _apply_schema(self, subject: str, version: int, val: dict | None) -> None:
        versions = self.subjects.setdefault(subject, {})
        old = versions.pop(version, None)
        if old is not None:
            holders = self.ids.get(old.id, set())
            holders.discard((subject, version))
            if not holders:
                self.ids.pop(old.id, None)
                if self.by_content.get(old.content_key()) == old.id:
                    del self.by_content[old.content_key()]
        if val is None:
            if not versions:
                del self.subjects[subject]
            return
        sv = SchemaVersion.from_value(val)
        versions[version] = sv
        self.ids.setdefault(sv.id, set()).add((subject, version))
        self.by_content.setdefault(sv.content_key(), sv.id)
        self.max_id = max(self.max_id, sv.id)

    # -- reading -----------------------------------------------------------------------------
    def versions(self, subject: str, deleted: bool = False) -> list[SchemaVersion]:
        """The subject's versions, oldest first (soft-deleted ones only with ``deleted``)."""
        found = self.subjects.get(subject, {})
        return [found[v] for v in sorted(found) if deleted or not found[v].deleted]

    def subject_names(self, deleted: bool = False) -> list[str]:
        return sorted(s for s in self.subjects if self.versions(s, deleted))

    def by_id(self, schema_id: int) -> SchemaVersion | None:
        """A version holding the id (the lowest subject and version: they all hold the same schema)."""
        holders = self.ids.get(schema_id)
        if not holders:
            return None
        subject, version = min(holders)
        return self.subjects[subject][version]

    def referenced_by(self, subject: str, version: int, deleted: bool = False) -> list[SchemaVersion]:
        found = []
        for versions in self.subjects.values():
            for sv in versions.values():
                if (deleted or not sv.deleted) and any(
                        r.get("subject") == subject and r.get("version") == version for r in sv.references):
                    found.append(sv)
        return sorted(found, key=lambda sv: (sv.id, sv.subject, sv.version))
