"""``kafkaemu ctl`` command lines map to control operations with parameters those accept."""
import pytest

from kafkaemu.control.cli import build_parser, call_for, render
from kafkaemu.control.operations import OPS
from kafkaemu.control.params import parse_params


@pytest.mark.parametrize("argv,op,params", [
    (["clock"], "clock_get", {}),
    (["clock", "advance", "30s"], "clock_advance", {"ms": "30s"}),
    (["clock", "set", "2030-01-01T00:00:00Z"], "clock_set", {"now_ms": "2030-01-01T00:00:00Z"}),
    (["expire", "G", "--client-id", "c"], "expire_member", {"group": "G", "client_id": "c"}),
    (["fault", "add", "--api", "Heartbeat", "--error", "NOT_COORDINATOR", "--count", "3"], "fault_add",
     {"api": "Heartbeat", "error": "NOT_COORDINATOR", "count": 3}),
    (["fault", "add", "--api", "Produce", "--black-hole", "--until-removed", "--topic", "t", "--partition", "1"],
     "fault_add", {"api": "Produce", "black_hole": True, "until_removed": True, "topic": "t", "partition": 1}),
    (["fault", "remove", "4"], "fault_remove", {"id": 4}),
    (["faults"], "faults", {}),
    (["node", "stop", "1", "--offline"], "node_stop", {"node": 1, "leaders": "offline"}),
    (["node", "start", "1"], "node_start", {"node": 1}),
    (["node", "start", "1", "--keep-leaders"], "node_start", {"node": 1, "restore_leaders": False}),
    (["leader", "move", "t", "0", "2"], "leader_move", {"topic": "t", "partition": 0, "node": 2}),
    (["coordinator", "move", "G", "2"], "coordinator_move", {"group": "G", "node": 2}),
    (["api-versions", "cap", "Fetch", "11"], "api_version_cap", {"api": "Fetch", "max_version": 11}),
    (["requests", "on", "--bodies"], "request_log_config", {"enabled": True, "bodies": True}),
    (["requests", "--errors", "--last", "5"], "requests", {"errors": True, "last": 5}),
    (["create-topic", "t", "--partitions", "3", "--config", "retention.ms=1000"], "topic_create",
     {"name": "t", "partitions": 3, "configs": {"retention.ms": "1000"}}),
    (["await", "group", "G", "--state", "Stable", "--members", "3"], "await_group",
     {"group": "G", "state": "Stable", "members": 3, "timeout_ms": "30s"}),
    (["await", "lag", "G"], "await_lag", {"group": "G", "timeout_ms": "30s"}),
    (["transaction", "abort", "tx"], "transaction_abort", {"transactional_id": "tx"}),
    (["api-versions", "cap", "Fetch", "-1"], "api_version_cap", {"api": "Fetch", "max_version": -1}),
    (["await", "offset", "t", "0", "10", "--group", "G", "--timeout", "5s"], "await_offset",
     {"topic": "t", "partition": 0, "offset": 10, "group": "G", "timeout_ms": "5s"}),
    (["snapshot", "save", "S"], "snapshot_save", {"name": "S"}),
    (["snapshot", "list"], "snapshot_list", {}),
    (["reset"], "reset", {}),
    (["journal", "--group", "G"], "journal_get", {"group": "G"}),
])
def test_command_lines_map_to_operations_that_accept_their_parameters(argv, op, params):
    got_op, got = call_for(build_parser().parse_args(argv))
    given = {k: v for k, v in got.items() if v is not None}
    assert (got_op, given) == (op, params)
    parse_params(op, OPS[op].params, given)   # raises on a parameter the operation does not take


