"""``kafkaemu ctl`` against a ``kafkaemu serve`` child process with a manual clock, and
KafkaEmulator's controls in subprocess mode (over HTTP)."""
import json
import os
import subprocess
import sys

import pytest

from kafkaemu.control.params import AwaitTimeout, BadRequest
from kafkaemu.testing import KafkaEmulator


@pytest.fixture(scope="module")
def served():
    with KafkaEmulator(subprocess_mode=True, manual_clock=True, nodes=2) as e:
        yield e


def ctl(emulator, *args, env=None):
    return subprocess.run([sys.executable, "-m", "kafkaemu", "ctl", "--url", emulator.control_url, *args],
                          capture_output=True, text=True, timeout=60, env=env)


def test_serve_prints_the_control_url_and_the_subprocess_emulator_uses_it(served):
    assert served.control_url.startswith("http://127.0.0.1:")
    assert "--manual-clock" in served.subprocess_command() and "--control-port=0" in served.subprocess_command()
    with pytest.raises(RuntimeError, match="in-process"):
        served.call(lambda broker: None)


def test_clock_commands_human_and_json(served):
    before = served.now_ms()
    done = ctl(served, "clock", "advance", "30s")
    assert done.returncode == 0 and "manual clock" in done.stdout
    shown = json.loads(ctl(served, "--json", "clock").stdout)
    assert shown["now_ms"] == before + 30_000


def test_fault_commands(served):
    added = ctl(served, "--json", "fault", "add", "--api", "Heartbeat", "--error", "NOT_COORDINATOR", "--count", "3")
    assert added.returncode == 0
    rule = json.loads(added.stdout)
    listed = ctl(served, "fault", "list")
    assert "Heartbeat" in listed.stdout and "NOT_COORDINATOR" in listed.stdout
    assert ctl(served, "fault", "remove", str(rule["id"])).returncode == 0
    bad = ctl(served, "fault", "add", "--api", "Hartbeat", "--error", "NOT_COORDINATOR")
    assert bad.returncode == 1 and "did you mean Heartbeat? (kafkaemu apis lists them) (HTTP 400)" in bad.stderr


def test_groups_topics_nodes_and_an_await_that_times_out(served):
    topics = ctl(served, "topics")
    assert topics.returncode == 0 and topics.stdout.startswith("TOPIC")
    assert ctl(served, "groups").stdout.startswith("GROUP")
    nodes = ctl(served, "nodes")
    lines = nodes.stdout.splitlines()
    assert lines[0].split()[:3] == ["NODE", "ADDRESS", "RUNNING"] and len(lines) == 3
    waited = ctl(served, "await", "group", "G", "--state", "Stable", "--members", "3", "--timeout", "100ms")
    assert waited.returncode == 1
    assert "timed out after 100 ms waiting for group 'G': state Stable, 3 members" in waited.stderr


def test_snapshot_commands_and_reset(served):
    assert ctl(served, "snapshot", "save", "cli-snap").returncode == 0
    assert "cli-snap" in ctl(served, "snapshot", "list").stdout
    assert ctl(served, "snapshot", "restore", "cli-snap").returncode == 0
    assert ctl(served, "snapshot", "delete", "cli-snap").returncode == 0
    assert ctl(served, "snapshot", "restore", "cli-snap").returncode == 1


def test_ctl_needs_a_url_and_says_where_to_find_it():
    env = {k: v for k, v in os.environ.items() if k != "KAFKAEMU_CONTROL_URL"}
    done = subprocess.run([sys.executable, "-m", "kafkaemu", "ctl", "clock"], capture_output=True, text=True,
                          timeout=60, env=env)
    assert done.returncode == 2 and "KAFKAEMU_CONTROL_URL" in done.stderr


def test_ctl_reports_an_unreachable_api():
    done = subprocess.run([sys.executable, "-m", "kafkaemu", "ctl", "--url", "http://127.0.0.1:9", "clock"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and "cannot reach the kafkaemu control API" in done.stderr


def test_subprocess_controls_raise_the_same_errors_as_in_process(served):
    with pytest.raises(BadRequest, match="unknown error"):
        served.inject_fault("Fetch", error="NOPE")
    with pytest.raises(AwaitTimeout):
        served.await_offset("nothing", 0, 5, timeout=0.05)
    assert served.advance_clock("1s") == served.now_ms()


def test_a_token_protected_api_from_ctl_and_the_subprocess_emulator():
    with KafkaEmulator(subprocess_mode=True, control_token="tok") as e:
        assert e.nodes()[0]["running"]   # the emulator sends its token
        refused = ctl(e, "clock")
        assert refused.returncode == 1 and "HTTP 401" in refused.stderr
        assert ctl(e, "--token", "tok", "clock").returncode == 0
        env = dict(os.environ, KAFKAEMU_CONTROL_TOKEN="tok")
        assert ctl(e, "clock", env=env).returncode == 0


def test_listing_commands_print_tables_and_json_with_json():
    """leader move, schemas, subjects, client-quotas, telemetry and state: tables by default, as the
    docs say; the API's JSON with --json. The subjects agree with Confluent's GET /subjects."""
    from confluent_kafka.schema_registry import Schema, SchemaRegistryClient
    with KafkaEmulator(subprocess_mode=True, schema_registry=True, nodes=2) as e:
        e.create_topic("listed", 1)
        registry = SchemaRegistryClient({"url": e.get_schema_registry_url()})
        for subject, kind in (("listed-value", "string"), ("gone-value", "int")):
            registry.register_schema(subject, Schema(f'{{"type": "{kind}"}}', "AVRO"))
        registry.delete_subject("gone-value")
        e.set_client_quota("producer_byte_rate", 1024, client_id="loader")

        moved = ctl(e, "leader", "move", "listed", "0", "1")
        assert moved.stdout.strip() == "listed-0: leader 1, epoch 1", moved.stderr
        schemas = ctl(e, "schemas").stdout.splitlines()
        assert schemas[0] == "2 schema(s), max id 2, compatibility BACKWARD, mode READWRITE"
        assert schemas[2].split() == ["SUBJECT", "VERSIONS", "IDS", "TYPE", "COMPATIBILITY", "MODE", "DELETED"]
        assert [line.split()[0] for line in schemas[3:]] == ["gone-value", "listed-value"]
        assert ctl(e, "subjects").stdout.split() == ["listed-value"]
        quotas = ctl(e, "client-quotas").stdout.splitlines()
        assert quotas[:2] == ["ENTITY            QUOTAS", "client-id=loader  producer_byte_rate=1024"]
        telemetry = ctl(e, "telemetry").stdout.splitlines()
        assert telemetry[0].split() == ["SUBSCRIPTION", "CONFIGS"]
        state = ctl(e, "state").stdout
        assert state.splitlines()[2].split()[:3] == ["NODE", "ADDRESS", "RUNNING"]
        assert "listed    0          1       1" in state and "request log off" in state
        for command in (["leader", "move", "listed", "0", "0"], ["schemas"], ["client-quotas"], ["telemetry"],
                        ["state"]):
            assert isinstance(json.loads(ctl(e, "--json", *command).stdout), dict), command

        assert e.schema_subjects() == registry.get_subjects() == ["listed-value"]
        assert sorted(e.schema_subjects(deleted=True)) == sorted(registry.get_subjects(deleted=True))
        assert e._client.request("GET", "/api/schema-registry/subjects") == ["listed-value"]
        assert [s["subject"] for s in e.schema_registry()["subjects"]] == ["gone-value", "listed-value"]
