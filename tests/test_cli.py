import pytest

from kafkaemu.cli import build_parser, config_from_args, main


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
    from kafkaemu.cli import build_parser
    serve = next(a for a in build_parser()._subparsers._group_actions[0].choices.items() if a[0] == "serve")[1]
    missing = [a.option_strings for a in serve._actions if a.option_strings and not a.help]
    assert missing == []
