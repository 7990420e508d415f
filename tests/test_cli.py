import os
import subprocess
import sys

import pytest

from kafkaemu.cli import config_from_args, main
from kafkaemu.cli_args import plain_serve_args
from kafkaemu.cli_parser import build_parser
from kafkaemu.config import SETTINGS


def parse(*argv):
    return config_from_args(build_parser().parse_args(["serve", *argv]))


def test_serve_options_become_broker_config():
    config = parse("--port", "0", "--nodes", "3", "--no-auto-create-topics", "--num-partitions", "4",
                   "--group-initial-rebalance-delay-ms", "3000",
                   "--override", "group.consumer.session.timeout.ms=10000",
                   "--override", "group.consumer.min.session.timeout.ms=10000",
                   "--override", "log.retention.check.interval.ms = 1000")
    assert (config.port, config.nodes, config.auto_create_topics, config.num_partitions) == (0, 3, False, 4)
    assert config.classic.initial_rebalance_delay_ms == 3000
    assert config.consumer.session_timeout_ms == 10000 and config.log_retention_check_interval_ms == 1000


def test_a_malformed_override_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["serve", "--override", "no-equals-sign"])
    assert exit_info.value.code == 2
    assert "--override takes NAME=VALUE" in capsys.readouterr().err


def test_apis_lists_what_api_versions_advertises(capsys):
    from kafkaemu.handlers import REGISTRY
    assert main(["apis"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == len(REGISTRY.versions())
    assert any(line.split()[:2] == ["11", "JoinGroup"] and line.endswith("v0-v9") for line in lines)


def test_every_serve_flag_has_help_including_log_level():
    from kafkaemu.cli_parser import build_parser
    serve = next(a for a in build_parser()._subparsers._group_actions[0].choices.items() if a[0] == "serve")[1]
    missing = [a.option_strings for a in serve._actions if a.option_strings and not a.help]
    assert missing == []


def test_serve_help_lists_the_common_options_first_then_one_section_per_area():
    from kafkaemu.cli_help import section_order
    shown = subprocess.run([sys.executable, "-m", "kafkaemu", "serve", "--help"], capture_output=True, text=True,
                           timeout=60, env={**os.environ, "COLUMNS": "100"}).stdout
    assert shown.splitlines()[0] == "usage: kafkaemu serve [--host HOST] [--port PORT] [OPTION ...]"
    headings = [line[:-1] for line in shown.splitlines() if line and not line.startswith(" ") and line.endswith(":")]
    assert headings[0] == "common options"
    assert headings[1:] == [t for t in section_order() if f"\n{t}:\n" in shown]   # in the areas' order
    common = shown.split("common options:\n", 1)[1].split("\n\n", 1)[0]
    flags = [line.split()[0].rstrip(",") for line in common.splitlines() if line.startswith("  -")]
    assert flags[:6] == ["-h", "--host", "--port", "--config", "--override", "--data-dir"]
    assert {"--control-port", "--manual-clock", "--log-level"} <= set(flags)
    # every setting with a flag once, none left out of the sections (the rest: --override NAME=VALUE)
    for s in SETTINGS.values():
        if s.flag is None:
            continue
        assert shown.count(f"  {s.flag} ") + shown.count(f"  {s.flag}\n") == 1, s.flag
    streams = shown.split("streams groups (KIP-1071):\n", 1)[1].split("\n\n", 1)[0]
    assert "--group-streams-session-timeout-ms" in streams and "--host" not in streams


def test_a_flags_area_comes_from_its_name_not_from_where_it_is_defined():
    from kafkaemu.cli_help import OTHER, area_of
    assert area_of("--host") is None and area_of("--data-dir", "log.dir") is None
    assert area_of("--group-consumer-session-timeout-ms") == "consumer groups (KIP-848)"
    assert area_of("--group-min-session-timeout-ms") == "classic groups and committed offsets"
    assert area_of("--group-share-record-lock-duration-ms") == "share groups (KIP-932)"
    assert area_of("--offsets-topic-replication-factor", "offsets.topic.replication.factor") == \
        "classic groups and committed offsets"
    assert area_of("--transaction-state-log-min-isr", "transaction.state.log.min.isr") == "transactions and features"
    assert area_of("--num-io-threads", "num.io.threads") == "topics, the log and storage"
    assert area_of("--advertised-listeners", "advertised.listeners") == "listeners, nodes and the cluster"
    assert area_of("--x", "log.flush.interval.ms") == "topics, the log and storage"   # by its Kafka name
    assert area_of("--connection-failed-authentication-delay-ms") == "security: SASL, TLS, ACLs, delegation tokens"
    assert area_of("--metric-reporters", "metric.reporters") == "quotas, metrics and client telemetry"
    assert area_of("--something-new") == OTHER


# serve lines read without argparse, and the namespace its parser gives for each
PLAIN = [[], ["--port", "0"], ["--port=0", "--log-level", "WARNING"], ["--log-level=Debug", "--log-format", "json"],
         ["--no-auto-create-topics", "--sasl-user", "a:b", "--sasl-user=c:d", "--port", "1", "--port", "2"],
         ["--override", "num.partitions=3", "--override=log.retention.ms=5", "--config", "server.properties"],
         ["--host=", "--control-port", "0", "--print-config", "--feature=transaction.version=1"],
         ["--host", "", "--cluster-id", "a=b", "--data-dir", "/tmp/x y"],
         # every flag once: a switch alone, any other with a value
         [arg for s in SETTINGS.values() if s.flag for arg in ([s.flag] if s.kind == "bool" else [s.flag, "7"])]]
# lines argparse reads: help, abbreviations, unknown flags, values starting with "-", a switch given a value,
# refused choices, a missing value, positional arguments, other commands
NOT_PLAIN = [["--help"], ["-h"], ["--po", "0"], ["--port"], ["--port", "-1"], ["--control-port", "--port"],
             ["--no-auto-create-topics=true"], ["--print-config=yes"], ["--log-level", "loud"],
             ["--log-format", "xml"], ["--log-format=JSON"], ["--unknown", "1"], ["extra"], ["--port", "0", "--"],
             ["--version"]]


@pytest.mark.parametrize("argv", PLAIN, ids=lambda argv: " ".join(argv)[:60] or "no flags")
def test_a_plain_serve_line_reads_as_argparse_reads_it(argv):
    assert vars(plain_serve_args(["serve", *argv])) == vars(build_parser().parse_args(["serve", *argv]))


@pytest.mark.parametrize("argv", NOT_PLAIN, ids=" ".join)
def test_any_other_serve_line_is_left_to_argparse(argv):
    assert plain_serve_args(["serve", *argv]) is None


@pytest.mark.parametrize("argv", [["apis"], ["errors"], ["--version"], ["ctl", "--help"], [], ["serv"]])
def test_other_commands_are_left_to_argparse(argv):
    assert plain_serve_args(argv) is None


def test_a_line_argparse_refuses_keeps_its_one_line_error(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["serve", "--port"])
    assert exit_info.value.code == 2
    assert capsys.readouterr().err == "kafkaemu serve: error: argument --port: expected one argument\n"
