"""The control views of the registry, read from the _schemas topic."""
from __future__ import annotations

from kafkaemu.schema_registry.views import journal_view, subject_view, subjects_view

from .helpers import Env, record


def test_views_read_the_topic():
    env = Env()
    assert subjects_view(env.broker.store)["subjects"] == []
    assert journal_view(env.broker.store) == {"entries": [], "end_offset": 0}
    env.register("a", record("R", ("x", "int")))
    env.register("b", '"string"')
    env.registry.put_config("a", {"compatibility": "NONE"})
    env.registry.delete_subject("b")
    view = subjects_view(env.broker.store)
    assert [(s["subject"], s["deleted"], s["compatibility"]) for s in view["subjects"]] == [
        ("a", False, "NONE"), ("b", True, None)]
    assert view["max_id"] == 2 and view["compatibility"] == "BACKWARD" and view["mode"] == "READWRITE"
    one = subject_view(env.broker.store, "a")
    assert one["versions"][0]["schema"].startswith('{"type":"record"')
    assert one["config"] == {"compatibilityLevel": "NONE"}
    assert subject_view(env.broker.store, "nobody") is None
    journal = journal_view(env.broker.store)
    assert [e["keytype"] for e in journal["entries"]] == ["SCHEMA", "SCHEMA", "CONFIG", "DELETE_SUBJECT"]
    assert journal_view(env.broker.store, after=1, limit=1)["entries"][0]["keytype"] == "CONFIG"
