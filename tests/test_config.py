"""BrokerConfig is the one source of settings: every setting (its own fields and those of the
coordinators' settings classes it composes) reaches the command line, ``--override`` (by its Kafka
name), the coordinators and the subprocess arguments; bad settings are refused with one line
naming them."""
import logging

import pytest

from kafkaemu.cli import config_from_args, main
from kafkaemu.cli_parser import build_parser
from kafkaemu.config import DEFAULTS, KAFKA_NAMES, SETTINGS, BrokerConfig, setting_named
from kafkaemu.core.consumer.settings import ConsumerSettings
from kafkaemu.core.transactions.settings import TransactionSettings
from kafkaemu.logging import log_level
from tests.conftest import new_broker

# A value other than the default for every field; the first test keeps this table complete.
SAMPLES = {
    "host": "127.0.0.2", "port": 19092, "advertised_host": "broker.example", "node_id": 7, "nodes": 3,
    "cluster_id": "my-cluster", "auto_create_topics": False, "num_partitions": 4, "default_replication_factor": 3,
    "socket_request_max_bytes": 5000000, "message_max_bytes": 2000000, "fetch_max_bytes": 10000000, "connections_max_idle_ms": 120000,
    "max_uncompressed_batch_bytes": 8000000, "data_dir": "/tmp/kafkaemu-data", "data_dir_tail_cache_bytes": 1000000,
    "log_retention_check_interval_ms": 1000, "log_cleaner_backoff_ms": 2000, "offsets_topic_num_partitions": 5,
    "log_retention_ms": 60000, "log_retention_bytes": 1000000, "log_segment_bytes": 1048576, "log_roll_ms": 3600000,
    "log_cleanup_policy": ("compact", "delete"), "log_cleaner_delete_retention_ms": 1000,
    "log_index_interval_bytes": 512,
    "group_min_session_timeout_ms": 1000, "group_max_session_timeout_ms": 60000,
    "group_initial_rebalance_delay_ms": 3000, "group_max_size": 10, "offset_metadata_max_bytes": 100,
    "offsets_retention_minutes": 60, "offsets_retention_check_interval_ms": 30000,
    "group_consumer_session_timeout_ms": 6000, "group_consumer_heartbeat_interval_ms": 500,
    "group_consumer_min_session_timeout_ms": 6000, "group_consumer_min_heartbeat_interval_ms": 500,
    "group_share_record_lock_duration_ms": 1000, "group_share_min_record_lock_duration_ms": 1000,
    "group_consumer_max_session_timeout_ms": 70000, "group_consumer_max_heartbeat_interval_ms": 20000,
    "group_share_session_timeout_ms": 50000, "group_share_delivery_count_limit": 3,
    "group_share_min_session_timeout_ms": 40000, "group_share_max_session_timeout_ms": 70000,
    "group_share_heartbeat_interval_ms": 6000, "group_share_min_heartbeat_interval_ms": 4000,
    "group_share_max_heartbeat_interval_ms": 20000, "group_share_max_size": 100,
    "group_share_max_record_lock_duration_ms": 120000, "group_share_min_delivery_count_limit": 3,
    "group_share_max_delivery_count_limit": 12, "group_share_partition_max_record_locks": 500,
    "group_share_min_partition_max_record_locks": 200, "group_share_max_partition_max_record_locks": 3000,
    "group_consumer_max_size": 20, "group_consumer_assignors": ("range",),
    "group_streams_session_timeout_ms": 50000, "group_streams_heartbeat_interval_ms": 6000,
    "group_streams_num_standby_replicas": 1, "group_streams_min_session_timeout_ms": 30000,
    "group_streams_max_session_timeout_ms": 90000, "group_streams_min_heartbeat_interval_ms": 2000,
    "group_streams_max_heartbeat_interval_ms": 20000, "group_streams_max_standby_replicas": 3,
    "group_streams_max_size": 50,
    "authorizer": True, "authorizer_class_name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
    "super_users": "User:admin;User:ops", "allow_everyone_if_no_acl_found": True,
    "delegation_token_secret_key": "s3cret-key", "delegation_token_max_lifetime_ms": 1000000,
    "delegation_token_expiry_time_ms": 100000,
    "tls_client_auth": "required", "tls_ca": "/tmp/ca.pem", "ssl_principal_mapping_rules": "RULE:^CN=(.*)$/$1/,DEFAULT",
    "sasl_users": {"alice": "s3:cret", "bob": "-pw"}, "sasl_mechanisms": ("SCRAM-SHA-512", "PLAIN"),
    "tls_cert": "/tmp/cert.pem", "tls_key": "/tmp/key.pem", "tls_key_password": "--secret",
    "connection_failed_authentication_delay_ms": 0, "quota_window_num": 3, "quota_window_size_seconds": 2,
    "metric_reporters": ("org.apache.kafka.common.metrics.JmxReporter", "kafkaemu.telemetry.ClientTelemetryReceiver"),
    "telemetry_max_bytes": 65536,
    "manual_clock": True, "control_port": 9644, "control_host": "127.0.0.3", "control_token": "t0ken",
    "schema_registry_port": 8081, "schema_registry_host": "127.0.0.4",
    "control_allow_remote": True,
    "control_idle_timeout_ms": 5000,
    "transaction_state_log_num_partitions": 7, "transaction_max_timeout_ms": 60000,
    "transactional_id_expiration_ms": 86400000, "transaction_abort_timed_out_transaction_cleanup_interval_ms": 1000,
    "transaction_remove_expired_transaction_cleanup_interval_ms": 60000,
    "transaction_partition_verification_enable": False,
    "finalized_features": ("transaction.version=1", "group.version=0"),
    "transaction_version": 1,
    "group_consumer_migration_policy": "upgrade",
    "group_consumer_regex_refresh_interval_ms": 30000,
}