def test_tables_show_groups_and_faults():
    groups = render("groups", {"groups": [{"group_id": "g", "type": "classic", "state": "Stable", "generation": 3,
                                           "members": 2, "coordinator": 0, "lag": None}]})
    assert groups.splitlines() == ["GROUP  TYPE     STATE   GEN  MEMBERS  COORD  LAG",
                                   "g      classic  Stable  3    2        0      -"]
    rule = {"id": 1, "api": "Produce", "error": "NOT_LEADER_OR_FOLLOWER", "delay_ms": 0, "drop_connection": False,
            "black_hole": False, "client_id": None, "min_version": None, "max_version": None, "node": None,
            "topic": "t", "partition": 1, "count": None, "fired": 2, "active": True}
    assert render("faults", {"faults": [rule]}).splitlines()[1].split() == [
        "1", "Produce", "NOT_LEADER_OR_FOLLOWER", "topic=t", "partition=1", "until", "removed", "2", "yes"]


def test_ctl_reaches_every_operation_the_http_api_has():
    """Every route of the HTTP API (the table's operations) has a ctl command, and its command
    line parses back to that operation."""
    from kafkaemu.control.http import ROUTES
    parser = build_parser()
    reached = set()
    for route in ROUTES:
        spec = route.op
        for command in spec.cli:
            argv = command.words.split()
            argv += ["1" if spec.params[n].kind == "integer" else "x" for n in command.positional]
            argv += [command.flags.get(n, "--" + n.replace("_", "-")) + "=1" for n, p in spec.params.items()
                     if p.required and n not in command.positional and n not in command.defaults
                     and n not in command.fixed]
            got, _ = call_for(parser.parse_args(argv))
            assert got == spec.name, argv
            reached.add(got)
    # the record operations have ctl commands of their own (control/cli_records.py)
    assert parser.parse_args(["produce", "t", "v"])._run.__name__ == "run_produce"
    assert parser.parse_args(["consume", "t"])._run.__name__ == "run_consume"
    reached |= {"records_produce", "records_read", "records_consume"}
    assert reached == {route.op.name for route in ROUTES}


def test_every_command_has_help_text():
    for spec in OPS.values():
        assert spec.doc, f"{spec.name} has no docstring (the help of its method and command)"


def test_a_negative_duration_gets_a_clear_message(capsys):
    """argparse took -5s for an option and said the duration was missing."""
    from kafkaemu.control.cli import main
    assert main(["--url", "http://127.0.0.1:9", "clock", "advance", "-5s"]) == 2
    err = capsys.readouterr().err
    assert "-5s: a duration must not be negative" in err and "restore a snapshot" in err
    assert main(["--url", "http://127.0.0.1:9", "fault", "add", "--api", "Fetch", "--delay", "-1m"]) == 2
    assert "-1m: a duration must not be negative" in capsys.readouterr().err


def test_transactions_read_as_a_line():
    txn = {"transactional_id": "tx", "state": "Ongoing", "pending_state": None, "producer_id": 1000,
           "producer_epoch": 2, "partitions": [{"topic": "t", "partition": 0}], "timeout_ms": 60000, "held": True}
    assert render("transaction", txn) == ("transaction tx: Ongoing, producer 1000 epoch 2, partitions t-0, "
                                          "markers held")
    assert render("transaction_release", {**txn, "completed": False}).endswith("; completed False")


def test_telemetry_renders_each_pushed_metric_as_a_row():
    answer = {"subscriptions": [{"name": "lag", "configs": {"metrics": "org.apache.kafka.consumer.",
                                                             "interval.ms": "1000"}}],
              "clients": [{"client_instance_id": "AAAAAAAAAAAAAAAAAAAAAQ", "client_id": "c1",
                           "client_software_name": "confluent-kafka-python", "pushes": 2,
                           "metrics": [{"name": "org.apache.kafka.consumer.fetch.manager.records.lag",
                                        "kind": "gauge", "unit": "", "attributes": {"topic": "t", "partition": "0"},
                                        "value": 5, "total": 5, "count": None, "time_ms": 1}]}]}
    lines = render("telemetry", answer).splitlines()
    assert lines[1].split() == ["lag", "metrics=org.apache.kafka.consumer.", "interval.ms=1000"]
    assert lines[4].split() == ["c1", "AAAAAAAAAAAAAAAAAAAAAQ", "confluent-kafka-python", "2",
                                "org.apache.kafka.consumer.fetch.manager.records.lag{partition=0,topic=t}", "5"]
