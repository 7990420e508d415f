"""One check of topic configs for every way one arrives (CreateTopics, AlterConfigs,
IncrementalAlterConfigs, the control API, a data directory being loaded), with Kafka's types,
ranges and enums; and periodic work isolated, so one subsystem's failing tick stops no other."""
import json
from types import SimpleNamespace

import pytest
from structlog.testing import capture_logs

from kafkaemu.control.params import ControlError
from kafkaemu.handlers.config_changes import SET, apply_changes
from kafkaemu.storage.data_dir import DataDir
from kafkaemu.storage.log_store import LogStore, TopicError
from kafkaemu.storage.record_batch import build_batch
from kafkaemu.storage.topic_config import validate_topic_configs
from tests.control.harness import Env

BAD = [
    ({"retention.ms": "1h"}, "Expected value to be a long"),
    ({"max.message.bytes": "abc"}, "Expected value to be a int"),
    ({"segment.bytes": "1"}, "Value must be at least 14"),
    ({"cleanup.policy": "compactt"}, "String must be one of"),
    ({"retention.bytes": "1_000"}, "Expected value to be a long"),
    ({"retention.ms": "99999999999999999999"}, "Expected value to be a long"),
    ({"min.cleanable.dirty.ratio": "1.5"}, "between"),
    ({"min.cleanable.dirty.ratio": "NaN"}, "between"),
    ({"segment.jitter.ms": "-1"}, "at least 0"),
    ({"min.compaction.lag.ms": "10", "max.compaction.lag.ms": "5"}, "conflict topic config setting"),
    ({"retention.ms": 1000}, "strings"),
]


@pytest.mark.parametrize("configs,message", BAD)
def test_creating_a_topic_refuses_them_on_every_path(configs, message):
    assert message in validate_topic_configs(configs)
    with pytest.raises(TopicError, match=message) as refused:
        LogStore().create_topic("t", 1, configs)
    assert refused.value.code.name == "INVALID_CONFIG"
    if not all(isinstance(v, str) for v in configs.values()):
        return      # the control API takes JSON numbers as their text
    env = Env()
    with pytest.raises(ControlError, match=message) as answered:   # the control API: HTTP 400
        env.op("topic_create", name="t", configs=configs)
    assert answered.value.status == 400 and env.broker.store.get("t") is None


@pytest.mark.parametrize("configs,message", BAD[:-1])
def test_alter_configs_refuses_them_and_keeps_the_old_configs(configs, message):
    env = Env()
    topic = env.broker.topics.create("t", 1, {"retention.ms": "5000"})
    resource = SimpleNamespace(resource_type=2, resource_name="t")
    result = apply_changes(env.broker, resource, [(k, SET, v) for k, v in configs.items()], False, False)
    assert result["error_code"].name == "INVALID_CONFIG" and message in result["error_message"]
    assert topic.configs == {"retention.ms": "5000"}


def test_a_data_directory_with_refused_configs_loads_with_the_defaults_and_says_so(tmp_path):
    (tmp_path / "topics.json").write_text(json.dumps({"topics": [
        {"name": "old", "id": "00" * 16, "partitions": 1, "internal": False,
         "configs": {"retention.ms": "1h", "max.message.bytes": "abc", "segment.bytes": "4096"}}]}))
    store = LogStore()
    with capture_logs() as logs:
        DataDir(str(tmp_path)).attach(store)
    assert store.get("old").configs == {"segment.bytes": "4096"}
    dropped = [e for e in logs if e["event"] == "data_dir_topic_configs_dropped"]
    assert dropped and dropped[0]["dropped"] == {"retention.ms": "1h", "max.message.bytes": "abc"}
    store.tick(0)
    store.tick(10**9)     # retention and compaction run over the loaded topic


def test_one_failing_subsystem_tick_does_not_stop_the_group_timers():
    env = Env(log_retention_check_interval_ms=1000)
    env.two_member_group()
    env.broker.topics.create("broken", 1, {}).partitions[0].append(build_batch([(None, b"x", [], 0)]), 0)
    env.broker.store.get("broken").configs["retention.ms"] = "1h"   # as an older kafkaemu accepted
    with capture_logs() as logs:
        env.op("clock_advance", ms=10_000)   # retention raises; the sessions (10 s) still expire
    assert env.op("group", group="g")["member_count"] == 0
    assert any(e["event"] == "partition_work_failed" and e["topic"] == "broken" for e in logs)
    env = Env()
    env.two_member_group()

    def broken(now_ms):
        raise RuntimeError("a storage bug")
    env.broker.store.tick = broken
    with capture_logs() as logs:
        env.op("clock_advance", ms=10_000)
    assert env.op("group", group="g")["member_count"] == 0
    assert any(e["event"] == "tick_failed" and e["subsystem"] == "storage" for e in logs)


def test_broker_level_log_settings_are_the_defaults_of_topics_that_set_none():
    from kafkaemu.config import BrokerConfig
    config = BrokerConfig(extra={"log.retention.ms": "60000", "log.segment.bytes": "1048576",
                                 "log.cleanup.policy": "compact,delete"})
    assert config.topic_defaults == {"retention.ms": "60000", "segment.bytes": "1048576",
                                     "cleanup.policy": "compact,delete"}
    env = Env(log_retention_ms=60000, log_retention_check_interval_ms=1000)
    plain = env.broker.topics.create("plain", 1, {})
    kept = env.broker.topics.create("kept", 1, {"retention.ms": "-1"})
    for topic in (plain, kept):
        topic.partitions[0].append(build_batch([(None, b"old", [], env.clock.now_ms())]), env.clock.now_ms())
    env.op("clock_advance", ms=61_000)
    env.op("clock_advance", ms=1_000)
    assert plain.partitions[0].log_start_offset == 1      # the broker's retention.ms applied
    assert kept.partitions[0].log_start_offset == 0       # the topic's own setting wins
    from kafkaemu.storage.topic_config import STATIC_BROKER_CONFIG, topic_config_entries
    entries = {n: (v, src) for n, v, src, _ in topic_config_entries(plain.configs, plain.defaults)}
    assert entries["retention.ms"] == ("60000", STATIC_BROKER_CONFIG)


@pytest.mark.parametrize("override,message", [
    ("log.retention.ms=1h", "takes an integer"),
    ("log.cleanup.policy=compactt", "String must be one of"),
    ("log.segment.bytes=1", "at least 14"),
])
def test_a_bad_broker_level_log_setting_stops_the_start_with_one_line(override, message, capsys):
    from kafkaemu.cli import main
    with pytest.raises(SystemExit) as stopped:
        main(["serve", "--port", "0", "--override", override, "--print-config"])
    err = capsys.readouterr().err
    assert stopped.value.code == 2 and message in err and len(err.strip().splitlines()) == 1