def sample(s):
    """A value other than the default for a setting SAMPLES leaves out (those kafkaemu accepts by
    their Kafka names only)."""
    if s.kind == "int":
        return s.default + 1 if s.default < s.max else s.default - 1
    if s.kind == "bool":
        return not s.default
    return ("x",) if s.kind == "list" else "x"


SAMPLES.update({name: sample(s) for name, s in SETTINGS.items() if name not in SAMPLES and s.flag is None})


def parse(*argv):
    return config_from_args(build_parser().parse_args(["serve", *argv]))


def text_of(setting, value) -> str:
    """What ``--override NAME=...`` takes for ``value``."""
    if setting.kind == "bool":
        return str(value).lower()
    return ",".join(value) if setting.kind == "list" else str(value)


def test_the_samples_cover_every_setting_with_a_value_other_than_its_default():
    assert set(SAMPLES) == set(SETTINGS)
    assert [name for name, value in SAMPLES.items() if value == SETTINGS[name].default] == []


def test_every_setting_round_trips_through_the_command_line():
    config = BrokerConfig(**SAMPLES)
    assert parse(*config.to_argv()) == config
    assert BrokerConfig().to_argv() == []  # defaults need no arguments
    assert parse() == BrokerConfig()


@pytest.mark.parametrize("kafka_name", sorted(KAFKA_NAMES))
def test_every_kafka_named_setting_is_an_override(kafka_name):
    setting = KAFKA_NAMES[kafka_name]
    value = SAMPLES[setting.name]
    config = parse("--override", f"{kafka_name}={text_of(setting, value)}")
    assert setting.get(config) == value
    assert BrokerConfig(extra={kafka_name: value}) == config  # the same names from Python


def test_existing_flags_keep_their_names():
    flags = {s.flag for s in SETTINGS.values()}
    assert {"--host", "--port", "--advertised-host", "--node-id", "--nodes", "--data-dir", "--no-auto-create-topics",
            "--num-partitions", "--group-initial-rebalance-delay-ms", "--group-min-session-timeout-ms",
            "--group-max-session-timeout-ms", "--offsets-retention-minutes", "--sasl-user", "--sasl-mechanisms",
            "--tls-cert", "--tls-key", "--tls-key-password"} <= flags


