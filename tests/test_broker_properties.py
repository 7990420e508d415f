"""A Kafka broker's own configuration, as Kafka takes it: every name Kafka 4.4 defines accepted and
checked as Kafka checks it, from ``extra``, ``--override``, ``--config`` and ``KAFKA_*`` variables
alike; the listeners; a name Kafka does not define refused with a suggestion; DescribeConfigs
reporting what was given."""
from __future__ import annotations

import pytest

from kafkaemu.broker_properties import from_environment
from kafkaemu.cli import config_from_args, main
from kafkaemu.cli_parser import build_parser
from kafkaemu.config import BrokerConfig

# confluent-kafka-python's test suite gives its brokers these (tests/trivup config)
CONFLUENT_SUITE = {"offsets.topic.replication.factor": "1", "offsets.topic.min.isr": "1",
                   "transaction.state.log.replication.factor": "1", "transaction.state.log.min.isr": "1",
                   "share.coordinator.state.topic.replication.factor": "1",
                   "share.coordinator.state.topic.min.isr": "1", "group.share.record.lock.duration.ms": "1000",
                   "group.share.min.record.lock.duration.ms": "1000"}


def parse(*argv, environ=None):
    return config_from_args(build_parser().parse_args(["serve", *argv]), environ or {})


def test_the_confluent_suites_settings_are_taken_from_python_the_command_line_a_file_and_the_environment(tmp_path):
    properties = tmp_path / "server.properties"
    properties.write_text("# confluent-kafka-python's suite\n" + "".join(f"{k}={v}\n" for k, v in CONFLUENT_SUITE.items()))
    environ = {"KAFKA_" + name.upper().replace(".", "_"): value for name, value in CONFLUENT_SUITE.items()}
    configs = [BrokerConfig(extra=CONFLUENT_SUITE),
               parse(*[arg for k, v in CONFLUENT_SUITE.items() for arg in ("--override", f"{k}={v}")]),
               parse("--config", str(properties)), parse(environ=environ)]
    for config in configs:
        assert config.errors() == []
        assert config.share.record_lock_duration_ms == 1000 and config.share.min_record_lock_duration_ms == 1000
        assert config.kafka_settings["offsets.topic.replication.factor"] == "1"
        assert config.kafka_settings["share.coordinator.state.topic.min.isr"] == "1"
    assert configs[1] == configs[2] == configs[3]


def test_the_container_images_variable_names():
    assert from_environment({"KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR": "1", "KAFKA_LISTENER_NAME_CLIENT___A__B": "x",
                             "KAFKA_OPTS": "-Xmx1g", "KAFKA_HEAP_OPT": "-Xmx1g", "CLUSTER_ID": "abc",
                             "PATH": "/bin"}) == \
        {"offsets.topic.replication.factor": "1", "listener.name.client-a_b": "x"}


def test_a_name_kafka_does_not_define_is_refused_with_a_suggestion(tmp_path, capsys):
    with pytest.raises(ValueError, match=r"unknown setting 'num.network.thread' \(did you mean num.network.threads\?\)"):
        BrokerConfig(extra={"num.network.thread": 3})
    (tmp_path / "bad.properties").write_text("log.retention.hour=1\n")
    with pytest.raises(SystemExit) as exit_info:
        main(["serve", "--config", str(tmp_path / "bad.properties"), "--print-config"])
    assert exit_info.value.code == 2
    assert "unknown setting 'log.retention.hour' (did you mean log.retention.hours?)" in capsys.readouterr().err
    # from the environment it is passed over: a shell holds other KAFKA_* variables
    config = parse(environ={"KAFKA_BOOTSTRAP_SERVERS": "x:9092", "KAFKA_NUM_PARTITIONS": "3"})
    assert config.num_partitions == 3
    assert "bootstrap.servers (from a KAFKA_* environment variable) is not a Kafka broker setting" in \
        capsys.readouterr().err


