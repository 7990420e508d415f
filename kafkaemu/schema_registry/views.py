"""Read-only views of the registry for the control API, ``kafkaemu ctl`` and the web page, read
from the broker's ``_schemas`` topic (so they need no served registry): the subjects with their
versions, one subject's schema texts, and the topic's records as the registry's journal."""
from __future__ import annotations

from .records import SCHEMAS_TOPIC, SchemasTopic
from .registry import SchemaRegistry


def _registry(store) -> SchemaRegistry:
    registry = SchemaRegistry(store, clock=None)
    registry.sync()
    return registry


def subjects_view(store) -> dict:
    """Every subject (soft-deleted ones too) with its versions, the global and subject configs and
    modes."""
    registry = _registry(store)
    state = registry.state
    subjects = []
    for name in sorted(state.subjects):
        versions = state.versions(name, deleted=True)
        subjects.append({"subject": name, "deleted": all(sv.deleted for sv in versions),
                         "versions": [{"version": sv.version, "id": sv.id, "schema_type": sv.schema_type,
                                       "deleted": sv.deleted, "references": len(sv.references)} for sv in versions],
                         "compatibility": (state.configs.get(name) or {}).get("compatibilityLevel"),
                         "mode": state.modes.get(name)})
    return {"subjects": subjects, "schemas": len(state.ids), "max_id": state.max_id,
            "compatibility": registry.config_in_scope(None)["compatibilityLevel"],
            "mode": registry.mode_in_scope(None)}


def subject_view(store, subject: str) -> dict | None:
    """One subject's versions with their schema text, references, metadata and rule set."""
    registry = _registry(store)
    versions = registry.state.versions(subject, deleted=True)
    if not versions:
        return None
    return {"subject": subject, "config": registry.state.configs.get(subject),
            "mode": registry.state.modes.get(subject),
            "versions": [{**sv.answer(), "schema_type": sv.schema_type, "deleted": sv.deleted} for sv in versions]}


def journal_view(store, after: int = -1, limit: int = 1000) -> dict:
    """The ``_schemas`` records after offset ``after`` (registrations, deletions, config and mode
    changes, as Confluent's registry writes them), oldest first, at most ``limit``."""
    topic = store.get(SCHEMAS_TOPIC)
    if topic is None or not topic.partitions:
        return {"entries": [], "end_offset": 0}
    plog = topic.partitions[0]
    entries = []
    for offset, key, val in SchemasTopic(store, None).read(plog, after + 1):
        entries.append({"offset": offset, "keytype": key.get("keytype"), "subject": key.get("subject"),
                        "version": key.get("version"), "value": val})
        if len(entries) >= limit:
            break
    return {"entries": entries, "end_offset": plog.high_watermark}