def test_override_texts_become_typed_values():
    config = BrokerConfig(extra={"auto.create.topics.enable": "FALSE", "group.consumer.assignors": "range, uniform",
                                 "num.partitions": "3"})
    assert (config.auto_create_topics, config.consumer.assignors, config.num_partitions) == \
        (False, ("range", "uniform"), 3)


def test_unknown_override_names_are_refused_with_a_suggestion():
    with pytest.raises(ValueError, match=r"unknown setting 'group.consumer.session.timeout' "
                                         r"\(did you mean group.consumer.session.timeout.ms\?\)"):
        setting_named("group.consumer.session.timeout")
    with pytest.raises(ValueError, match="unknown setting 'no.such.setting'"):
        BrokerConfig(extra={"no.such.setting": 1})


def test_the_coordinators_settings_are_composed_not_copied():
    config = BrokerConfig(**SAMPLES)
    assert (config.classic.min_session_timeout_ms, config.classic.max_session_timeout_ms,
            config.classic.initial_rebalance_delay_ms, config.classic.max_size, config.offsets.retention_ms,
            config.offsets.topic_num_partitions, config.offsets.metadata_max_bytes,
            config.offsets.retention_check_interval_ms) == (1000, 60000, 3000, 10, 3600000, 5, 100, 30000)
    assert (config.consumer.session_timeout_ms, config.consumer.heartbeat_interval_ms, config.consumer.max_size,
            config.consumer.assignors, config.consumer.migration_policy) == (6000, 500, 20, ("range",), "upgrade")
    assert (config.share.record_lock_duration_ms, config.share.delivery_count_limit) == (1000, 3)
    # a whole settings object is a keyword too, and a named setting changes it
    assert BrokerConfig(consumer=config.consumer, group_consumer_max_size=7).consumer.session_timeout_ms == 6000
    assert DEFAULTS.consumer == ConsumerSettings() and DEFAULTS.transactions == TransactionSettings()
    broker = new_broker(group_share_session_timeout_ms=50000, group_consumer_max_size=20)
    assert broker.coordinator.settings.share.session_timeout_ms == 50000
    assert broker.coordinator.settings.consumer.max_size == 20


def test_transaction_settings_reach_the_transaction_coordinator():
    t = BrokerConfig(**SAMPLES).transactions
    assert (t.state_log_num_partitions, t.max_timeout_ms, t.transactional_id_expiration_ms,
            t.abort_timed_out_transactions_interval_ms, t.remove_expired_transactional_ids_interval_ms,
            t.partition_verification_enable) == (7, 60000, 86400000, 1000, 60000, False)
    broker = new_broker(transaction_state_log_num_partitions=7, transaction_partition_verification_enable=False)
    assert len(broker.store.get("__transaction_state").partitions) == 7 and broker.txn_path.partition_verifier is None


def test_the_log_store_gets_its_intervals_from_the_config():
    broker = new_broker(log_retention_check_interval_ms=1000, log_cleaner_backoff_ms=2000)
    assert (broker.store.retention_check_interval_ms, broker.store.cleaner_backoff_ms) == (1000, 2000)


def test_a_wildcard_host_advertises_this_machines_name():
    import socket
    assert BrokerConfig(host="0.0.0.0").advertised == socket.gethostname()
    assert BrokerConfig(host="::").advertised == socket.gethostname()
    assert BrokerConfig(host="0.0.0.0", advertised_host="kafka").advertised == "kafka"
    assert BrokerConfig(host="127.0.0.1").advertised == "127.0.0.1"


# -- bad settings: one line, exit status 2 -------------------------------------------------------
@pytest.fixture
def files(tmp_path):
    (tmp_path / "key.pem").write_text("not really a key")
    (tmp_path / "a-file").write_text("")
    return tmp_path


