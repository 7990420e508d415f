"""The registry's operations, as Confluent's KafkaSchemaRegistry performs them, over the state the
``_schemas`` topic holds. Before each operation the state catches up with the topic (as Confluent
waits for its reader to reach the last offset), so a restored snapshot, a reset or a record a
client wrote are seen; each write goes to the topic first and is applied from there.

An operation that parses schemas or checks compatibility is written as steps (``*_steps``, a
generator): what reads or writes the state runs where the broker runs, and each piece of schema work
(parsing, a compatibility check: jobs.py, pure functions of schema texts) is yielded as a job.
``run_inline`` runs the jobs in place (the synchronous methods, tests); the HTTP server runs them in
its worker process (worker.py), one operation at a time, so two registrations never interleave and
ids stay unique without locks, and the broker's loop never waits for a schema."""
from __future__ import annotations

from functools import partial

from ..logging import get_logger
from . import errors as E
from . import jobs
from .compatibility import DEFAULT_LEVEL, LEVELS, checked_versions
from .records import SchemasTopic, config_key, delete_subject_key, mode_key, schema_key, value
from .schema_types import schema_types
from .state import RegistryState, SchemaVersion, content_key

log = get_logger("kafkaemu.schema_registry")

MODES = ("READWRITE", "READONLY", "READONLY_OVERRIDE", "IMPORT")
MAX_VERSION = 2**31 - 1
CONFIG_FIELDS = ("alias", "normalize", "validateFields", "validateRules", "compatibilityGroup",
                 "defaultMetadata", "overrideMetadata", "defaultRuleSet", "overrideRuleSet")


def run_inline(steps):
    """The result of an operation's steps, each job it yields run here and now."""
    try:
        job = next(steps)
        while True:
            job = steps.send(job())
    except StopIteration as done:
        return done.value
    finally:
        steps.close()


def parse_version(text) -> int | None:
    """A version of a path: a number in [1, 2^31-1], or ``latest`` / -1 (None: the latest)."""
    text = str(text)
    if text == "latest":
        return None
    try:
        version = int(text)
    except ValueError:
        raise E.invalid_version(text) from None
    if version == -1:
        return None
    if not 1 <= version <= MAX_VERSION:
        raise E.invalid_version(text)
    return version


