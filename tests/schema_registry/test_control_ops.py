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