BAD = [
    (["--port", "70000"], "--port must be from 0 to 65535, got 70000"),
    (["--port", "-1"], "--port must be from 0 to 65535, got -1"),
    (["--port", "nine"], "--port takes an integer, got 'nine'"),
    (["--port", "65535", "--nodes", "3"], "--port 65535 with --nodes 3 needs ports up to 65537, beyond 65535"),
    (["--nodes", "0"], "--nodes must be from 1 to 1024, got 0"),
    (["--control-port", "70000"], "--control-port must be from -1 to 65535, got 70000"),
    (["--num-partitions", "0"], "--num-partitions must be at least 1, got 0"),
    (["--override", "num.partitions=0"], "--num-partitions must be at least 1, got 0"),
    (["--group-min-session-timeout-ms", "7000", "--group-max-session-timeout-ms", "6000"],
     "--group-max-session-timeout-ms 6000 must be greater than or equal to --group-min-session-timeout-ms 7000"),
    (["--override", "group.consumer.heartbeat.interval.ms=50000", "--override",
      "group.consumer.max.heartbeat.interval.ms=60000"],
     "--group-consumer-heartbeat-interval-ms 50000 must be less than --group-consumer-session-timeout-ms 45000"),
    (["--override", "group.consumer.session.timeout.ms=6000"],
     "--group-consumer-session-timeout-ms 6000 must be greater than or equal to "
     "--group-consumer-min-session-timeout-ms 45000"),
    # Kafka 4.4's group.share.* settings: their bounds, and ShareGroupConfig's checks in its words
    (["--override", "group.share.delivery.count.limit=12"],
     "--group-share-delivery-count-limit must be from 2 to 10, got 12"),
    (["--override", "group.share.record.lock.duration.ms=1000"],
     "--group-share-record-lock-duration-ms 1000 must be greater than or equal to "
     "--group-share-min-record-lock-duration-ms 15000"),
    (["--override", "group.share.partition.max.record.locks=5000"],
     "--group-share-max-partition-max-record-locks 4000 must be greater than or equal to "
     "--group-share-partition-max-record-locks 5000"),
    (["--override", "group.share.assignment.interval.ms=20000"],
     "group.share.assignment.interval.ms 20000 must be less than or equal to "
     "group.share.max.assignment.interval.ms 15000"),
    (["--override", "group.consumer.migration.policy=sideways"],
     "--group-consumer-migration-policy takes bidirectional, upgrade, downgrade or disabled, got sideways"),
    # GroupCoordinatorConfig's checks of the group.streams.* settings, in its words
    (["--override", "group.streams.heartbeat.interval.ms=4000"],
     "--group-streams-heartbeat-interval-ms 4000 must be greater than or equal to "
     "--group-streams-min-heartbeat-interval-ms 5000"),
    (["--override", "group.streams.session.timeout.ms=70000"],
     "--group-streams-session-timeout-ms 70000 must be less than or equal to --group-streams-max-session-timeout-ms "
     "60000"),
    (["--override", "group.streams.min.session.timeout.ms=50000", "--override",
      "group.streams.max.session.timeout.ms=40000"],
     "--group-streams-max-session-timeout-ms 40000 must be greater than or equal to "
     "--group-streams-min-session-timeout-ms 50000"),
    (["--override", "group.streams.num.standby.replicas=3"],
     "--group-streams-num-standby-replicas 3 must be less than or equal to --group-streams-max-standby-replicas 2"),
    (["--override", "group.streams.min.session.timeout.ms=1000", "--override", "group.streams.session.timeout.ms=4000"],
     "--group-streams-heartbeat-interval-ms 5000 must be less than --group-streams-session-timeout-ms 4000"),
    (["--override", "group.streams.max.size=0"], "--group-streams-max-size must be at least 1, got 0"),
    (["--group-consumer-assignors", "sticky"], "--group-consumer-assignors must name assignors among uniform, range"),
    (["--override", "group.consumer.session.timeout=1"], "unknown setting 'group.consumer.session.timeout'"),
    (["--override", "auto.create.topics.enable=maybe"], "--override auto.create.topics.enable takes true or false"),
    (["--num-partitions", "2", "--override", "num.partitions=3"],
     "--num-partitions and --override num.partitions set the same setting"),
    (["--tls-cert", "{tmp}/missing.pem"], "cannot read --tls-cert {tmp}/missing.pem: No such file or directory"),
    (["--tls-cert", "{tmp}"], "cannot read --tls-cert {tmp}: Is a directory"),
    (["--tls-key", "{tmp}/key.pem"], "--tls-key needs --tls-cert"),
    (["--tls-key-password", "pw"], "--tls-key-password needs --tls-cert"),
    (["--data-dir", "{tmp}/a-file/data"], "cannot use --data-dir {tmp}/a-file/data: Not a directory"),
    (["--sasl-user", "a:b", "--sasl-mechanisms", "GSSAPI"], "unsupported SASL mechanism(s) GSSAPI"),
    (["--log-level", "verbose"], "argument --log-level: invalid choice: 'verbose'"),
]


