"""kafkaemu/kafka_configs.py is Kafka 4.4's own list of broker configs: read again from the 4.4
jars (AbstractKafkaConfig.CONFIG_DEF, through tests/kafka_reference/DumpBrokerConfigs.java), it is
the same. Skips without Java or the jars (KAFKA44_LIB, default /tmp/kafka44/lib)."""
from __future__ import annotations

import os
import pathlib
import shutil

import pytest

from kafkaemu.kafka_configs import KAFKA_BROKER_CONFIGS

LIB = os.environ.get("KAFKA44_LIB", "/tmp/kafka44/lib")


def test_the_committed_list_is_what_kafka_4_4s_jars_define():
    if shutil.which("java") is None:
        pytest.skip("needs java to read Kafka 4.4's config definitions")
    if not list(pathlib.Path(LIB).glob("kafka-server-4.4.0.jar")):
        pytest.skip(f"needs Apache Kafka 4.4.0's jars in {LIB} (KAFKA44_LIB)")
    from tests.kafka_reference.broker_configs import dump, table
    assert table(dump(LIB)) == KAFKA_BROKER_CONFIGS


def test_the_list_holds_what_client_test_suites_set():
    for name in ("offsets.topic.replication.factor", "transaction.state.log.min.isr", "num.network.threads",
                 "share.coordinator.state.topic.replication.factor", "group.share.record.lock.duration.ms",
                 "controller.quorum.voters", "process.roles", "log.flush.interval.messages"):
        assert name in KAFKA_BROKER_CONFIGS, name
    assert KAFKA_BROKER_CONFIGS["offsets.topic.replication.factor"][:3] == ("SHORT", "3", 1)