class SchemaRegistry:
    def __init__(self, store, clock) -> None:
        self.topic = SchemasTopic(store, clock)
        self.state = RegistryState()
        self._plog = None
        self._offset = 0

    # -- the topic ---------------------------------------------------------------------------
    def sync(self) -> None:
        topic = self.topic.topic()
        plog = topic.partitions[0] if topic is not None and topic.partitions else None
        if plog is not self._plog or plog is None or plog.high_watermark < self._offset:
            self.state = RegistryState()   # a new topic (a reset, a restore, a deletion): read it all
            self._plog, self._offset = plog, 0
        if plog is None:
            return
        for offset, key, val in self.topic.read(plog, self._offset):
            try:
                self.state.apply(key, val)
            except (KeyError, ValueError, TypeError) as exc:
                log.warning("schemas_record_skipped", offset=offset, reason=str(exc)[:200])
        self._offset = max(self._offset, plog.high_watermark)

    def _write(self, records: list) -> None:
        self.topic.append(records)
        self.sync()

    # -- parsing -----------------------------------------------------------------------------
    def _resolve(self, references: list, seen: set | None = None) -> list:
        """The referenced schemas, dependencies first: [(name, text)]."""
        seen = set() if seen is None else seen
        resolved = []
        for ref in references:
            if not isinstance(ref, dict) or not isinstance(ref.get("subject"), str) or \
                    not isinstance(ref.get("name"), str) or not isinstance(ref.get("version"), int):
                raise E.invalid_schema(f"Invalid schema reference {ref}")
            sv = self._version(ref["subject"], ref["version"] if ref["version"] != -1 else None, deleted=True,
                               missing=lambda: E.invalid_schema(f"Invalid schema reference {ref}: not found"))
            if (sv.subject, sv.version) in seen:
                continue
            seen.add((sv.subject, sv.version))
            resolved += self._resolve(sv.references, seen)
            resolved.append((ref["name"], sv.schema))
        return resolved

    def _source(self, sv: SchemaVersion) -> tuple[str, str, list]:
        """What parsing a stored version needs, read from the state: (type, text, resolved references)."""
        return sv.schema_type, sv.schema, self._resolve(sv.references)

    def formatted(self, sv: SchemaVersion, fmt: str | None) -> str:
        return run_inline(self.formatted_steps(sv, fmt))

    def formatted_steps(self, sv: SchemaVersion, fmt: str | None):
        """The version's schema text in the ``format`` a client asks for (Protobuf's
        ``serialized``: the base64 descriptor); the stored text otherwise."""
        if sv.schema_type == "PROTOBUF" and fmt == "serialized":
            return (yield partial(jobs.serialized, self._source(sv)))
        return sv.schema

    @staticmethod
    def _request(body) -> tuple[str, str, list, dict | None, dict | None]:
        if not isinstance(body, dict):
            raise E.unprocessable("Unrecognized request: a JSON object is expected")
        text = body.get("schema")
        schema_type = body.get("schemaType") or "AVRO"
        references = body.get("references") or []
        if not isinstance(text, str) or not text.strip():
            raise E.invalid_schema("Empty schema")
        if not isinstance(schema_type, str) or schema_type.upper() not in schema_types():
            raise E.invalid_schema(f"Invalid schema type {schema_type}")
        if not isinstance(references, list):
            raise E.unprocessable("references must be a list")
        metadata, rule_set = body.get("metadata"), body.get("ruleSet")
        for name, item in (("metadata", metadata), ("ruleSet", rule_set)):
            if item is not None and not isinstance(item, dict):
                raise E.unprocessable(f"{name} must be an object")
        return schema_type.upper(), text, references, metadata, rule_set

    # -- lookups ------------------------------------------------------------------------------
    def _version(self, subject: str, version: int | None, deleted: bool = False, missing=None) -> SchemaVersion:
        versions = self.state.versions(subject, deleted=True)
        if not versions:
            raise (missing or (lambda: E.subject_not_found(subject)))()
        live = [sv for sv in versions if not sv.deleted]
        if version is None:
            pool = versions if deleted else live
            if not pool:
                raise (missing or (lambda: E.subject_not_found(subject)))()
            return pool[-1]
        for sv in versions:
            if sv.version == version and (deleted or not sv.deleted):
                return sv
        if not live and not deleted:
            raise (missing or (lambda: E.subject_not_found(subject)))()
        raise (missing or (lambda: E.version_not_found(version)))()

    def get_version(self, subject: str, version: str, deleted: bool = False) -> SchemaVersion:
        self.sync()
        return self._version(subject, parse_version(version), deleted)

    def subjects(self, prefix: str = "", deleted: bool = False, deleted_only: bool = False) -> list[str]:
        self.sync()
        if deleted_only:
            names = [s for s in self.state.subject_names(True)
                     if any(sv.deleted for sv in self.state.versions(s, True))]
        else:
            names = self.state.subject_names(deleted)
        return [s for s in names if s.startswith(prefix or "")]

    def versions(self, subject: str, deleted: bool = False, deleted_only: bool = False) -> list[int]:
        self.sync()
        found = self.state.versions(subject, deleted=deleted or deleted_only)
        if deleted_only:
            found = [sv for sv in found if sv.deleted]
        if not found and not deleted_only:
            raise E.subject_not_found(subject)
        return [sv.version for sv in found]

    def schema_by_id(self, schema_id: int) -> SchemaVersion:
        self.sync()
        sv = self.state.by_id(schema_id)
        if sv is None:
            raise E.schema_not_found(schema_id)
        return sv

    def id_versions(self, schema_id: int, subject: str | None = None, deleted: bool = False) -> list[SchemaVersion]:
        self.sync()
        if self.state.by_id(schema_id) is None:
            raise E.schema_not_found(schema_id)
        found = [self.state.subjects[s][v] for s, v in sorted(self.state.ids[schema_id])]
        return [sv for sv in found if (deleted or not sv.deleted) and (subject is None or sv.subject == subject)]

    def schemas(self, prefix: str = "", deleted: bool = False, latest_only: bool = False) -> list[SchemaVersion]:
        self.sync()
        found = []
        for subject in self.state.subject_names(deleted):
            if subject.startswith(prefix or ""):
                versions = self.state.versions(subject, deleted)
                found += versions[-1:] if latest_only else versions
        return found

    def latest_with_metadata(self, subject: str, wanted: dict, deleted: bool = False) -> SchemaVersion:
        """The latest version whose metadata properties hold every wanted key and value."""
        self.sync()
        versions = self.state.versions(subject, deleted)
        if not versions:
            raise E.subject_not_found(subject)
        for sv in reversed(versions):
            properties = (sv.metadata or {}).get("properties") or {}
            if all(properties.get(k) == v for k, v in wanted.items()):
                return sv
        raise E.schema_not_found()

    def referenced_by(self, subject: str, version: str) -> list[int]:
        sv = self.get_version(subject, version)
        return sorted({r.id for r in self.state.referenced_by(sv.subject, sv.version)})

    def lookup(self, subject: str, body, normalize: bool = False, deleted: bool = False) -> SchemaVersion:
        return run_inline(self.lookup_steps(subject, body, normalize, deleted))

    def lookup_steps(self, subject: str, body, normalize: bool = False, deleted: bool = False):
        self.sync()
        schema_type, text, references, metadata, rule_set = self._request(body)
        if not self.state.versions(subject, deleted=deleted):
            raise E.subject_not_found(subject)
        canonical, normalized = yield partial(jobs.new_forms, (schema_type, text, self._resolve(references)), False)
        wanted = {canonical, normalized} if normalize else {canonical}
        self.sync()
        for sv in reversed(self.state.versions(subject, deleted=deleted)):
            if sv.schema_type == schema_type and sv.references == references and sv.schema in wanted:
                return sv
        raise E.schema_not_found()

    # -- registering --------------------------------------------------------------------------
    def config_in_scope(self, subject: str | None) -> dict:
        found = self.state.configs.get(subject) if subject is not None else None
        base = self.state.configs.get(None) or {}
        merged = {**base, **(found or {})}
        merged.setdefault("compatibilityLevel", DEFAULT_LEVEL)
        return merged

    def mode_in_scope(self, subject: str | None) -> str:
        if subject is not None and subject in self.state.modes:
            return self.state.modes[subject]
        return self.state.modes.get(None, "READWRITE")

    def register(self, subject: str, body, normalize: bool = False) -> dict:
        return run_inline(self.register_steps(subject, body, normalize))

    def register_steps(self, subject: str, body, normalize: bool = False):
        self.sync()
        schema_type, text, references, metadata, rule_set = self._request(body)
        mode = self.mode_in_scope(subject)
        if mode in ("READONLY", "READONLY_OVERRIDE"):
            raise E.not_permitted(f"Subject {subject} in context . is in read-only mode")
        wanted_id = body.get("id", -1)
        wanted_version = body.get("version", 0)
        if not isinstance(wanted_id, int) or not isinstance(wanted_version, int):
            raise E.unprocessable("id and version must be integers")
        if wanted_id >= 0 and mode != "IMPORT":
            raise E.not_permitted("Subject " + subject + " is not in import mode")
        source = (schema_type, text, self._resolve(references))
        # a new schema, not an import: Confluent's validateAsNew checks
        canonical, normalized = yield partial(jobs.new_forms, source, wanted_id < 0)
        self.sync()   # what changed while the schema was parsed
        config = self.config_in_scope(subject)
        text = normalized if normalize or config.get("normalize") else canonical
        live = self.state.versions(subject)
        key = content_key(schema_type, text, references, metadata, rule_set)
        if wanted_version <= 0:
            for sv in reversed(live):
                if sv.content_key() == key and (wanted_id < 0 or sv.id == wanted_id):
                    return {"id": sv.id}
        if mode != "IMPORT":
            level = config["compatibilityLevel"]
            previous = [(sv.version, self._source(sv)) for sv in checked_versions(level, live)]
            problems = yield partial(jobs.problems, level, source, previous)
            if problems:
                raise E.incompatible(subject, problems)
            self.sync()
        all_versions = self.state.versions(subject, deleted=True)
        schema_id = self.state.by_content.get(key, -1)
        if schema_id >= 0 and wanted_id >= 0 and schema_id != wanted_id:
            schema_id = -1
        new_version = max((sv.version for sv in all_versions), default=0) + 1
        if wanted_version > 0:
            if wanted_version != new_version and mode != "IMPORT":
                raise E.invalid_schema("Version is not one more than previous version")
            new_version = wanted_version
        if schema_id < 0:
            if wanted_id >= 0:
                holder = self.state.by_id(wanted_id)
                if holder is not None and holder.content_key() != key:
                    raise E.id_does_not_match(f"Overwrite new schema with id {wanted_id} is not permitted.")
                schema_id = wanted_id
            else:
                schema_id = self.state.max_id + 1
        sv = SchemaVersion(subject, new_version, schema_id, text, schema_type, references, metadata, rule_set)
        records = [(schema_key(subject, old.version), None) for old in all_versions
                   if old.deleted and old.id == schema_id and old.version < new_version
                   and not self.state.referenced_by(subject, old.version, deleted=True)]
        self._write(records + [(schema_key(subject, new_version), value(sv.value()))])
        self._note("register", subject=subject, version=new_version, id=schema_id, schema_type=schema_type)
        return {"id": schema_id}

    def compatibility(self, subject: str, version: str | None, body, normalize: bool = False) -> list[str]:
        return run_inline(self.compatibility_steps(subject, version, body, normalize))

    def compatibility_steps(self, subject: str, version: str | None, body, normalize: bool = False):
        """Why the schema could not be registered after the version (None: after the live
        versions, at the subject's level); empty when it could."""
        self.sync()
        schema_type, text, references, _, _ = self._request(body)
        source = (schema_type, text, self._resolve(references))
        level = self.config_in_scope(subject)["compatibilityLevel"]
        if version is None:
            previous = checked_versions(level, self.state.versions(subject))
        else:
            try:
                previous = [self._version(subject, parse_version(version))]
            except E.RegistryError as exc:
                if exc.error_code == 40401 and parse_version(version) is None:
                    previous = []   # nothing registered yet: anything is compatible with nothing
                else:
                    raise
        previous = [(sv.version, self._source(sv)) for sv in previous]
        return (yield partial(jobs.problems, level, source, previous))

    # -- deleting -----------------------------------------------------------------------------
    def _check_writable(self, subject: str) -> None:
        if self.mode_in_scope(subject) in ("READONLY", "READONLY_OVERRIDE"):
            raise E.not_permitted(f"Subject {subject} in context . is in read-only mode")

    def delete_subject(self, subject: str, permanent: bool = False) -> list[int]:
        self.sync()
        every = self.state.versions(subject, deleted=True)
        if not every:
            raise E.subject_not_found(subject)
        live = [sv for sv in every if not sv.deleted]
        if not permanent and not live:
            raise E.subject_soft_deleted(subject)
        self._check_writable(subject)
        doomed = every if permanent else live
        for sv in doomed:
            if {r.subject for r in self.state.referenced_by(subject, sv.version, deleted=permanent)} - {subject}:
                raise E.reference_exists(subject, sv.version)
            if permanent and not sv.deleted:
                raise E.subject_not_soft_deleted(subject)
        if permanent:
            records = [(schema_key(subject, sv.version), None) for sv in reversed(doomed)]
            if subject in self.state.modes:
                records.append((mode_key(subject), None))
            if subject in self.state.configs:
                records.append((config_key(subject), None))
        else:
            records = [(delete_subject_key(subject), value({"subject": subject, "version": doomed[-1].version}))]
        self._write(records)
        self._note("delete_subject", subject=subject, versions=[sv.version for sv in doomed], permanent=permanent)
        return [sv.version for sv in doomed]

    def delete_version(self, subject: str, version: str, permanent: bool = False) -> int:
        self.sync()
        number = parse_version(version)
        sv = self._version(subject, number, deleted=permanent or number is not None)
        if not permanent and sv.deleted:
            raise E.version_soft_deleted(subject, sv.version)
        self._check_writable(subject)
        if self.state.referenced_by(subject, sv.version, deleted=permanent):
            raise E.reference_exists(subject, sv.version)
        if permanent and not sv.deleted:
            raise E.version_not_soft_deleted(subject, sv.version)
        if permanent:
            records = [(schema_key(subject, sv.version), None)]
            if len(self.state.versions(subject, deleted=True)) == 1:   # the last one: its mode and config go too
                if subject in self.state.modes:
                    records.append((mode_key(subject), None))
                if subject in self.state.configs:
                    records.append((config_key(subject), None))
        else:
            gone = SchemaVersion(**{**sv.__dict__, "deleted": True})
            records = [(schema_key(subject, sv.version), value(gone.value()))]
        self._write(records)
        self._note("delete_version", subject=subject, version=sv.version, permanent=permanent)
        return sv.version

    # -- config and modes ---------------------------------------------------------------------
    def get_config(self, subject: str | None, default_to_global: bool = False) -> dict:
        self.sync()
        if subject is None or default_to_global:
            return self.config_in_scope(subject)
        found = self.state.configs.get(subject)
        if found is None:
            raise E.subject_compatibility_not_configured(subject)
        return dict(found)

    def put_config(self, subject: str | None, body) -> dict:
        self.sync()
        if not isinstance(body, dict):
            raise E.unprocessable("Unrecognized request: a JSON object is expected")
        level = body.get("compatibility", body.get("compatibilityLevel"))
        if level is not None and (not isinstance(level, str) or level.upper() not in LEVELS):
            raise E.invalid_compatibility_level()
        self._check_writable_config(subject)
        stored = dict(self.state.configs.get(subject) or {})
        if level is not None:
            stored["compatibilityLevel"] = level.upper()
        stored.update((k, body[k]) for k in CONFIG_FIELDS if body.get(k) is not None)
        self._write([(config_key(subject), value(stored))])
        self._note("config", subject=subject, config=stored)
        answer = {("compatibility" if k == "compatibilityLevel" else k): v for k, v in stored.items()}
        return answer

    def _check_writable_config(self, subject: str | None) -> None:
        if self.mode_in_scope(subject) in ("READONLY", "READONLY_OVERRIDE"):
            raise E.not_permitted(f"Subject {subject} in context . is in read-only mode")

    def delete_config(self, subject: str | None) -> dict:
        self.sync()
        found = self.state.configs.get(subject)
        if subject is not None and found is None:
            raise E.subject_not_found(subject)
        old = self.config_in_scope(subject) if subject is None else dict(found)
        self._check_writable_config(subject)
        if found is not None:
            self._write([(config_key(subject), None)])
        return old

    def get_mode(self, subject: str | None, default_to_global: bool = False) -> dict:
        self.sync()
        if subject is None or default_to_global:
            return {"mode": self.mode_in_scope(subject)}
        if subject not in self.state.modes:
            raise E.subject_mode_not_configured(subject)
        return {"mode": self.state.modes[subject]}

    def put_mode(self, subject: str | None, body, force: bool = False) -> dict:
        self.sync()
        mode = body.get("mode") if isinstance(body, dict) else None
        if not isinstance(mode, str) or mode.upper() not in MODES:
            raise E.invalid_mode(mode)
        mode = mode.upper()
        records = []
        if mode == "IMPORT" and self.mode_in_scope(subject) != "IMPORT" and not force:
            # as Confluent: no live subject may be there; soft-deleted versions are removed for good
            names = [subject] if subject is not None else list(self.state.subjects)
            if any(self.state.versions(name) for name in names):
                raise E.not_permitted("Cannot import since found existing subjects")
            for name in names:
                for sv in self.state.versions(name, deleted=True):
                    if self.state.referenced_by(name, sv.version, deleted=True):
                        raise E.reference_exists(name, sv.version)
                    records.append((schema_key(name, sv.version), None))
        self._write(records + [(mode_key(subject), value({"subject": subject, "mode": mode}))])
        self._note("mode", subject=subject, mode=mode)
        return {"mode": mode}

    def delete_mode(self, subject: str | None) -> dict:
        self.sync()
        if subject is not None and subject not in self.state.modes:
            raise E.subject_not_found(subject)
        old = self.mode_in_scope(subject)
        if subject in self.state.modes:
            self._write([(mode_key(subject), None)])
        return {"mode": old}

    def _note(self, event: str, **fields) -> None:
        """A log event per change (the control API's journal is the _schemas topic itself)."""
        log.info("schema_registry_" + event, **fields)