@pytest.mark.parametrize("argv,message", BAD, ids=[" ".join(argv) for argv, _ in BAD])
def test_a_bad_setting_is_one_line_and_exit_status_2(argv, message, files, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["serve", *(arg.format(tmp=files) for arg in argv)])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert message.format(tmp=files) in err
    assert err.count("\n") == 1 and "Traceback" not in err


def test_every_problem_is_named_on_the_one_line(capsys):
    with pytest.raises(SystemExit):
        main(["serve", "--port", "70000", "--num-partitions", "0"])
    err = capsys.readouterr().err
    assert "--port must be" in err and "--num-partitions must be" in err and err.count("\n") == 1


def test_a_certificate_that_does_not_load_is_named(files, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["serve", "--port", "0", "--tls-cert", str(files / "key.pem")])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert f"cannot load TLS certificate {files / 'key.pem'}" in err and err.count("\n") == 1


def test_the_emulator_refuses_a_misspelt_setting_naming_it_with_a_suggestion():
    from kafkaemu.testing import KafkaEmulator
    with pytest.raises(ValueError, match=r"^KafkaEmulator: unknown setting 'num_partitionz' "
                                         r"\(did you mean num_partitions\?\)$"):
        KafkaEmulator(num_partitionz=3)
    with pytest.raises(ValueError, match="unknown setting 'zzz' \\(kafkaemu serve --help lists the settings\\)"):
        KafkaEmulator(zzz=1)
    assert KafkaEmulator(extra={"num.partitions": 3}, num_partitions=2).config.num_partitions == 3


def test_the_emulator_refuses_a_bad_setting_before_starting():
    from kafkaemu.testing import KafkaEmulator
    emulator = KafkaEmulator(num_partitions=0, group_min_session_timeout_ms=10, group_max_session_timeout_ms=5)
    with pytest.raises(ValueError, match="num_partitions must be at least 1, got 0; group_max_session_timeout_ms "
                                         "5 must be greater than or equal to group_min_session_timeout_ms 10"):
        emulator.start()
    assert emulator.port is None and emulator._loop is None


def test_the_emulator_keeps_a_given_configs_port():
    from kafkaemu.testing import KafkaEmulator
    assert KafkaEmulator().config.port == 0
    assert KafkaEmulator(config=BrokerConfig(port=19092, num_partitions=3)).config.port == 19092
    assert KafkaEmulator(5, config=BrokerConfig(port=19092)).config.port == 5


@pytest.mark.parametrize("name", ["info", "INFO", "Warning", " debug "])
def test_log_levels_in_any_case(name):
    assert log_level(name) == getattr(logging, name.strip().upper())


def test_an_unknown_log_level_is_named():
    with pytest.raises(ValueError, match="log level must be one of debug, info, warning, error .*'verbose'"):
        log_level("verbose")


def test_version_flag(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["--version"])
    assert exit_info.value.code == 0
    assert capsys.readouterr().out.startswith("kafkaemu ")