@pytest.mark.parametrize("extra,message", [
    ({"num.network.threads": "0"}, "Invalid value 0 for configuration num.network.threads: Value must be at least 1"),
    ({"socket.send.buffer.bytes": "big"},
     "Invalid value big for configuration socket.send.buffer.bytes: Not a number of type INT"),
    ({"log.flush.interval.messages": "1", "unclean.leader.election.enable": "maybe"},
     "Invalid value maybe for configuration unclean.leader.election.enable: Expected value to be either true or "
     "false"),
    ({"process.roles": "broker,observer"},
     "Invalid value broker,observer for configuration process.roles: String must be one of: broker, controller"),
    ({"offsets.topic.replication.factor": "3"},
     "offsets.topic.replication.factor 3 is more than the 1 node(s) kafkaemu runs (--nodes)"),
    ({"transaction.state.log.min.isr": "2"}, "transaction.state.log.min.isr 2 is more than the 1 node(s)"),
    ({"listeners": "SASL_PLAINTEXT://:9092"}, "listeners: listener SASL_PLAINTEXT is SASL_PLAINTEXT, but kafkaemu "
                                              "serves PLAINTEXT"),
    ({"listeners": "PLAINTEXT://localhost"}, "listeners: listener 'PLAINTEXT://localhost' is not NAME://HOST:PORT"),
])
def test_kafkas_checks_of_the_settings_it_defines(extra, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        BrokerConfig(extra=extra).validate()


def test_replication_factors_fit_the_nodes_there_are():
    assert BrokerConfig(nodes=3, extra={"offsets.topic.replication.factor": 3, "min.insync.replicas": 2}).errors() \
        == []


def test_the_listeners_set_host_port_and_advertised_host_and_the_flags_win():
    kraft = {"process.roles": "broker,controller", "node.id": "1", "controller.quorum.voters": "1@localhost:29093",
             "listeners": "CONTROLLER://localhost:29093,PLAINTEXT://localhost:29092",
             "advertised.listeners": "PLAINTEXT://kafka:29092", "controller.listener.names": "CONTROLLER",
             "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
             "inter.broker.listener.name": "PLAINTEXT"}
    config = BrokerConfig(extra=kraft)
    assert (config.host, config.port, config.advertised_host, config.node_id) == ("localhost", 29092, "kafka", 1)
    assert config.errors() == []
    assert parse("--port", "0", "--override", "listeners=PLAINTEXT://:9092").port == 0
    wildcard = BrokerConfig(extra={"listeners": "PLAINTEXT://:9092"})
    assert (wildcard.host, wildcard.port) == ("0.0.0.0", 9092)


def test_hours_and_minutes_synonyms_become_the_ms_settings_unless_those_are_given():
    assert BrokerConfig(extra={"log.retention.hours": 2}).log_retention_ms == 7200000
    assert BrokerConfig(extra={"log.retention.minutes": 3, "log.retention.hours": 2}).log_retention_ms == 180000
    assert BrokerConfig(extra={"log.retention.hours": 2, "log.retention.ms": 5000}).log_retention_ms == 5000
    assert BrokerConfig(extra={"log.roll.hours": 1}).log_roll_ms == 3600000


def test_describe_configs_reports_them_as_kafka_does():
    from tests.conftest import new_broker
    from tests.handlers.test_config_resources import BROKER, configs, describe
    broker = new_broker(extra={"num.network.threads": "5", "offsets.topic.replication.factor": "1",
                               "group.share.record.lock.duration.ms": "1000",
                               "group.share.min.record.lock.duration.ms": "1000"})
    entries = configs(describe(broker, BROKER, "0"))
    assert len(entries) > 300   # every broker config Kafka 4.4 describes
    threads = entries["num.network.threads"]
    assert (threads.value, threads.config_source, threads.read_only) == \
        ("5", 4, False)   # STATIC_BROKER_CONFIG; Kafka updates thread counts dynamically
    assert [(s.value, s.source) for s in threads.synonyms] == [("5", 4), ("3", 5)]
    lock = entries["group.share.record.lock.duration.ms"]
    assert (lock.value, lock.config_source, lock.read_only) == ("1000", 4, True)
    flush = entries["log.flush.interval.messages"]
    assert (flush.value, flush.config_source) == ("9223372036854775807", 5)   # DEFAULT_CONFIG
    assert entries["ssl.keystore.password"].is_sensitive and entries["ssl.keystore.password"].value is None


def test_the_emulator_and_the_pytest_settings_take_the_same_names():
    from kafkaemu.testing import KafkaEmulator
    from kafkaemu.testing.pytest_plugin import parse_settings
    emulator = KafkaEmulator(extra=CONFLUENT_SUITE)
    assert emulator.config.kafka_settings["transaction.state.log.min.isr"] == "1"
    assert emulator.config.share.record_lock_duration_ms == 1000
    assert "--override=offsets.topic.min.isr=1" in emulator.subprocess_command()
    settings = parse_settings([f"{name}={value}" for name, value in CONFLUENT_SUITE.items()])
    assert settings["extra"] == CONFLUENT_SUITE
    assert KafkaEmulator(**settings).config == emulator.config
