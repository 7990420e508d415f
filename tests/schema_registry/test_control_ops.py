"""The control API's views of the schema registry (control/operations/schemas.py), driven as the
HTTP API, KafkaEmulator and kafkaemu ctl drive them: by operation name."""
from __future__ import annotations

import pytest

from kafkaemu.control.operations import Control
from kafkaemu.control.params import ControlError

from .helpers import Env, record


def test_views_through_the_control_table():
    env = Env()
    control = Control(env.broker, env.clock)
    assert control.run("schema_subjects", {})["subjects"] == []
    env.register("a", record("R", ("x", "int")))
    env.registry.delete_version("a", "1")
    subjects = control.run("schema_subjects", {})
    assert [s["subject"] for s in subjects["subjects"]] == ["a"]
    assert control.run("schema_subject", {"subject": "a"})["versions"][0]["deleted"] is True
    with pytest.raises(ControlError) as info:
        control.run("schema_subject", {"subject": "nobody"})
    assert info.value.status == 404
    journal = control.run("schema_journal", {"after": -1})
    assert [e["keytype"] for e in journal["entries"]] == ["SCHEMA", "SCHEMA"]


def test_the_web_page_shows_subjects_versions_and_schema_text_escaped():
    from kafkaemu.control.web import render_page
    env = Env()
    control = Control(env.broker, env.clock)
    assert "No subjects registered." in render_page(control, "").decode()
    env.register("<script>x</script>", record("R", ("x", "int")))
    env.register("orders-value", '{"type": "enum", "name": "E", "symbols": ["A"], "doc": "<b>"}')
    env.registry.delete_subject("orders-value")
    page = render_page(control, "").decode()
    section = page.split('<section id="schemas">', 1)[1]
    assert "<script>x</script>" not in section and "&lt;script&gt;x&lt;/script&gt;" in section
    assert "<s>orders-value</s>" in section and "v1 · id 2 · AVRO" in section
    assert "&lt;b&gt;" in section and '<a href="#schemas">' in page
