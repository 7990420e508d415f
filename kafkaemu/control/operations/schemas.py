"""The built-in schema registry (docs/schema-registry.md) seen from the control API: its subjects,
one subject's schemas and the ``_schemas`` topic's records as its journal. Read from the broker's
log store, so they answer whether or not the registry is served."""
from __future__ import annotations

from ...schema_registry.views import journal_view, subject_view, subjects_view
from ..params import ControlError, boolean, integer, text
from ..table import Cli, P, Py, op
from .base import ControlBase


class SchemaRegistryOps(ControlBase):
    @op("GET", "/api/schema-registry", py=Py("schema_registry", lambda: {}), cli=Cli("schemas"))
    def schema_subjects(self) -> dict:
        """The schema registry's subjects with their versions and ids, its global compatibility and mode."""
        return subjects_view(self.broker.store)

    @op("GET", "/api/schema-registry/subjects",
        deleted=P(boolean, default=False, help="include soft-deleted subjects (Confluent's ?deleted=true)"),
        py=Py("schema_subjects", lambda deleted=False: {"deleted": deleted or None}), cli=Cli("subjects"))
    def schema_subject_names(self, deleted: bool) -> list[str]:
        """The subjects' names, as Confluent's ``GET /subjects`` and ``SchemaRegistryClient.get_subjects()``
        answer them."""
        return [s["subject"] for s in subjects_view(self.broker.store)["subjects"] if deleted or not s["deleted"]]

    @op("GET", "/api/schema-registry/subjects/{subject}", subject=P(text, required=True, help="the subject"),
        py=Py("schema_subject", lambda subject: {"subject": subject}), cli=Cli("schema", "subject"))
    def schema_subject(self, subject: str) -> dict:
        """One subject's versions with their schema text, references, metadata and rule set."""
        found = subject_view(self.broker.store, subject)
        if found is None:
            raise ControlError(404, f"no subject {subject!r}")
        return found

    @op("GET", "/api/schema-registry/journal",
        after=P(integer(min=-1), default=-1, help="only records after this offset of _schemas"),
        limit=P(integer(min=1, max=100_000), default=1000, help="at most this many records"),
        py=Py("schema_journal", lambda after=-1, limit=1000: {"after": after, "limit": limit}, result="entries"),
        cli=Cli("schema-journal"))
    def schema_journal(self, after: int, limit: int) -> dict:
        """The registry's journal: the _schemas records (registrations, deletions, configs, modes)."""
        return journal_view(self.broker.store, after, limit)
