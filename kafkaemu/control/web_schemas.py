"""The web page's schema registry section: subjects, their versions and ids, and each version's
schema text (in a ``<details>``), read from the ``_schemas`` topic (schema_registry/views.py).
Every subject and schema text goes through ``esc``."""
from __future__ import annotations

from ..schema_registry.views import subject_view, subjects_view
from .web_timeline import esc

SUBJECTS_SHOWN = 100


def schema_registry_section(store) -> str:
    view = subjects_view(store)
    if not view["subjects"]:
        return '<p class="empty-note">No subjects registered.</p>'
    rows = []
    for s in view["subjects"][:SUBJECTS_SHOWN]:
        detail = subject_view(store, s["subject"]) or {"versions": []}
        versions = "".join(
            f'<details><summary>{"<s>" if v["deleted"] else ""}v{v["version"]} · id {v["id"]} · '
            f'{esc(v["schema_type"])}{"</s>" if v["deleted"] else ""}</summary><pre>{esc(v["schema"])}</pre></details>'
            for v in detail["versions"])
        rows.append(f'<tr><td>{"<s>" if s["deleted"] else ""}{esc(s["subject"])}{"</s>" if s["deleted"] else ""}</td>'
                    f'<td>{esc(s["compatibility"] or "")}</td><td>{esc(s["mode"] or "")}</td><td>{versions}</td></tr>')
    more = len(view["subjects"]) - SUBJECTS_SHOWN
    return (f'<p>{len(view["subjects"])} subjects, {view["schemas"]} schemas; compatibility '
            f'{esc(view["compatibility"])}, mode {esc(view["mode"])}</p>'
            '<table class="schemas"><thead><tr><th>subject</th><th>compatibility</th><th>mode</th>'
            '<th>versions</th></tr></thead>'
            f'<tbody>{"".join(rows)}</tbody></table>'
            + (f'<p class="empty-note">{more} more subjects not shown</p>' if more > 0 else ""))
