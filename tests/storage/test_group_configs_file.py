"""GROUP configs in the data directory: what a broker sets is what the next one built on the same
directory has, a deleted group's configs go, and a damaged file is moved aside."""
from __future__ import annotations

import os

from kafkaemu.broker.broker import Broker
from kafkaemu.config import BrokerConfig
from kafkaemu.storage import group_configs_file


def test_configs_set_and_dropped_survive_a_new_broker_on_the_same_directory(tmp_path):
    first = Broker(BrokerConfig(port=0, data_dir=str(tmp_path)), 0)
    first.group_configs.set("g", "share.auto.offset.reset", "earliest")
    first.group_configs.set("h", "share.record.lock.duration.ms", "20000")
    first.group_configs.set("c", "consumer.session.timeout.ms", "50000")
    first.shares.group_deleted(0, "h")
    second = Broker(BrokerConfig(port=0, data_dir=str(tmp_path)), 0)
    configs = second.group_configs
    assert (configs.groups(), configs.overrides("g")) == (["g", "c"], {"share.auto.offset.reset": "earliest"})
    assert second.shares.config("g", "share.auto.offset.reset") == "earliest"
    assert second.coordinator.consumer.session_timeout_ms("c") == 50000


def test_a_damaged_file_is_moved_aside(tmp_path):
    (tmp_path / group_configs_file.FILE).write_text("{not json")
    assert group_configs_file.load(str(tmp_path)) == {}
    assert os.path.exists(tmp_path / (group_configs_file.FILE + ".corrupt"))
